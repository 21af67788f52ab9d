/**
 * The TaskManager: starts sub-agents for a voice call, keeps the call talking while they
 * work, and delivers every completion exactly once — into whichever agent is current when
 * it is ready, as a deferred reply spoken when the line is idle.
 */
import { setMaxListeners } from 'node:events';
import { type APIConnectOptions, llm, voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { isTasklineError, TasklineError } from '../core/errors.js';
import { type TaskManagerTrace, traceTaskManager } from '../observability/delegation.js';
import { createSubAgentTaskTools } from '../tools/delegation.js';
import type { FileBackend } from '../tools/files/backend.js';
import { MemoryBackend } from '../tools/files/backends/memory.js';
import { createFileTools } from '../tools/files/tools.js';
import { createTodoTools } from '../tools/todos.js';
import { DeliveryChannel, type DeliveryEntry, type ReplyInstructions } from './channel.js';
import { runSpecialist } from './foreground.js';
import { MemoryDelegationStore } from './memory-store.js';
import type { DelegationStore } from './record.js';
import { EXECUTION_STAGE, initialRecord, recordResult, recordState } from './records.js';
import {
  type HeadlessProgress,
  newProgress,
  partialOutput,
  runHeadless,
  SUBMIT_RESULT_TOOL,
} from './runner.js';
import {
  type AnySubAgent,
  GENERAL_PURPOSE,
  GENERAL_PURPOSE_DESCRIPTION,
  GENERAL_PURPOSE_INSTRUCTIONS,
  isVoiceSpecialist,
  type SubAgentSpec,
  type VoiceSpecialistSpec,
} from './subagent.js';
import { DEFAULT_SUMMARY_CHARS, summarize } from './summary.js';
import { checkToolArgs, taskToolOutput } from './tool-output.js';
import {
  type DelegationHost,
  type FinalTaskStatus,
  isFinalStatus,
  type SubAgentInfo,
  type TaskEvent,
  type TaskMode,
  type TaskResult,
  type TaskSnapshot,
  type TaskStatus,
  type TaskToolArgs,
} from './types.js';
import { createWorkspace, mergeWorkspace, type Workspace, writeResult } from './workspace.js';

/** Default time a `task` call waits inline in `auto` mode before releasing the turn. */
export const DEFAULT_INLINE_WINDOW_MS = 2_000;
/** Default cap on an explicit foreground wait before the turn is released anyway. */
export const DEFAULT_FOREGROUND_CAP_MS = 20_000;
/** Default tasks (started by the voice agent or host) running at once. */
export const DEFAULT_MAX_PARALLEL = 4;
/** Default tasks waiting for a slot before new ones are refused. */
export const DEFAULT_QUEUE_LIMIT = 8;
/** Default nesting: the voice agent's sub-agents may delegate once more. */
export const DEFAULT_MAX_DEPTH = 2;
/** Default time a task may take from its creation. */
export const DEFAULT_TASK_TIMEOUT_MS = 120_000;
/** Default model turns of one headless run. */
export const DEFAULT_MAX_TURNS = 20;
/** Default window in which completions are gathered into one spoken reply. */
export const DEFAULT_COALESCE_MS = 250;

/** Options for {@link TaskManager}. */
export interface TaskManagerOptions {
  /** Sub-agent types besides the general-purpose one. */
  subagents?: readonly AnySubAgent[];
  /** Offer the general-purpose sub-agent (default true), optionally customized. */
  generalPurpose?:
    | boolean
    | Partial<Pick<SubAgentSpec, 'description' | 'instructions' | 'maxTurns' | 'llm' | 'tools'>>;
  /**
   * Default model for headless sub-agents without their own. Give sub-agents their own
   * instance, not the voice session's: upstream counts a model's errors against every
   * session listening to it.
   */
  llm?: llm.LLM;
  /** Retry and timeout of sub-agent model calls (upstream's defaults otherwise). */
  connOptions?: APIConnectOptions;
  /** Models the `task` tool may pick by name when `allowModelOverride` is on. */
  models?: Readonly<Record<string, llm.LLM>>;
  /** Let the model (and host) choose a sub-agent's model from `models` (default false). */
  allowModelOverride?: boolean;
  /** The parent's file backend: results and merged child files land here. */
  files?: FileBackend;
  /** Where task records live (in memory by default). */
  store?: DelegationStore;
  /** Timers; the attached call's clock by default. */
  clock?: Clock;
  /** Mode when the model does not say (default `auto`). */
  defaultMode?: TaskMode;
  /** `auto` answers inline when done within this long (default 2 s). */
  inlineWindowMs?: number;
  /** Longest inline wait of an explicit foreground request (default 20 s). */
  foregroundCapMs?: number;
  /** Top-level tasks running at once (default 4). Nested tasks run in their parent's slot. */
  maxParallel?: number;
  /** Tasks waiting for a slot (default 8); 0 refuses a task when all slots are busy. */
  queueLimit?: number;
  /** Deepest nesting (default 2): depth-`maxDepth` sub-agents get no `task` tool. */
  maxDepth?: number;
  /** Time a task may take from its creation (default 2 min); a timeout keeps partial output. */
  timeoutMs?: number;
  /** Model turns of one headless run (default 20). */
  maxTurns?: number;
  /** Keep tasks running after the call ends, as durable records (default false: cancel). */
  keepRunningAfterCall?: boolean;
  /**
   * Results ready within this long of the first one are spoken in one reply (default
   * 250 ms on the call's clock; 0 speaks each as soon as the line is idle).
   */
  coalesceMs?: number;
  /** Longest spoken summary (default 300 characters). */
  summaryChars?: number;
  /** The sentence suggested to the voice agent when a task goes to the background. */
  releaseLine?: (task: TaskSnapshot) => string;
  /** Instructions of the deferred reply that speaks results. */
  replyInstructions?: ReplyInstructions;
  /** The voice agent's identity in task records (default `voice-agent`). */
  agentId?: string;
  /** Prefix of record ids, unique per manager (random by default). */
  namespace?: string;
}

/** A task the host starts directly (not through the model). */
export interface StartTaskOptions {
  subagentType: string;
  description: string;
  prompt?: string;
  /** Continue an earlier task's sub-agent conversation. */
  taskId?: string;
  /** A model name from `models` (needs `allowModelOverride`). */
  model?: string;
  /** Speak the completion into the attached call (default: true when a call is attached). */
  notify?: boolean;
}

interface Conversation {
  id: string;
  subagentType: string;
  chatCtx: llm.ChatContext;
  /** Created on first use: a sub-agent without file or todo tools never needs one. */
  workspace: Workspace | undefined;
  busy: boolean;
}

interface TaskState {
  snap: TaskSnapshot;
  spec: AnySubAgent;
  conversation: Conversation | undefined;
  controller: AbortController;
  done: Promise<TaskResult>;
  resolve: (result: TaskResult) => void;
  timer: TimerHandle | undefined;
  progress: HeadlessProgress;
  notify: boolean;
  /** A tool call awaits this task to return its result as the call's final value. */
  waiter: boolean;
  /** Delivery was taken (inline answer, tool final, announcement, or none). */
  claimed: boolean;
  origin: voice.RunContext<unknown> | undefined;
  foreground: ((signal: AbortSignal) => Promise<unknown>) | undefined;
  model: llm.LLM | undefined;
  persist: Promise<void>;
  finishing: boolean;
  /** The result is complete (files written) and `done` has resolved. */
  settled: boolean;
  /** Nested tasks this task's sub-agent started. */
  children: number;
  /** Where this run's items start in its conversation (for the tools it called). */
  callsFrom: number;
}

interface CreateRequest {
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
}

function positive(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < min) {
    throw new TasklineError(
      'invalid_argument',
      `${name} must be a number of at least ${min}, got ${value}.`,
    );
  }
  return value;
}

