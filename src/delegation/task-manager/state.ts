/**
 * The manager's private state of a task and of a sub-agent conversation, and the small,
 * pure helpers every part of the manager shares over them.
 */
import { llm, type voice } from '@livekit/agents';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { noticeDeprecation } from '../../core/deprecation.js';
import { isTasklineError, TasklineError } from '../../core/errors.js';
import { runSpecialist } from '../foreground.js';
import { type HeadlessProgress, newProgress, SUBMIT_RESULT_TOOL } from '../runner.js';
import {
  type AnySubAgent,
  isVoiceSpecialist,
  type SubAgentRunResult,
  type VoiceSpecialistSpec,
} from '../subagent.js';
import {
  RETIRED_STATUS_NOTICE,
  RETIRED_TASK_STATUSES,
  type TaskMode,
  type TaskResult,
  type TaskSnapshot,
  type TaskStatus,
} from '../types.js';
import { createWorkspace, type Workspace } from '../workspace.js';
import { type DeliveryState, initialDelivery, publicDelivery } from './delivery-state.js';

/** A sub-agent conversation; tasks continued with `task_id` share it. */
export interface Conversation {
  id: string;
  subagentType: string;
  chatCtx: llm.ChatContext;
  /** Created on first use: a sub-agent without file or todo tools never needs one. */
  workspace: Workspace | undefined;
  busy: boolean;
}

/** The manager's private record of one task. */
export interface TaskState {
  snap: TaskSnapshot;
  spec: AnySubAgent;
  conversation: Conversation | undefined;
  controller: AbortController;
  done: Promise<TaskResult>;
  resolve: (result: TaskResult) => void;
  timer: TimerHandle | undefined;
  progress: HeadlessProgress;
  /** Where its result stands on the way to the caller; changed only by `delivery-state.ts`. */
  delivery: DeliveryState;
  /** The host's line for this task's result (see StartTaskOptions.resultLine). */
  resultLine: ((task: TaskSnapshot) => string | undefined) | undefined;
  origin: voice.RunContext<unknown> | undefined;
  foreground: ((signal: AbortSignal) => Promise<unknown>) | undefined;
  model: llm.LLM | undefined;
  /** Its delegation record's id, once it has a record. */
  recordId: string | undefined;
  /** The task's last record write while one is unsettled (writes run in order). */
  persist: Promise<void> | undefined;
  finishing: boolean;
  /** Nested tasks this task's sub-agent started. */
  children: number;
  /** Where this run's items start in its conversation (for the tools it called). */
  callsFrom: number;
  /** Runs a recovered task's work instead of its sub-agent (see `TaskManager.recover`). */
  recovered: ((signal: AbortSignal) => Promise<SubAgentRunResult<unknown>>) | undefined;
  /** Tells the work's owner its result reached the caller (from the run's `delivered`). */
  receipt: (() => void | Promise<void>) | undefined;
}

/** What a new task is asked to be (from the tool, the host, or a sub-agent). */
export interface CreateRequest {
  subagentType: string;
  description: string;
  prompt?: string | null;
  taskId?: string | null;
  model?: string | null;
  mode: TaskMode;
  depth: number;
  parentId?: string;
  origin: TaskSnapshot['origin'];
  notify: boolean;
  /** Words to say when the result is delivered, instead of a reply the model words. */
  resultLine?: (task: TaskSnapshot) => string | undefined;
  /** Work recovered from an earlier job of the call, run instead of the sub-agent. */
  recovered?: (signal: AbortSignal) => Promise<SubAgentRunResult<unknown>>;
}

/** A tool error the model can read, for a TasklineError; anything else unchanged. */
export function toToolError(err: unknown): unknown {
  if (isTasklineError(err)) return new llm.ToolError(`${err.code}: ${err.message}`);
  return err;
}

/** The `{ code, message }` of any thrown value. */
export function errorInfo(err: unknown): { code: string; message: string } {
  if (isTasklineError(err)) return { code: err.code, message: err.message };
  if (err instanceof Error) return { code: 'failed', message: err.message };
  return { code: 'failed', message: String(err) };
}

/** The conversation's workspace, created on first use. */
export function workspaceOf(conversation: Conversation, clock: Clock): Workspace {
  conversation.workspace ??= createWorkspace(clock);
  return conversation.workspace;
}

/** Names of the tools a task's sub-agent called in this run (its conversation since it began). */
export function functionCallsOf(task: TaskState): string[] {
  const items = task.conversation?.chatCtx.items ?? [];
  const out: string[] = [];
  for (let i = task.callsFrom; i < items.length; i++) {
    const item = items[i];
    if (item?.type === 'function_call' && item.name !== SUBMIT_RESULT_TOOL) out.push(item.name);
  }
  return out;
}

