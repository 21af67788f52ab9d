/**
 * Execution modes of a `task` call. The voice agent's call answers inline (`foreground`,
 * capped), releases the turn at once (`background`), or answers inline when the task is
 * quick and otherwise releases the turn (`auto`); a voice specialist always takes the floor.
 * A sub-agent's call waits for its nested task to end.
 */
import { llm, type voice } from '@livekit/agents';
import type { Clock } from '../../core/clock.js';
import type { AnySubAgent } from '../subagent.js';
import { isVoiceSpecialist } from '../subagent.js';
import { checkToolArgs, taskToolOutput } from '../tool-output.js';
import type { TaskMode, TaskToolArgs } from '../types.js';
import type { Delivery } from './delivery.js';
import type { Emit } from './events.js';
import type { ManagerLimits, TaskManagerOptions } from './options.js';
import { type CreateRequest, snapshotOf, type TaskState, toToolError } from './state.js';
import { settledOr, settledWithin } from './waits.js';
import { DEFAULT_RELEASE_LINE, handoverText, releaseText } from './wording.js';

/** What a `task` call needs from its manager. */
export interface TurnHost {
  readonly clock: Clock;
  readonly delivery: Delivery;
  /** Aborts when the call ends or the manager closes. */
  readonly callSignal: AbortSignal;
  readonly options: TaskManagerOptions;
  readonly limits: ManagerLimits;
  subagent(name: string): AnySubAgent | undefined;
  /** Creates (and starts or queues) a task; throws a TasklineError when it is refused. */
  create(req: CreateRequest, origin?: voice.RunContext<unknown>): TaskState;
  emit: Emit;
}

function modeOf(args: TaskToolArgs, voiceTask: boolean, defaultMode: TaskMode): TaskMode {
  if (voiceTask) return 'foreground';
  if (args.run_in_background === true) return 'background';
  if (args.run_in_background === false) return 'foreground';
  return defaultMode;
}

function markReleased(host: TurnHost, task: TaskState): void {
  task.snap.released = true;
  host.emit('released', task);
}

/**
 * Runs the voice agent's `task` call on the call's delivery channel (an upstream async
 * tool), so it can release the turn and deliver later.
 */
export function runOnChannel(
  host: TurnHost,
  args: TaskToolArgs,
  options: llm.ToolOptions<unknown>,
): Promise<unknown> {
  const channel = host.delivery.channel;
  if (!channel) throw new llm.ToolError('session_closed: the call has ended.');
  const body = llm.tool({
    name: options.ctx.functionCall.name,
    description: 'Delegated task (runs on the delegation channel).',
    execute: (_args, { ctx, abortSignal }) => runVoiceTaskCall(host, args, ctx, abortSignal),
  });
  // A tool without parameters; the executor only ever calls it with {}.
  return channel.run(body as unknown as llm.FunctionTool, options);
}

/**
 * The voice agent's `task` call, run on the delivery channel: returns the inline answer, or
 * undefined once the task ended in the background (the manager delivers its result).
 */
export async function runVoiceTaskCall(
  host: TurnHost,
  raw: TaskToolArgs,
  ctx: voice.RunContext<unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  const spec = host.subagent(raw.subagent_type);
  const voiceTask = spec !== undefined && isVoiceSpecialist(spec);
  const { args, reminders } = checkToolArgs(raw, {
    modelOverride: host.options.allowModelOverride === true,
    background: !voiceTask,
  });
  const remind = (text: string) => (reminders.length > 0 ? `${text} ${reminders.join(' ')}` : text);
  const mode = modeOf(args, voiceTask, host.options.defaultMode ?? 'auto');
  let task: TaskState;
  try {
    task = host.create(
      {
        subagentType: args.subagent_type,
        description: args.description,
        prompt: args.prompt,
        taskId: args.task_id,
        model: args.model,
        mode,
        depth: 1,
        origin: 'tool',
        notify: true,
      },
      ctx,
    );
  } catch (err) {
    throw toToolError(err);
  }
  const delivery = host.delivery;
  // From here until this call returns, the call itself owns the task's delivery.
  task.waiter = true;
  try {
    if (voiceTask) {
      // The specialist needs the floor: release the turn, then it runs in the foreground.
      await ctx.update(remind(handoverText(task.snap)));
      markReleased(host, task);
    } else {
      if (mode !== 'background') {
        const window = mode === 'auto' ? host.limits.inlineWindowMs : host.limits.foregroundCapMs;
        const finished = await settledWithin(task, window, signal, host.clock);
        if (signal.aborted) return undefined;
        if (finished) {
          delivery.inline(task);
          return taskToolOutput(snapshotOf(task), reminders);
        }
      }
      const line = host.options.releaseLine?.(snapshotOf(task)) ?? DEFAULT_RELEASE_LINE;
      await ctx.update(remind(releaseText(task.snap, line)));
      markReleased(host, task);
    }

    // The result is delivered by the manager (held for a safe moment, then spoken), never
    // as this call's final value: upstream would speak that as soon as the line is idle,
    // even between a question and its answer.
    await settledOr(task, [signal, host.callSignal]);
    return undefined;
  } finally {
    task.waiter = false;
    // Interrupted or cut short: the manager delivers it itself when it ends.
    delivery.afterFinish(task);
  }
}

/** A sub-agent's `task` call: the nested task runs to its end and is the call's output. */
export async function runNestedTaskCall(
  host: TurnHost,
  raw: TaskToolArgs,
  depth: number,
  parentId: string | undefined,
): Promise<unknown> {
  const { args, reminders } = checkToolArgs(raw, {
    modelOverride: host.options.allowModelOverride === true,
    background: false,
  });
  let task: TaskState;
  try {
    task = host.create({
      subagentType: args.subagent_type,
      description: args.description,
      prompt: args.prompt,
      taskId: args.task_id,
      model: args.model,
      mode: 'foreground',
      depth: depth + 1,
      ...(parentId !== undefined ? { parentId } : {}),
      origin: 'subagent',
      notify: false,
    });
  } catch (err) {
    throw toToolError(err);
  }
  await task.done;
  return taskToolOutput(snapshotOf(task), reminders);
}
