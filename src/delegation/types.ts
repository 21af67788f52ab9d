/**
 * The vocabulary of delegation shared by the TaskManager, the sub-agent runners and the
 * model-facing tools, kept apart so the tools never import the manager itself.
 */
import type { llm } from '@livekit/agents';

/**
 * How a `task` call treats the voice turn: `foreground` answers inline (capped), `background`
 * releases the turn at once, `auto` answers inline when the task is quick and otherwise
 * releases the turn and speaks the result later.
 */
export type TaskMode = 'foreground' | 'background' | 'auto';

/**
 * Where a task stands. `completed`, `failed`, `cancelled` and `timeout` are final. A task that
 * ended well is `completed`, as a flow is (its durable record's state says `done`: the wire's
 * word, translated in one place, `task-record.ts`).
 */
export type TaskStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled' | 'timeout';

/** The statuses a task ends in. */
export type FinalTaskStatus = Extract<TaskStatus, 'completed' | 'failed' | 'cancelled' | 'timeout'>;

/**
 * Task statuses renamed at 0.x, the old word to the new one: still understood where a status
 * arrives from outside TypeScript (a scenario file, a JavaScript caller's filter), with a
 * deprecation notice. TypeScript code comparing with an old word no longer compiles.
 */
export const RETIRED_TASK_STATUSES: ReadonlyMap<string, TaskStatus> = new Map([
  ['done', 'completed'],
]);

/** Code of the deprecation notice given when an old task status word is read. */
export const RETIRED_STATUS_NOTICE = 'TASKLINE_TASK_STATUS_DONE';

/** True for a status a task can never leave. */
export function isFinalStatus(status: TaskStatus): status is FinalTaskStatus {
  return status !== 'queued' && status !== 'running';
}

/** What a finished task produced. */
export interface TaskResult<V = unknown> {
  status: FinalTaskStatus;
  /** The full text output; for a timeout or cancel, what was produced so far. */
  output: string;
  /** The structured value (sub-agent `output` schema) or a voice specialist's typed outcome. */
  value?: V;
  /** The short, speakable part the voice agent tells the caller. */
  summary: string;
  /** Why the task did not finish (failed, cancelled, timeout). */
  error?: { code: string; message: string };
  /** True when `output` is only what was produced before a timeout or cancel. */
  partial: boolean;
  /** Where the full result was written in the parent's files (`/tasks/<id>/result.md`). */
  resultPath?: string;
  /** Files of the sub-agent merged into the parent, under `/tasks/<id>/`. */
  files: string[];
  /** Model turns the sub-agent used. */
  turns: number;
  /** Names of the tools the sub-agent called, in order. */
  functionCalls: string[];
}

/** How (and whether) a task's completion reached the voice agent. */
export type DeliveryState =
  /** Not delivered yet (or the task is still running). */
  | 'pending'
  /** Answered inside the `task` call itself (the model had it at once). */
  | 'inline'
  /** Spoken later through a deferred reply. */
  | 'spoken'
  /** Nobody to tell: the model cancelled it itself, it was nested, or the call had ended. */
  | 'none';

/** A read-only view of one task, as `get`/`list` and events return it. */
export interface TaskSnapshot {
  id: string;
  subagentType: string;
  /** Short speakable title given by the model or host. */
  description: string;
  /** The full brief. */
  prompt: string;
  mode: TaskMode;
  status: TaskStatus;
  /** 1 for a task the voice agent started, 2 for one a sub-agent started, and so on. */
  depth: number;
  /** The task whose sub-agent started this one. */
  parentId?: string;
  /** The sub-agent conversation; tasks resumed with `task_id` share it. */
  conversationId: string;
  /** The earlier task this one continues. */
  resumedFrom?: string;
  /** Who started it. */
  origin: 'tool' | 'host' | 'subagent';
  /** Clock times (ms). */
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  /** When the task times out (clock ms). */
  deadline: number;
  /** True once the task gave the turn back and carries on in the background. */
  released: boolean;
  delivery: DeliveryState;
  result?: TaskResult;
}

/** What the TaskManager reports to subscribers (a UI, logs, the durable bus). */
export type TaskEvent =
  | { type: 'queued' | 'started' | 'released' | 'finished'; task: TaskSnapshot }
  | { type: 'delivered'; task: TaskSnapshot; via: 'inline' | 'spoken' }
  | { type: 'store_error'; taskId: string; error: unknown };

/** The arguments of the model-facing `task` tool. */
export interface TaskToolArgs {
  subagent_type: string;
  description: string;
  prompt?: string | null;
  run_in_background?: boolean | null;
  task_id?: string | null;
  model?: string | null;
}

/** Describes a sub-agent type to the model (name and when to use it). */
export interface SubAgentInfo {
  name: string;
  description: string;
  kind: 'headless' | 'voice';
}

/**
 * What the delegation tools need from their host. The TaskManager implements it; the
 * tools module depends only on this interface, so there is no import cycle.
 */
export interface DelegationHost {
  /** The sub-agent types the model may choose from, in the depth's view. */
  subagentTypes(depth: number): SubAgentInfo[];
  /** True when the model may pick a model for a sub-agent. */
  readonly modelOverride: boolean;
  /** Runs the `task` tool for the voice agent (depth 0) or a sub-agent (depth ≥ 1). */
  runTaskTool(
    args: TaskToolArgs,
    call: { options: llm.ToolOptions<unknown>; parentId?: string; depth: number },
  ): Promise<unknown>;
  /** Text for `task_status`: one task or every task in scope. Never blocks. */
  statusText(taskId: string | undefined, scope: { parentId?: string }): string;
  /** Cancels a task for the model; answers what happened. */
  cancelFromTool(taskId: string, scope: { parentId?: string }): Promise<string>;
}