/** A copy of a task's snapshot that its holder may keep (the result's file list included). */
export function snapshotOf(task: TaskState): TaskSnapshot {
  const snap = { ...task.snap };
  if (task.snap.result) snap.result = { ...task.snap.result, files: [...task.snap.result.files] };
  return snap;
}

/** A fresh conversation for a headless sub-agent (its workspace comes on first use). */
export function newConversation(id: string, spec: AnySubAgent): Conversation {
  return {
    id,
    subagentType: spec.name,
    chatCtx: llm.ChatContext.empty(),
    workspace: undefined,
    busy: false,
  };
}

/** What {@link newTask} builds a task from, besides its request. */
export interface NewTaskFields {
  spec: AnySubAgent;
  /** The trimmed title. */
  description: string;
  model: llm.LLM | undefined;
  conversation: Conversation | undefined;
  resumedFrom: string | undefined;
  now: number;
  timeoutMs: number;
  /** The voice agent's run context, when its `task` call started it. */
  origin: voice.RunContext<unknown> | undefined;
}

/** A new task's state, queued; a voice specialist is wired to run in the foreground. */
export function newTask(id: string, req: CreateRequest, fields: NewTaskFields): TaskState {
  const { spec, description, model, conversation, resumedFrom, now, timeoutMs, origin } = fields;
  let resolve!: (result: TaskResult) => void;
  const done = new Promise<TaskResult>((r) => {
    resolve = r;
  });
  const task: TaskState = {
    snap: {
      id,
      subagentType: spec.name,
      description,
      prompt: req.prompt?.trim() || description,
      mode: req.mode,
      status: 'queued',
      depth: req.depth,
      ...(req.parentId !== undefined ? { parentId: req.parentId } : {}),
      conversationId: conversation?.id ?? `voice_${id}`,
      ...(resumedFrom !== undefined ? { resumedFrom: resumedFrom } : {}),
      origin: req.origin,
      createdAt: now,
      deadline: now + timeoutMs,
      released: false,
      delivery: publicDelivery(initialDelivery(req.notify)),
    },
    spec,
    conversation,
    controller: new AbortController(),
    done,
    resolve,
    timer: undefined,
    progress: newProgress(),
    delivery: initialDelivery(req.notify),
    resultLine: req.resultLine,
    origin,
    foreground: undefined,
    model,
    recordId: undefined,
    persist: undefined,
    finishing: false,
    children: 0,
    callsFrom: conversation?.chatCtx.items.length ?? 0,
    recovered: req.recovered,
    receipt: undefined,
  };
  if (isVoiceSpecialist(spec) && origin) {
    const specialist = spec as VoiceSpecialistSpec<unknown>;
    const brief = { prompt: task.snap.prompt, description };
    task.foreground = (signal) => runSpecialist(origin, () => specialist.create(brief), signal);
  }
  return task;
}

/** Snapshots of the tasks matching a host's `list` filter, in creation order. */
export function listTasks(
  tasks: Iterable<TaskState>,
  filter: { status?: TaskStatus | readonly TaskStatus[]; parentId?: string },
): TaskSnapshot[] {
  const statuses =
    filter.status === undefined
      ? undefined
      : new Set<TaskStatus>(
          (typeof filter.status === 'string' ? [filter.status] : filter.status).map(currentStatus),
        );
  const out: TaskSnapshot[] = [];
  for (const task of tasks) {
    if (statuses && !statuses.has(task.snap.status)) continue;
    if (filter.parentId !== undefined && task.snap.parentId !== filter.parentId) continue;
    out.push(snapshotOf(task));
  }
  return out;
}

/**
 * A status a JavaScript caller filters by, in today's words: an old word (`done`) is read as
 * its new one (`completed`) with a deprecation notice, instead of silently matching nothing.
 */
function currentStatus(status: TaskStatus): TaskStatus {
  const renamed = RETIRED_TASK_STATUSES.get(status);
  if (renamed === undefined) return status;
  noticeDeprecation(
    RETIRED_STATUS_NOTICE,
    `TaskManager.list({ status: '${status}' }): the task status '${status}' is now '${renamed}'; write '${renamed}' ('${status}' is still read, for now).`,
  );
  return renamed;
}

/** Makes a nested task end (via `stop`) when its parent task's run is aborted. */
export function linkToParent(
  task: TaskState,
  parent: TaskState,
  stop: (task: TaskState, why: TasklineError) => void,
): void {
  parent.children += 1;
  parent.controller.signal.addEventListener(
    'abort',
    () => stop(task, new TasklineError('cancelled', 'Its parent task ended.')),
    { once: true },
  );
}
