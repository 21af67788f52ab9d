/**
 * Execution: running one task's work to a result — a voice specialist in the foreground,
 * a sub-agent's own `run`, or a headless LLM tool loop with its tools (the deep-agent file
 * and todo tools in its workspace, and `task` again while nesting is allowed).
 */
import { llm } from '@livekit/agents';
import type { Clock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { createFileTools } from '../../tools/files/tools.js';
import { createTodoTools } from '../../tools/todos.js';
import { type HeadlessRunOptions, partialOutput, runHeadless } from '../runner.js';
import type { SubAgentSpec, SubAgentToolGuard, VoiceSpecialistSpec } from '../subagent.js';
import { summarize } from '../summary.js';
import { createSubAgentTaskTools } from '../task-tools.js';
import type { DelegationHost, FinalTaskStatus, TaskResult } from '../types.js';
import type { ManagerLimits, TaskManagerOptions } from './options.js';
import {
  type Conversation,
  errorInfo,
  functionCallsOf,
  type TaskState,
  workspaceOf,
} from './state.js';

/** What a task ended with, before it becomes a {@link TaskResult}. */
export interface FinishPayload {
  output: string;
  value?: unknown;
  summary: string;
  error?: { code: string; message: string };
  partial?: boolean;
  turns: number;
  /** Called once the result reached the caller (see `SubAgentRunResult.delivered`). */
  delivered?: () => void | Promise<void>;
}

/** What {@link executeTask} runs with. */
export interface ExecutionContext {
  clock: Clock;
  /** Serves the `task` tools of nested sub-agents. */
  host: DelegationHost;
  options: TaskManagerOptions;
  limits: ManagerLimits;
  /** Wrap every headless sub-agent's tools before a run (an inherited approval policy). */
  toolGuards: readonly SubAgentToolGuard[];
  /** The call the manager serves, once attached (given to a sub-agent's own `run`). */
  readonly callId: string | undefined;
}

/**
 * Runs a task's work under its own abort signal. Resolves its payload, or undefined when
 * the task was stopped meanwhile (whoever stopped it finished it); rejects when it failed.
 */
export async function executeTask(
  task: TaskState,
  ctx: ExecutionContext,
): Promise<FinishPayload | undefined> {
  const signal = task.controller.signal;
  if (task.foreground) {
    const value = await task.foreground(signal);
    if (signal.aborted) return undefined;
    const spec = task.spec as VoiceSpecialistSpec<unknown>;
    const summary = spec.summarize
      ? spec.summarize(value)
      : summarize(JSON.stringify(value), ctx.limits.summaryChars);
    return { output: JSON.stringify(value, null, 2), value, summary, turns: 0 };
  }
  const spec = task.spec as SubAgentSpec<unknown>;
  const conversation = task.conversation;
  if (!conversation) {
    throw new TasklineError('invalid_state', `Task ${task.snap.id} has no conversation.`);
  }
  const callId = ctx.callId;
  const own = task.recovered
    ? task.recovered
    : spec.run
      ? (s: AbortSignal) =>
          spec.run!(
            {
              taskId: task.snap.id,
              prompt: task.snap.prompt,
              description: task.snap.description,
              ...(callId !== undefined ? { callId } : {}),
            },
            s,
          )
      : undefined;
  let delivered: (() => void | Promise<void>) | undefined;
  let result: { output: string; value?: unknown; turns: number };
  if (own) {
    const ran = await own(signal);
    delivered = ran.delivered;
    result = {
      output: ran.output,
      ...(ran.value !== undefined ? { value: ran.value } : {}),
      turns: 0,
    };
  } else {
    result = await runHeadless<unknown>(headlessOptions(task, spec, conversation, ctx));
  }
  if (signal.aborted) return undefined;
  const summary = spec.summarize
    ? spec.summarize({
        output: result.output,
        ...(result.value !== undefined ? { value: result.value } : {}),
      })
    : summarize(result.output, ctx.limits.summaryChars);
  return {
    output: result.output,
    ...(result.value !== undefined ? { value: result.value } : {}),
    summary,
    turns: result.turns,
    ...(delivered ? { delivered } : {}),
  };
}

/** The result of a task ending in `status` with `payload` (its files are added later). */
export function resultOf(
  task: TaskState,
  status: FinalTaskStatus,
  payload: FinishPayload,
): TaskResult {
  return {
    status,
    output: payload.output,
    ...(payload.value !== undefined ? { value: payload.value } : {}),
    summary: payload.summary.trim() || '(no output)',
    ...(payload.error ? { error: payload.error } : {}),
    partial: payload.partial ?? false,
    files: [],
    turns: payload.turns,
    functionCalls: functionCallsOf(task),
  };
}

/** The payload of a task that failed with `err`: what it produced so far, and why. */
export function failurePayload(task: TaskState, err: unknown, summaryChars: number): FinishPayload {
  const info = errorInfo(err);
  return {
    output: partialOutput(task.progress),
    summary: summarize(info.message, summaryChars),
    error: info,
    partial: true,
    turns: task.progress.turns,
  };
}

/** The payload of a task stopped by a cancel or timeout: its partial output, and the reason. */
export function stoppedPayload(
  task: TaskState,
  reason: TasklineError,
  summaryChars: number,
): FinishPayload {
  const partial = partialOutput(task.progress);
  return {
    output: partial,
    summary: partial ? summarize(partial, summaryChars) : reason.message,
    error: { code: reason.code, message: reason.message },
    partial: true,
    turns: task.progress.turns,
  };
}

function headlessOptions(
  task: TaskState,
  spec: SubAgentSpec<unknown>,
  conversation: Conversation,
  ctx: ExecutionContext,
): HeadlessRunOptions<unknown> {
  const options: HeadlessRunOptions<unknown> = {
    model: modelFor(task, ctx),
    instructions: spec.instructions,
    tools: toolsFor(task, spec, conversation, ctx),
    conversation: conversation.chatCtx,
    prompt: task.snap.prompt,
    maxTurns: spec.maxTurns ?? ctx.limits.maxTurns,
    signal: task.controller.signal,
    progress: task.progress,
  };
  if (spec.output) options.output = spec.output;
  if (ctx.options.connOptions) options.connOptions = ctx.options.connOptions;
  return options;
}

function modelFor(task: TaskState, ctx: ExecutionContext): llm.LLM {
  const spec = task.spec as SubAgentSpec<unknown>;
  const model = task.model ?? spec.llm ?? ctx.options.llm;
  if (!model) {
    throw new TasklineError(
      'invalid_state',
      `No model for sub-agent "${spec.name}": pass llm to the TaskManager or to the sub-agent.`,
    );
  }
  return model;
}

/** A sub-agent's tools for one run, through the manager's tool guards. */
function toolsFor(
  task: TaskState,
  spec: SubAgentSpec<unknown>,
  conversation: Conversation,
  ctx: ExecutionContext,
): llm.ToolContextLike {
  const tools = ownAndDefaultTools(task, spec, conversation, ctx);
  if (ctx.toolGuards.length === 0) return tools;
  const toolCtx = llm.toToolContext(tools);
  let functions = Object.values(toolCtx.functionTools);
  const others = toolCtx.tools.filter((t) => !functions.includes(t as llm.FunctionTool));
  const run = { name: spec.name, taskId: task.snap.id, depth: task.snap.depth };
  for (const guard of ctx.toolGuards) functions = guard(functions, run);
  return [...functions, ...others];
}

function ownAndDefaultTools(
  task: TaskState,
  spec: SubAgentSpec<unknown>,
  conversation: Conversation,
  ctx: ExecutionContext,
): llm.ToolContextLike {
  const clock = ctx.clock;
  const own =
    typeof spec.tools === 'function'
      ? spec.tools({
          get workspace() {
            return workspaceOf(conversation, clock);
          },
          taskId: task.snap.id,
          depth: task.snap.depth,
        })
      : spec.tools;
  if (!spec.deepAgentTools) return own ?? [];
  const entries: llm.FunctionTool[] = [];
  const add = (tools: llm.ToolContextLike | undefined) => {
    if (tools === undefined) return;
    entries.push(...Object.values(llm.toToolContext(tools).functionTools));
  };
  const ws = workspaceOf(conversation, clock);
  add(createFileTools({ backend: ws.files, state: ws.fileState, clock }));
  add(createTodoTools({ list: ws.todos }));
  if (task.snap.depth < ctx.limits.maxDepth) {
    add(createSubAgentTaskTools(ctx.host, { parentId: task.snap.id, depth: task.snap.depth }));
  }
  add(own);
  // The sub-agent's own tools win over the defaults of the same name.
  const byName = new Map<string, llm.FunctionTool>();
  for (const tool of entries) byName.set(tool.name, tool);
  return [...byName.values()];
}