function toToolError(err: unknown): unknown {
  if (isTasklineError(err)) return new llm.ToolError(`${err.code}: ${err.message}`);
  return err;
}

function errorInfo(err: unknown): { code: string; message: string } {
  if (isTasklineError(err)) return { code: err.code, message: err.message };
  if (err instanceof Error) return { code: 'failed', message: err.message };
  return { code: 'failed', message: String(err) };
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s}` : s.toFixed(1);
}

function workspaceOf(conversation: Conversation, clock: Clock): Workspace {
  conversation.workspace ??= createWorkspace(clock);
  return conversation.workspace;
}

/** Names of the tools a task's sub-agent called in this run (its conversation since it began). */
function functionCallsOf(task: TaskState): string[] {
  const items = task.conversation?.chatCtx.items ?? [];
  const out: string[] = [];
  for (const item of items.slice(task.callsFrom)) {
    if (item.type === 'function_call' && item.name !== SUBMIT_RESULT_TOOL) out.push(item.name);
  }
  return out;
}

function randomNamespace(): string {
  return crypto.randomUUID().slice(0, 8);
}

/**
 * Runs delegated work for one call. The model reaches it through the `task`,
 * `task_status` and `task_cancel` tools (`createDelegationTools`); the host through
 * start / get / list / wait / cancel / subscribe / close.
 *
 * @example
 * const manager = new TaskManager({ subagents: [researcher], files: backend });
 * const agent = new voice.Agent({ instructions, tools: { ...createDelegationTools(manager) } });
 */
export class TaskManager implements DelegationHost {
  readonly files: FileBackend;
  readonly store: DelegationStore;
  readonly namespace: string;
  readonly #options: TaskManagerOptions;
  readonly #types = new Map<string, AnySubAgent>();
  readonly #tasks = new Map<string, TaskState>();
  readonly #conversations = new Map<string, Conversation>();
  readonly #queue: TaskState[] = [];
  readonly #listeners = new Set<(event: TaskEvent) => void>();
  readonly #writes = new Set<Promise<void>>();
  readonly #ownsStore: boolean;
  readonly #inlineWindowMs: number;
  readonly #foregroundCapMs: number;
  readonly #maxParallel: number;
  readonly #queueLimit: number;
  readonly #maxDepth: number;
  readonly #timeoutMs: number;
  readonly #maxTurns: number;
  readonly #summaryChars: number;
  readonly #coalesceMs: number;
  #batch:
    | { release: () => void; released: Promise<void>; timer: TimerHandle | undefined }
    | undefined;
  #clock: Clock;
  #session: voice.AgentSession | undefined;
  #channel: DeliveryChannel | undefined;
  #callScope = new AbortController();
  #callId: string | undefined;
  #counter = 0;
  /** Top-level tasks running now (the maxParallel count). */
  #running = 0;
  #closed = false;
  readonly #trace: TaskManagerTrace = traceTaskManager(this);

  constructor(options: TaskManagerOptions = {}) {
    this.#options = options;
    this.files = options.files ?? new MemoryBackend();
    this.#ownsStore = options.store === undefined;
    this.store = options.store ?? new MemoryDelegationStore({ now: () => this.#clock.now() });
    this.namespace = options.namespace ?? randomNamespace();
    this.#clock = options.clock ?? systemClock;
    this.#inlineWindowMs = positive(
      'inlineWindowMs',
      options.inlineWindowMs,
      DEFAULT_INLINE_WINDOW_MS,
      0,
    );
    this.#foregroundCapMs = positive(
      'foregroundCapMs',
      options.foregroundCapMs,
      DEFAULT_FOREGROUND_CAP_MS,
      0,
    );
    this.#maxParallel = positive('maxParallel', options.maxParallel, DEFAULT_MAX_PARALLEL);
    this.#queueLimit = positive('queueLimit', options.queueLimit, DEFAULT_QUEUE_LIMIT, 0);
    this.#maxDepth = positive('maxDepth', options.maxDepth, DEFAULT_MAX_DEPTH);
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs, DEFAULT_TASK_TIMEOUT_MS);
    this.#maxTurns = positive('maxTurns', options.maxTurns, DEFAULT_MAX_TURNS);
    this.#summaryChars = positive('summaryChars', options.summaryChars, DEFAULT_SUMMARY_CHARS, 20);
    this.#coalesceMs = positive('coalesceMs', options.coalesceMs, DEFAULT_COALESCE_MS, 0);

    if (options.generalPurpose !== false) {
      const gp =
        options.generalPurpose === true || options.generalPurpose === undefined
          ? {}
          : options.generalPurpose;
      this.#types.set(GENERAL_PURPOSE, {
        kind: 'headless',
        name: GENERAL_PURPOSE,
        description: gp.description ?? GENERAL_PURPOSE_DESCRIPTION,
        instructions: gp.instructions ?? GENERAL_PURPOSE_INSTRUCTIONS,
        deepAgentTools: true,
        ...(gp.tools ? { tools: gp.tools } : {}),
        ...(gp.llm ? { llm: gp.llm } : {}),
        ...(gp.maxTurns ? { maxTurns: gp.maxTurns } : {}),
      });
    }
    for (const spec of options.subagents ?? []) {
      positive(`timeoutMs of sub-agent "${spec.name}"`, spec.timeoutMs, 1);
      if (this.#types.has(spec.name)) {
        throw new TasklineError(
          'invalid_argument',
          `Two sub-agents are named "${spec.name}"; names must be unique.`,
        );
      }
      this.#types.set(spec.name, spec);
    }
    if (this.#types.size === 0) {
      throw new TasklineError(
        'invalid_argument',
        'A TaskManager needs at least one sub-agent: keep the general-purpose one or pass subagents.',
      );
    }
    if (options.allowModelOverride && Object.keys(options.models ?? {}).length === 0) {
      throw new TasklineError(
        'invalid_argument',
        'allowModelOverride needs `models` to choose from.',
      );
    }
  }

  /** The clock timers run on (the attached call's clock unless one was given). */
  get clock(): Clock {
    return this.#clock;
  }

  /** The session this manager delivers into, once attached. */
  get session(): voice.AgentSession | undefined {
    return this.#session;
  }

  /** True when the model may choose a sub-agent's model. */
  get modelOverride(): boolean {
    return this.#options.allowModelOverride === true;
  }

  /** Model names the `task` tool accepts when model override is on. */
  get modelNames(): string[] {
    return Object.keys(this.#options.models ?? {});
  }

  // ------------------------------------------------------------------ binding to a call

  /**
   * Binds the manager to its call (the tools do this on first use). Completions are
   * delivered into this session only; its end cancels running tasks unless
   * `keepRunningAfterCall`. Throws when bound to another session that is still open.
   */
  attach(session: voice.AgentSession): this {
    if (this.#closed) throw new TasklineError('session_closed', 'This TaskManager is closed.');
    if (this.#session === session) return this;
    if (this.#session && this.#channel && !this.#channel.closed) {
      throw new TasklineError(
        'invalid_state',
        'This TaskManager already serves another call; create one TaskManager per call.',
      );
    }
    const call = callOf(session);
    this.#session = session;
    this.#callId = call.callId;
    if (!this.#options.clock) this.#clock = call.clock;
    this.#callScope = new AbortController();
    // Every waiting task call listens to the call's end.
    setMaxListeners(0, this.#callScope.signal);
    this.#channel = new DeliveryChannel(session, this.#options.replyInstructions);
    session.once(voice.AgentSessionEventTypes.Close, () => {
      void this.#onCallEnded(session);
    });
    return this;
  }

  async #onCallEnded(session: voice.AgentSession): Promise<void> {
    if (this.#session !== session) return;
    const channel = this.#channel;
    this.#callScope.abort(new TasklineError('session_closed', 'The call ended.'));
    this.#flushBatch();
    for (const task of this.#tasks.values()) {
      if (isFinalStatus(task.snap.status)) continue;
      task.notify = false;
      if (!this.#options.keepRunningAfterCall || isVoiceSpecialist(task.spec)) {
        this.#stop(task, 'cancelled', new TasklineError('cancelled', 'The call ended.'));
      }
    }
    await channel?.close();
  }

  // ------------------------------------------------------------------ host API

  /** Subscribes to task events; returns the function that unsubscribes. */
  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Starts a task for the host. Returns at once (the task may be queued); errors for an
   * unknown type, a cap, or a voice specialist (those only start from the call's model).
   */
  start(options: StartTaskOptions): TaskSnapshot {
    const task = this.#create({
      subagentType: options.subagentType,
      description: options.description,
      prompt: options.prompt,
      taskId: options.taskId,
      model: options.model,
      mode: 'background',
      depth: 1,
      origin: 'host',
      notify: options.notify ?? this.#channel !== undefined,
    });
    return this.#snapshot(task);
  }

  /** One task, or undefined. */
  get(id: string): TaskSnapshot | undefined {
    const task = this.#tasks.get(id);
    return task ? this.#snapshot(task) : undefined;
  }

  /** Tasks in creation order, optionally only some statuses or one parent's. */
  list(
    filter: { status?: TaskStatus | readonly TaskStatus[]; parentId?: string } = {},
  ): TaskSnapshot[] {
    const statuses =
      filter.status === undefined
        ? undefined
        : new Set<TaskStatus>(typeof filter.status === 'string' ? [filter.status] : filter.status);
    const out: TaskSnapshot[] = [];
    for (const task of this.#tasks.values()) {
      if (statuses && !statuses.has(task.snap.status)) continue;
      if (filter.parentId !== undefined && task.snap.parentId !== filter.parentId) continue;
      out.push(this.#snapshot(task));
    }
    return out;
  }

  /**
   * Resolves with the task's result when it ends. Bounded by the task's own timeout;
   * `timeoutMs` (on the clock) or `signal` give up sooner, leaving the task running.
   */
  wait(
    id: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<TaskResult> {
    const task = this.#must(id);
    if (options.timeoutMs === undefined && !options.signal) return task.done;
    return new Promise<TaskResult>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const cleanup = () => {
        timer?.cancel();
        options.signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        cleanup();
        reject(options.signal?.reason ?? new TasklineError('cancelled', 'Stopped waiting.'));
      };
      if (options.timeoutMs !== undefined) {
        timer = this.#clock.setTimer(options.timeoutMs, () => {
          cleanup();
          reject(
            new TasklineError(
              'timeout',
              `Task ${id} did not finish within ${options.timeoutMs} ms; it is still running.`,
              { id },
            ),
          );
        });
      }
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      task.done.then(
        (result) => {
          cleanup();
          resolve(result);
        },
        (err: unknown) => {
          cleanup();
          reject(err);
        },
      );
    });
  }

  /** Cancels a queued or running task (and its nested tasks). False when already finished. */
  async cancel(id: string, reason = 'Cancelled by the host.'): Promise<boolean> {
    const task = this.#must(id);
    if (isFinalStatus(task.snap.status)) return false;
    this.#stop(task, 'cancelled', new TasklineError('cancelled', reason));
    await task.done;
    return true;
  }

  /** Cancels everything still running, stops delivering, and waits for record writes. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#callScope.abort(new TasklineError('session_closed', 'The task manager closed.'));
    this.#flushBatch();
    const pending: Promise<TaskResult>[] = [];
    for (const task of this.#tasks.values()) {
      if (isFinalStatus(task.snap.status)) continue;
      task.notify = false;
      this.#stop(task, 'cancelled', new TasklineError('cancelled', 'The task manager closed.'));
      pending.push(task.done);
    }
    await Promise.allSettled(pending);
    await this.#channel?.close();
    await this.flush();
    this.#trace.close();
    if (this.#ownsStore) await this.store.close();
  }

  /** Waits until every record write issued so far has settled. */
  async flush(): Promise<void> {
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes]);
  }

  /** True while any task is queued or running. */
  hasRunning(): boolean {
    for (const task of this.#tasks.values()) if (!isFinalStatus(task.snap.status)) return true;
    return false;
  }

  /**
   * Resolves true once no task is queued or running (tasks started meanwhile included), false
   * when `timeoutMs` passes first on the clock (default: the longest task timeout, which bounds
   * every task running now) or `signal` aborts. Never waits unbounded.
   */
  async waitAllDone(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<boolean> {
    const limit = new AbortController();
    const longest = Math.max(
      this.#timeoutMs,
      ...[...this.#types.values()].map((t) => t.timeoutMs ?? 0),
    );
    const timer = this.#clock.setTimer(options.timeoutMs ?? longest, () => limit.abort());
    const signals = options.signal ? [limit.signal, options.signal] : [limit.signal];
    try {
      for (;;) {
        const open = [...this.#tasks.values()].filter((t) => !isFinalStatus(t.snap.status));
        if (open.length === 0) return true;
        if (signals.some((s) => s.aborted)) return false;
        await this.#promiseOr(Promise.allSettled(open.map((t) => t.done)), signals);
      }
    } finally {
      timer.cancel();
    }
  }

  // ------------------------------------------------------------------ DelegationHost (tools)

  /** The sub-agent types offered at `depth` (voice specialists only to the voice agent). */
  subagentTypes(depth: number): SubAgentInfo[] {
    const out: SubAgentInfo[] = [];
    for (const spec of this.#types.values()) {
      const kind = isVoiceSpecialist(spec) ? 'voice' : 'headless';
      if (kind === 'voice' && depth > 0) continue;
      out.push({ name: spec.name, description: spec.description, kind });
    }
    return out;
  }

  /** Runs one `task` tool call: the voice agent's (async, on the delivery channel) or a sub-agent's. */
  async runTaskTool(
    args: TaskToolArgs,
    call: { options: llm.ToolOptions<unknown>; parentId?: string; depth: number },
  ): Promise<unknown> {
    if (call.depth > 0) return this.#runNested(args, call.depth, call.parentId);
    this.attach(call.options.ctx.session);
    const channel = this.#channel;
    if (!channel) throw new llm.ToolError('session_closed: the call has ended.');
    const body = llm.tool({
      name: call.options.ctx.functionCall.name,
      description: 'Delegated task (runs on the delegation channel).',
      execute: (_args, { ctx, abortSignal }) => this.#toolBody(args, ctx, abortSignal),
    });
    // A tool without parameters; the executor only ever calls it with {}.
    return channel.run(body as unknown as llm.FunctionTool, call.options);
  }

  /** The `task_status` answer for one task or every task in scope; never waits. */
  statusText(taskId: string | undefined, scope: { parentId?: string }): string {
    if (taskId) {
      const task = this.#tasks.get(taskId);
      if (!task || task.snap.parentId !== scope.parentId) {
        throw new llm.ToolError(
          `not_found: there is no task "${taskId}"; call task_status without task_id to list them.`,
        );
      }
      return this.#statusLine(task, true);
    }
    const mine = [...this.#tasks.values()].filter((t) => t.snap.parentId === scope.parentId);
    if (mine.length === 0) return 'No tasks have been started.';
    return mine.map((t) => this.#statusLine(t, false)).join('\n');
  }

  /** The `task_cancel` answer; the model asked, so nothing is spoken about it later. */
  async cancelFromTool(taskId: string, scope: { parentId?: string }): Promise<string> {
    const task = this.#tasks.get(taskId);
    if (!task || task.snap.parentId !== scope.parentId) {
      throw new llm.ToolError(
        `not_found: there is no task "${taskId}"; call task_status to list them.`,
      );
    }
    if (isFinalStatus(task.snap.status)) {
      return `Task ${taskId} (${task.snap.description}) had already ended: ${task.snap.status}. Nothing to cancel.`;
    }
    // The model asked for it, so the model already knows: nothing to speak later.
    task.claimed = true;
    task.snap.delivery = 'none';
    this.#stop(
      task,
      'cancelled',
      new TasklineError('cancelled', 'Cancelled at the caller’s request.'),
    );
    await task.done;
    return `Cancelled task ${taskId} (${task.snap.description}).`;
  }

  // ------------------------------------------------------------------ the task tool, voice level

  async #toolBody(
    raw: TaskToolArgs,
    ctx: voice.RunContext<unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    const spec = this.#types.get(raw.subagent_type);
    const voiceTask = spec !== undefined && isVoiceSpecialist(spec);
    const { args, reminders } = checkToolArgs(raw, {
      modelOverride: this.modelOverride,
      background: !voiceTask,
    });
    const remind = (text: string) =>
      reminders.length > 0 ? `${text} ${reminders.join(' ')}` : text;
    const mode: TaskMode = voiceTask
      ? 'foreground'
      : args.run_in_background === true
        ? 'background'
        : args.run_in_background === false
          ? 'foreground'
          : (this.#options.defaultMode ?? 'auto');
    let task: TaskState;
    try {
      task = this.#create(
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
    const channel = this.#channel;
    // From here until this call returns, the call itself owns the task's delivery.
    task.waiter = true;
    try {
      if (voiceTask) {
        // The specialist needs the floor: release the turn, then it runs in the foreground.
        await ctx.update(remind(this.#handoverText(task)));
        this.#markReleased(task);
      } else if (mode !== 'background') {
        const window = mode === 'auto' ? this.#inlineWindowMs : this.#foregroundCapMs;
        const finished = await this.#within(task, window, signal);
        if (signal.aborted) return undefined;
        if (finished) {
          if (this.#claim(task)) {
            task.snap.delivery = 'inline';
            this.#emit(() => ({ type: 'delivered', task: this.#snapshot(task), via: 'inline' }));
          }
          return taskToolOutput(this.#snapshot(task), reminders);
        }
        await ctx.update(remind(this.#releaseText(task)));
        this.#markReleased(task);
      } else {
        await ctx.update(remind(this.#releaseText(task)));
        this.#markReleased(task);
      }

      await this.#settledOr(task, [signal, this.#callScope.signal]);
      if (task.settled && !task.claimed) {
        // Wait for the batch, so results finishing together are spoken together.
        await this.#promiseOr(this.#joinBatch(), [signal, this.#callScope.signal]);
      }
      if (
        task.settled &&
        !signal.aborted &&
        task.notify &&
        channel !== undefined &&
        !channel.closed &&
        this.#claim(task)
      ) {
        // Upstream turns this final value into a deferred reply to the current agent.
        channel.expectFinal(ctx.functionCall.callId, this.#entry(task));
        return taskToolOutput(this.#snapshot(task));
      }
      return undefined;
    } finally {
      task.waiter = false;
      // Interrupted or cut short: the manager delivers it itself when it ends.
      this.#afterFinish(task);
    }
  }

  /** True when the task ended within `ms` on the clock; false on timeout or abort. */
  #within(task: TaskState, ms: number, signal: AbortSignal): Promise<boolean> {
    if (task.settled) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const finish = (value: boolean) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onAbort = () => finish(false);
      const timer = this.#clock.setTimer(ms, () => finish(false));
      signal.addEventListener('abort', onAbort, { once: true });
      task.done.then(
        () => finish(true),
        () => finish(true),
      );
    });
  }

  /** Resolves when the task ends or any signal aborts. */
  #settledOr(task: TaskState, signals: AbortSignal[]): Promise<void> {
    if (task.settled) return Promise.resolve();
    return this.#promiseOr(task.done, signals);
  }

  /** Resolves when `promise` settles or any signal aborts. */
  #promiseOr(promise: Promise<unknown>, signals: AbortSignal[]): Promise<void> {
    if (signals.some((s) => s.aborted)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const finish = () => {
        for (const s of signals) s.removeEventListener('abort', finish);
        resolve();
      };
      for (const s of signals) s.addEventListener('abort', finish, { once: true });
      promise.then(finish, finish);
    });
  }

  /**
   * Resolves when the current delivery batch closes: the first completion opens a batch
   * of `coalesceMs` on the clock, later ones join it, and all are released in one tick so
   * upstream speaks them in one deferred reply.
   */
  #joinBatch(): Promise<void> {
    if (this.#coalesceMs === 0) return Promise.resolve();
    if (!this.#batch) {
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      const batch = { release, released, timer: undefined as TimerHandle | undefined };
      batch.timer = this.#clock.setTimer(this.#coalesceMs, () => {
        if (this.#batch === batch) this.#batch = undefined;
        release();
      });
      this.#batch = batch;
    }
    return this.#batch.released;
  }

  #flushBatch(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    batch?.timer?.cancel();
    batch?.release();
  }

  #markReleased(task: TaskState): void {
    task.snap.released = true;
    this.#emit(() => ({ type: 'released', task: this.#snapshot(task) }));
  }

  // ------------------------------------------------------------------ nested tasks

  async #runNested(
    raw: TaskToolArgs,
    depth: number,
    parentId: string | undefined,
  ): Promise<unknown> {
    const { args, reminders } = checkToolArgs(raw, {
      modelOverride: this.modelOverride,
      background: false,
    });
    let task: TaskState;
    try {
      task = this.#create({
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
    return taskToolOutput(this.#snapshot(task), reminders);
  }

  // ------------------------------------------------------------------ creating and running

  #create(req: CreateRequest, origin?: voice.RunContext<unknown>): TaskState {
    if (this.#closed) throw new TasklineError('session_closed', 'This TaskManager is closed.');
    const description = req.description?.trim();
    if (!description) {
      throw new TasklineError(
        'invalid_argument',
        'description is required: a short title of the task, e.g. "Check the refund policy".',
      );
    }
    const spec = this.#types.get(req.subagentType);
    if (!spec) {
      throw new TasklineError(
        'not_found',
        `There is no sub-agent "${req.subagentType}". Choose one of: ${[...this.#types.keys()].join(', ')}.`,
      );
    }
    if (req.depth > this.#maxDepth) {
      throw new TasklineError(
        'limit_exceeded',
        `Delegation is limited to ${this.#maxDepth} level(s) (maxDepth); do this part yourself.`,
        { maxDepth: this.#maxDepth },
      );
    }
    const voiceTask = isVoiceSpecialist(spec);
    if (voiceTask && (req.origin !== 'tool' || !origin)) {
      throw new TasklineError(
        'invalid_argument',
        `"${spec.name}" is a voice specialist: it talks to the caller, so only the voice agent can start it, with the task tool during the call.`,
      );
    }
    const headless = voiceTask ? undefined : (spec as SubAgentSpec<unknown>);
    if (headless && !headless.run && !headless.llm && !this.#options.llm && !req.model) {
      throw new TasklineError(
        'invalid_state',
        `No model for sub-agent "${spec.name}": pass llm to the TaskManager or to the sub-agent.`,
      );
    }
    let model: llm.LLM | undefined;
    if (req.model) {
      if (!this.modelOverride) {
        throw new TasklineError(
          'invalid_argument',
          'Choosing a model is turned off for this assistant (allowModelOverride is false); leave model out.',
        );
      }
      model = this.#options.models?.[req.model];
      if (!model) {
        throw new TasklineError(
          'not_found',
          `There is no model "${req.model}". Choose one of: ${this.modelNames.join(', ')}.`,
        );
      }
    }

    let conversation: Conversation | undefined;
    let resumedFrom: string | undefined;
    if (req.taskId) {
      const earlier = this.#tasks.get(req.taskId);
      if (!earlier || earlier.snap.parentId !== req.parentId) {
        throw new TasklineError(
          'not_found',
          `There is no task "${req.taskId}" to continue; call task_status to list them.`,
        );
      }
      if (!earlier.conversation) {
        throw new TasklineError(
          'invalid_argument',
          `Task ${req.taskId} was a voice specialist; start a new task instead.`,
        );
      }
      if (earlier.snap.subagentType !== spec.name) {
        throw new TasklineError(
          'invalid_argument',
          `Task ${req.taskId} was run by "${earlier.snap.subagentType}", not "${spec.name}"; use the same subagent_type to continue it.`,
        );
      }
      if (earlier.conversation.busy) {
        throw new TasklineError(
          'invalid_state',
          `Task ${req.taskId}'s sub-agent is still working; wait for its result or cancel it first.`,
        );
      }
      conversation = earlier.conversation;
      resumedFrom = earlier.snap.id;
    }

    const topLevel = req.depth === 1;
    const queued = topLevel && this.#runningTopLevel() >= this.#maxParallel;
    if (queued && this.#queue.length >= this.#queueLimit) {
      throw new TasklineError(
        'limit_exceeded',
        this.#queueLimit === 0
          ? `${this.#maxParallel} task(s) are already running (maxParallel ${this.#maxParallel}). Wait for one to finish, or cancel one with task_cancel.`
          : `${this.#maxParallel} task(s) are running and ${this.#queue.length} are waiting (maxParallel ${this.#maxParallel}, queueLimit ${this.#queueLimit}). Wait for one to finish, or cancel one with task_cancel.`,
        { maxParallel: this.#maxParallel, queueLimit: this.#queueLimit },
      );
    }

    this.#counter += 1;
    const id = `t${this.#counter}`;
    if (!conversation && !voiceTask) {
      conversation = {
        id: `c${this.#counter}`,
        subagentType: spec.name,
        chatCtx: llm.ChatContext.empty(),
        workspace: undefined,
        busy: false,
      };
      this.#conversations.set(conversation.id, conversation);
    }
    if (conversation) conversation.busy = true;

    const now = this.#clock.now();
    const timeoutMs = spec.timeoutMs ?? this.#timeoutMs;
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
        ...(resumedFrom !== undefined ? { resumedFrom } : {}),
        origin: req.origin,
        createdAt: now,
        deadline: now + timeoutMs,
        released: false,
        delivery: req.notify ? 'pending' : 'none',
      },
      spec,
      conversation,
      controller: new AbortController(),
      done,
      resolve,
      timer: undefined,
      progress: newProgress(),
      notify: req.notify,
      waiter: false,
      claimed: !req.notify,
      origin,
      foreground: undefined,
      model,
      persist: Promise.resolve(),
      finishing: false,
      settled: false,
      children: 0,
      callsFrom: conversation?.chatCtx.items.length ?? 0,
    };
    if (voiceTask && origin) {
      const specialist = spec as VoiceSpecialistSpec<unknown>;
      const brief = { prompt: task.snap.prompt, description };
      task.foreground = (signal) => runSpecialist(origin, () => specialist.create(brief), signal);
    }
    if (req.parentId) {
      // A nested task ends with its parent.
      const parent = this.#tasks.get(req.parentId);
      if (parent) parent.children += 1;
      parent?.controller.signal.addEventListener(
        'abort',
        () =>
          this.#stop(task, 'cancelled', new TasklineError('cancelled', 'Its parent task ended.')),
        { once: true },
      );
    }
    this.#tasks.set(id, task);
    task.timer = this.#clock.setTimer(timeoutMs, () =>
      this.#stop(
        task,
        'timeout',
        new TasklineError('timeout', `The task did not finish within ${seconds(timeoutMs)} s.`),
      ),
    );
    if (queued) {
      this.#persistNew(task);
      this.#queue.push(task);
      this.#emit(() => ({ type: 'queued', task: this.#snapshot(task) }));
    } else {
      // Started at once: the record is created in progress (one write instead of two).
      this.#begin(task);
      this.#persistNew(task);
      this.#emitStarted(task);
      void this.#trace.run(task.snap.id, () => this.#execute(task));
    }
    return task;
  }

  #runningTopLevel(): number {
    return this.#running;
  }

  /** Starts a queued task now that a slot is free. */
  #run(task: TaskState): void {
    this.#begin(task);
    this.#write(task, (store) =>
      store.setStage(this.#recordId(task), EXECUTION_STAGE, { state: 'in_progress' }),
    );
    this.#emitStarted(task);
    void this.#trace.run(task.snap.id, () => this.#execute(task));
  }

  #begin(task: TaskState): void {
    if (task.snap.depth === 1) this.#running += 1;
    task.snap.status = 'running';
    task.snap.startedAt = this.#clock.now();
  }

  #emitStarted(task: TaskState): void {
    this.#emit(() => ({ type: 'started', task: this.#snapshot(task) }));
  }

  #persistNew(task: TaskState): void {
    this.#write(task, (store) =>
      store.create(initialRecord(this.#snapshot(task), this.#parties(task))),
    );
  }

  async #execute(task: TaskState): Promise<void> {
    const signal = task.controller.signal;
    try {
      if (task.foreground) {
        const value = await task.foreground(signal);
        if (signal.aborted) return;
        const spec = task.spec as VoiceSpecialistSpec<unknown>;
        const summary = spec.summarize
          ? spec.summarize(value)
          : summarize(JSON.stringify(value), this.#summaryChars);
        await this.#finish(task, 'done', {
          output: JSON.stringify(value, null, 2),
          value,
          summary,
          turns: 0,
        });
        return;
      }
      const spec = task.spec as SubAgentSpec<unknown>;
      const conversation = task.conversation;
      if (!conversation)
        throw new TasklineError('invalid_state', `Task ${task.snap.id} has no conversation.`);
      const result = spec.run
        ? {
            ...(await spec.run(
              {
                taskId: task.snap.id,
                prompt: task.snap.prompt,
                description: task.snap.description,
              },
              signal,
            )),
            turns: 0,
          }
        : await runHeadless<unknown>({
            model: this.#modelFor(task),
            instructions: spec.instructions,
            tools: this.#toolsFor(task, spec, conversation),
            conversation: conversation.chatCtx,
            prompt: task.snap.prompt,
            maxTurns: spec.maxTurns ?? this.#maxTurns,
            signal,
            progress: task.progress,
            ...(spec.output ? { output: spec.output } : {}),
            ...(this.#options.connOptions ? { connOptions: this.#options.connOptions } : {}),
          });
      if (signal.aborted) return;
      const summary = spec.summarize
        ? spec.summarize({
            output: result.output,
            ...(result.value !== undefined ? { value: result.value } : {}),
          })
        : summarize(result.output, this.#summaryChars);
      await this.#finish(task, 'done', {
        output: result.output,
        ...(result.value !== undefined ? { value: result.value } : {}),
        summary,
        turns: result.turns,
      });
    } catch (err) {
      if (signal.aborted) return; // cancel/timeout already finished it
      await this.#finish(task, 'failed', {
        output: partialOutput(task.progress),
        summary: summarize(errorInfo(err).message, this.#summaryChars),
        error: errorInfo(err),
        partial: true,
        turns: task.progress.turns,
      });
    }
  }

  #modelFor(task: TaskState): llm.LLM {
    const spec = task.spec as SubAgentSpec<unknown>;
    const model = task.model ?? spec.llm ?? this.#options.llm;
    if (!model) {
      throw new TasklineError(
        'invalid_state',
        `No model for sub-agent "${spec.name}": pass llm to the TaskManager or to the sub-agent.`,
      );
    }
    return model;
  }

  #toolsFor(
    task: TaskState,
    spec: SubAgentSpec<unknown>,
    conversation: Conversation,
  ): llm.ToolContextLike {
    const clock = this.#clock;
    const context = {
      get workspace() {
        return workspaceOf(conversation, clock);
      },
      taskId: task.snap.id,
      depth: task.snap.depth,
    };
    const own = typeof spec.tools === 'function' ? spec.tools(context) : spec.tools;
    if (!spec.deepAgentTools) return own ?? [];
    const entries: llm.FunctionTool[] = [];
    const add = (tools: llm.ToolContextLike | undefined) => {
      if (tools === undefined) return;
      entries.push(...Object.values(llm.toToolContext(tools).functionTools));
    };
    const ws = workspaceOf(conversation, this.#clock);
    add(createFileTools({ backend: ws.files, state: ws.fileState, clock: this.#clock }));
    add(createTodoTools({ list: ws.todos }));
    if (task.snap.depth < this.#maxDepth) {
      add(createSubAgentTaskTools(this, { parentId: task.snap.id, depth: task.snap.depth }));
    }
    add(own);
    // The sub-agent's own tools win over the defaults of the same name.
    const byName = new Map<string, llm.FunctionTool>();
    for (const tool of entries) byName.set(tool.name, tool);
    return [...byName.values()];
  }

  // ------------------------------------------------------------------ ending

  /** Ends a task now (cancel or timeout) with what it produced so far. */
  #stop(task: TaskState, status: 'cancelled' | 'timeout', reason: TasklineError): void {
    if (task.finishing) return;
    const queuedAt = this.#queue.indexOf(task);
    if (queuedAt >= 0) this.#queue.splice(queuedAt, 1);
    const partial = partialOutput(task.progress);
    void this.#finish(task, status, {
      output: partial,
      summary: partial ? summarize(partial, this.#summaryChars) : reason.message,
      error: { code: reason.code, message: reason.message },
      partial: true,
      turns: task.progress.turns,
    });
    task.controller.abort(reason);
  }

  async #finish(
    task: TaskState,
    status: FinalTaskStatus,
    payload: {
      output: string;
      value?: unknown;
      summary: string;
      error?: { code: string; message: string };
      partial?: boolean;
      turns: number;
    },
  ): Promise<void> {
    if (task.finishing) return;
    task.finishing = true;
    task.timer?.cancel();
    if (task.snap.status === 'running' && task.snap.depth === 1) this.#running -= 1;
    task.snap.status = status;
    task.snap.endedAt = this.#clock.now();
    if (task.conversation) task.conversation.busy = false;
    const result: TaskResult = {
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
    task.snap.result = result;
    // Free the slot before anything async, so a queued task starts at once.
    this.#pump();

    const parentFiles = this.#parentFiles(task);
    if (task.conversation?.workspace) {
      result.files = await mergeWorkspace(task.conversation.workspace, parentFiles, task.snap.id);
    }
    const path = await writeResult(parentFiles, task.snap.id, this.#resultMarkdown(task, result));
    if (path) result.resultPath = path;

    this.#write(task, (store) =>
      store.setStage(this.#recordId(task), EXECUTION_STAGE, {
        state: recordState(status),
        delegation_result: recordResult(task.snap),
      }),
    );
    task.settled = true;
    task.resolve(result);
    this.#emit(() => ({ type: 'finished', task: this.#snapshot(task) }));
    this.#afterFinish(task);
    // Anything the task started (nested tasks) stops now; a finished run has nothing else.
    if (!task.controller.signal.aborted && (status !== 'done' || task.children > 0)) {
      task.controller.abort(new TasklineError('cancelled', `Task ${task.snap.id} has ended.`));
    }
  }

  /** The files a task's result lands in: its parent task's workspace, or the call's files. */
  #parentFiles(task: TaskState): FileBackend {
    if (!task.snap.parentId) return this.files;
    const parent = this.#tasks.get(task.snap.parentId)?.conversation;
    return parent ? workspaceOf(parent, this.#clock).files : this.files;
  }

  #pump(): void {
    while (this.#queue.length > 0 && this.#runningTopLevel() < this.#maxParallel) {
      const next = this.#queue.shift();
      if (next && !next.finishing) this.#run(next);
    }
  }

  // ------------------------------------------------------------------ delivery

  #claim(task: TaskState): boolean {
    if (task.claimed) return false;
    task.claimed = true;
    return true;
  }

  /** After a task ended: speak it, unless a waiting tool call or an inline answer does. */
  #afterFinish(task: TaskState): void {
    if (task.waiter || task.claimed || !task.settled) return;
    const channel = this.#channel;
    if (!task.notify || !channel || channel.closed) {
      task.claimed = true;
      task.snap.delivery = 'none';
      return;
    }
    this.#claim(task);
    void this.#joinBatch().then(() => {
      if (channel.closed) {
        task.snap.delivery = 'none';
        return;
      }
      void channel.announce(this.#entry(task), task.origin);
    });
  }

  #entry(task: TaskState): DeliveryEntry {
    return {
      taskId: task.snap.id,
      text: this.#deliveryText(task),
      onDelivered: () => {
        task.snap.delivery = 'spoken';
        this.#emit(() => ({ type: 'delivered', task: this.#snapshot(task), via: 'spoken' }));
      },
    };
  }

  // ------------------------------------------------------------------ texts

  #title(task: TaskState): string {
    return `Task ${task.snap.id} ("${task.snap.description}")`;
  }

  #releaseText(task: TaskState): string {
    const line =
      this.#options.releaseLine?.(this.#snapshot(task)) ??
      "I'm looking into that now. I'll tell you as soon as I have it.";
    return (
      `${this.#title(task)} is now running in the background. Tell the caller in one short sentence ` +
      `that you are on it (for example: "${line}"), then carry on with the conversation. Its ` +
      'result will be given to you automatically when it is ready: do not call task_status to ' +
      'check on it, and do not start it again.'
    );
  }

  #handoverText(task: TaskState): string {
    return (
      `${this.#title(task)}: the ${task.snap.subagentType} specialist takes over the call now. Say ` +
      'one short sentence to hand over; the specialist speaks next, and its result will be given ' +
      'to you when it is done.'
    );
  }

  #statusLine(task: TaskState, detailed: boolean): string {
    const s = task.snap;
    const now = this.#clock.now();
    let line = `${s.id} · ${s.subagentType} · "${s.description}" · `;
    if (s.status === 'queued') line += 'waiting for a free slot';
    else if (s.status === 'running')
      line += `running for ${seconds(Math.max(0, now - (s.startedAt ?? now)))} s`;
    else line += s.status;
    if (s.result && (detailed || s.status !== 'done')) line += `: ${s.result.summary}`;
    if (s.status === 'running' && detailed) {
      line += '. Its result will be given to you automatically; no need to check again.';
    }
    return line;
  }

  /** What the model is told when a result is spoken later (short; the file has the rest). */
  #deliveryText(task: TaskState): string {
    const r = task.snap.result;
    if (!r) return `${this.#title(task)} is ${task.snap.status}.`;
    const where = r.resultPath
      ? ` (full ${r.partial ? 'partial output' : 'result'}: ${r.resultPath})`
      : '';
    switch (r.status) {
      case 'done':
        return `${this.#title(task)} is done: ${r.summary}${where}`;
      case 'failed':
        return `${this.#title(task)} failed: ${r.error?.message ?? r.summary}. Apologize briefly and offer another way.`;
      case 'timeout':
        return `${this.#title(task)} timed out. ${r.output ? `Partial result: ${r.summary}` : 'It produced nothing.'}${where}`;
      case 'cancelled':
        return `${this.#title(task)} was cancelled: ${r.error?.message ?? 'no reason given'}.`;
    }
  }

  #resultMarkdown(task: TaskState, result: TaskResult): string {
    const s = task.snap;
    const lines = [
      `# ${s.description}`,
      '',
      `- task: ${s.id}`,
      `- sub-agent: ${s.subagentType}`,
      `- status: ${result.status}${result.partial ? ' (partial output)' : ''}`,
    ];
    if (s.resumedFrom) lines.push(`- continues: ${s.resumedFrom}`);
    if (result.error) lines.push(`- error: ${result.error.code}: ${result.error.message}`);
    lines.push(
      '',
      '## Brief',
      '',
      s.prompt,
      '',
      '## Result',
      '',
      result.output || '(no output)',
      '',
    );
    return lines.join('\n');
  }

  // ------------------------------------------------------------------ plumbing

  #snapshot(task: TaskState): TaskSnapshot {
    const snap = { ...task.snap };
    if (task.snap.result) snap.result = { ...task.snap.result, files: [...task.snap.result.files] };
    return snap;
  }

  #must(id: string): TaskState {
    const task = this.#tasks.get(id);
    if (!task) throw new TasklineError('not_found', `There is no task "${id}".`, { id });
    return task;
  }

  #recordId(task: TaskState): string {
    return `${this.namespace}:${task.snap.id}`;
  }

  #parties(task: TaskState) {
    const parent = task.snap.parentId ? this.#tasks.get(task.snap.parentId) : undefined;
    return {
      delegationId: this.#recordId(task),
      parentRecordId: parent ? this.#recordId(parent) : (this.#callId ?? this.namespace),
      sender: parent
        ? `subagent:${parent.snap.subagentType}`
        : (this.#options.agentId ?? 'voice-agent'),
      type: isVoiceSpecialist(task.spec) ? 'voice_specialist' : 'subagent',
    };
  }

  /** Queues one record write for a task, in order; failures become `store_error` events. */
  #write(task: TaskState, op: (store: DelegationStore) => Promise<unknown>): void {
    const next = task.persist
      .then(async () => {
        await op(this.store);
      })
      .catch((error: unknown) => {
        this.#emit(() => ({ type: 'store_error', taskId: task.snap.id, error }));
      });
    task.persist = next;
    this.#writes.add(next);
    void next.finally(() => this.#writes.delete(next));
  }

  /** Tells subscribers; the event is only built when someone listens. */
  #emit(make: () => TaskEvent): void {
    if (this.#listeners.size === 0) return;
    const event = make();
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's bug must not break delegation.
      }
    }
  }
}
