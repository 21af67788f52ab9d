/**
 * The TaskManager: starts sub-agents for a voice call, keeps the call talking while they
 * work, and delivers every completion exactly once — into whichever agent is current when
 * it is ready, as a deferred reply spoken when the line is idle.
 *
 * This class holds a task's life (create, run, stop, finish) and the host API; each concern
 * lives in its own file under ./task-manager/: admission (request checks, slots, queue),
 * execution (running the work), modes (the `task` call: foreground, background, auto),
 * delivery (exactly once, coalesced), traces (record and result files), wording (what the
 * voice agent is told), deadlines, waits, events, options, state.
 *
 * Over 500 lines: the host API and a task's life cycle; each concern it calls lives under ./task-manager/.
 */
import { setMaxListeners } from 'node:events';
import { llm, voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { type Clock, systemClock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import type { FileBackend } from '../deep-agent/tools/files/backend.js';
import { MemoryBackend } from '../deep-agent/tools/files/backends/memory.js';
import { type TaskManagerTrace, traceTaskManager } from '../observability/delegation.js';
import { MemoryDelegationStore } from './memory-store.js';
import type { DelegationStore } from './record.js';
import { type AnySubAgent, isVoiceSpecialist, type SubAgentToolGuard } from './subagent.js';
import { checkRequest, Slots } from './task-manager/admission.js';
import { Deadlines } from './task-manager/deadlines.js';
import { Delivery } from './task-manager/delivery.js';
import { TaskEvents } from './task-manager/events.js';
import {
  type ExecutionContext,
  executeTask,
  type FinishPayload,
  failurePayload,
  resultOf,
  stoppedPayload,
} from './task-manager/execution.js';
import { runNestedTaskCall, runOnChannel, type TurnHost } from './task-manager/modes.js';
import {
  describeTypes,
  flatOptions,
  type ManagerLimits,
  managerLimits,
  type StartTaskOptions,
  subagentRegistry,
  type TaskManagerOptions,
} from './task-manager/options.js';
import { recoverWork } from './task-manager/recovery.js';
import {
  type CreateRequest,
  linkToParent,
  listTasks,
  newConversation,
  newTask,
  snapshotOf,
  type TaskState,
  workspaceOf,
} from './task-manager/state.js';
import { fileResult, TaskRecords } from './task-manager/task-records.js';
import { allSettled, resultWithin } from './task-manager/waits.js';
import { seconds, statusAnswer } from './task-manager/wording.js';
import {
  type DelegationHost,
  type FinalTaskStatus,
  isFinalStatus,
  type SubAgentInfo,
  type TaskEvent,
  type TaskResult,
  type TaskSnapshot,
  type TaskStatus,
  type TaskToolArgs,
} from './types.js';

export {
  DEFAULT_COALESCE_MS,
  DEFAULT_FOREGROUND_CAP_MS,
  DEFAULT_INLINE_WINDOW_MS,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_PARALLEL,
  DEFAULT_MAX_TURNS,
  DEFAULT_QUEUE_LIMIT,
  DEFAULT_TASK_TIMEOUT_MS,
  type StartTaskOptions,
  type TaskDeliveryOptions,
  type TaskLimitOptions,
  type TaskManagerOptions,
  type TaskRecordOptions,
  type TaskTurnOptions,
} from './task-manager/options.js';

/** How long `close()` waits for the store to confirm the last record writes. */
const CLOSE_FLUSH_MS = 10_000;

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
  readonly #limits: ManagerLimits;
  readonly #types: Map<string, AnySubAgent>;
  readonly #tasks = new Map<string, TaskState>();
  readonly #trace: TaskManagerTrace = traceTaskManager();
  readonly #events = new TaskEvents(this.#trace.observe);
  readonly #ownsStore: boolean;
  readonly #slots: Slots;
  readonly #delivery: Delivery;
  readonly #records: TaskRecords;
  readonly #turns: TurnHost;
  readonly #execution: ExecutionContext;
  readonly #toolGuards: SubAgentToolGuard[] = [];
  #clock: Clock;
  /** Task timeouts, on the clock they were started on. */
  #deadlines: Deadlines;
  #session: voice.AgentSession | undefined;
  #callScope = new AbortController();
  #callId: string | undefined;
  #counter = 0;
  #closed = false;

  constructor(options: TaskManagerOptions = {}) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#deadlines = new Deadlines(this.#clock);
    const flat = flatOptions(options);
    this.#limits = managerLimits(flat);
    this.#types = subagentRegistry(options);
    this.files = options.files ?? new MemoryBackend();
    this.#ownsStore = flat.store === undefined;
    this.store = flat.store ?? new MemoryDelegationStore({ now: () => this.#clock.now() });
    this.namespace = flat.namespace ?? crypto.randomUUID().slice(0, 8);
    const emit = this.#events.emit;
    this.#slots = new Slots(this.#limits.maxParallel, this.#limits.queueLimit);
    this.#delivery = new Delivery(
      {
        clock: () => this.#clock,
        othersRunning: () => this.hasRunning(),
        ...(this.#limits.resultLine ? { resultLine: this.#limits.resultLine } : {}),
      },
      this.#limits.coalesceMs,
      emit,
    );
    this.#records = new TaskRecords(
      this.store,
      {
        namespace: this.namespace,
        agentId: flat.agentId ?? 'voice-agent',
        callId: () => this.#callId,
      },
      emit,
    );
    const manager = this;
    this.#turns = {
      get clock() {
        return manager.#clock;
      },
      get callSignal() {
        return manager.#callScope.signal;
      },
      delivery: this.#delivery,
      options,
      limits: this.#limits,
      subagent: (name) => this.#types.get(name),
      create: (req, origin) => this.#create(req, origin),
      emit,
    };
    this.#execution = {
      get clock() {
        return manager.#clock;
      },
      host: this,
      options,
      limits: this.#limits,
      toolGuards: this.#toolGuards,
      get callId() {
        return manager.#callId;
      },
    };
  }

  /**
   * Wraps the tools of every headless sub-agent this manager runs, from its next run on: how
   * a deep agent's approval policy reaches its sub-agents. Returns a function that removes it.
   */
  guardSubAgentTools(guard: SubAgentToolGuard): () => void {
    if (!this.#toolGuards.includes(guard)) this.#toolGuards.push(guard);
    return () => {
      const at = this.#toolGuards.indexOf(guard);
      if (at >= 0) this.#toolGuards.splice(at, 1);
    };
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
    const channel = this.#delivery.channel;
    if (this.#session && channel && !channel.closed) {
      throw new TasklineError(
        'invalid_state',
        'This TaskManager already serves another call; create one TaskManager per call.',
      );
    }
    const call = callOf(session);
    this.#session = session;
    this.#callId = call.callId;
    if (!this.#options.clock && this.#clock !== call.clock) {
      this.#clock = call.clock;
      this.#deadlines = new Deadlines(call.clock);
    }
    this.#callScope = new AbortController();
    // Every waiting task call listens to the call's end.
    setMaxListeners(0, this.#callScope.signal);
    this.#delivery.open(session, this.#limits.replyInstructions, this.#limits.deliverAt);
    session.once(voice.AgentSessionEventTypes.Close, () => {
      void this.#onCallEnded(session);
    });
    return this;
  }

  async #onCallEnded(session: voice.AgentSession): Promise<void> {
    if (this.#session !== session) return;
    this.#callScope.abort(new TasklineError('session_closed', 'The call ended.'));
    this.#delivery.flushBatch();
    for (const task of this.#tasks.values()) {
      if (isFinalStatus(task.snap.status)) continue;
      this.#delivery.mute(task);
      if (!this.#options.keepRunningAfterCall || isVoiceSpecialist(task.spec)) {
        this.#stop(task, 'cancelled', new TasklineError('cancelled', 'The call ended.'));
      }
    }
    await this.#delivery.close();
  }

  // ------------------------------------------------------------------ host API
  /** Subscribes to task events; returns the function that unsubscribes. */
  subscribe(listener: (event: TaskEvent) => void): () => void {
    return this.#events.subscribe(listener);
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
      notify: options.notify ?? this.#delivery.channel !== undefined,
      ...(options.resultLine ? { resultLine: options.resultLine } : {}),
    });
    return snapshotOf(task);
  }

  /**
   * Takes over the work an earlier job of this call left behind when its worker died: asks
   * each sub-agent that can (`recover`: `remoteSubAgent`, whose delegations other processes
   * run) for the call's work still running, or finished but never told to the caller, and
   * runs each as a background task here — so its result is spoken once, in this job. Call it
   * after `attach` (the call's id names the work), when the room entry says the job resumes
   * a call (`setup.resumed`). Resolves the recovered tasks; work that cannot be taken (a
   * full queue) is logged and left.
   */
  async recover(options: { signal?: AbortSignal } = {}): Promise<TaskSnapshot[]> {
    if (this.#closed) throw new TasklineError('session_closed', 'This TaskManager is closed.');
    const callId = this.#callId;
    if (!this.#session || callId === undefined) {
      throw new TasklineError(
        'invalid_state',
        "Attach the TaskManager to the call (attach(session)) before recover(): the call's id names the work to recover.",
      );
    }
    return recoverWork(
      this.#types.values(),
      callId,
      options.signal ?? this.#callScope.signal,
      (req) => snapshotOf(this.#create(req)),
    );
  }

  /** One task, or undefined. */
  get(id: string): TaskSnapshot | undefined {
    const task = this.#tasks.get(id);
    return task ? snapshotOf(task) : undefined;
  }

  /** Tasks in creation order, optionally only some statuses or one parent's. */
  list(
    filter: { status?: TaskStatus | readonly TaskStatus[]; parentId?: string } = {},
  ): TaskSnapshot[] {
    return listTasks(this.#tasks.values(), filter);
  }

  /**
   * Resolves with the task's result when it ends. Bounded by the task's own timeout;
   * `timeoutMs` (on the clock) or `signal` give up sooner, leaving the task running.
   */
  wait(
    id: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<TaskResult> {
    return resultWithin(this.#must(id), this.#clock, options);
  }

  /** Cancels a queued or running task (and its nested tasks). False when already finished. */
  async cancel(id: string, reason = 'Cancelled by the host.'): Promise<boolean> {
    const task = this.#must(id);
    if (isFinalStatus(task.snap.status)) return false;
    this.#stop(task, 'cancelled', new TasklineError('cancelled', reason));
    await task.done;
    return true;
  }

  /**
   * Cancels everything still running, stops delivering, and waits for record writes — at
   * most 10 s on the clock: writes a store has still not confirmed by then are reported as
   * `store_error` events (code `timeout`) and the manager closes anyway.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#callScope.abort(new TasklineError('session_closed', 'The task manager closed.'));
    this.#delivery.flushBatch();
    const pending: Promise<TaskResult>[] = [];
    for (const task of this.#tasks.values()) {
      if (isFinalStatus(task.snap.status)) continue;
      this.#delivery.mute(task);
      this.#stop(task, 'cancelled', new TasklineError('cancelled', 'The task manager closed.'));
      pending.push(task.done);
    }
    await Promise.allSettled(pending);
    await this.#delivery.close();
    if (!(await this.#records.flushWithin(CLOSE_FLUSH_MS, this.#clock))) {
      const error = new TasklineError(
        'timeout',
        `The delegation store did not confirm a record write within ${seconds(CLOSE_FLUSH_MS)} s of closing; the record may be out of date.`,
      );
      for (const task of this.#tasks.values()) {
        if (task.persist !== undefined) this.#events.emit('store_error', task, error);
      }
    }
    this.#trace.close();
    if (this.#ownsStore) await this.store.close();
  }

  /** Waits until every record write issued so far has settled. */
  async flush(): Promise<void> {
    await this.#records.flush();
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
    const longest = Math.max(
      this.#limits.timeoutMs,
      ...[...this.#types.values()].map((t) => t.timeoutMs ?? 0),
    );
    return allSettled(
      () => this.#tasks.values(),
      this.#clock,
      options.timeoutMs ?? longest,
      options.signal,
    );
  }

  // ------------------------------------------------------------------ DelegationHost (tools)

  /** The sub-agent types offered at `depth` (voice specialists only to the voice agent). */
  subagentTypes(depth: number): SubAgentInfo[] {
    return describeTypes(this.#types, depth);
  }

  /** Runs one `task` tool call: the voice agent's (async, on the delivery channel) or a sub-agent's. */
  async runTaskTool(
    args: TaskToolArgs,
    call: { options: llm.ToolOptions<unknown>; parentId?: string; depth: number },
  ): Promise<unknown> {
    if (call.depth > 0) return runNestedTaskCall(this.#turns, args, call.depth, call.parentId);
    this.attach(call.options.ctx.session);
    return runOnChannel(this.#turns, args, call.options);
  }

  /** The `task_status` answer for one task or every task in scope; never waits. */
  statusText(taskId: string | undefined, scope: { parentId?: string }): string {
    const mine = [...this.#tasks.values()]
      .filter((t) => t.snap.parentId === scope.parentId)
      .map((t) => t.snap);
    return statusAnswer(mine, taskId, this.#clock.now());
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
    this.#delivery.waive(task);
    this.#stop(
      task,
      'cancelled',
      new TasklineError('cancelled', 'Cancelled at the caller’s request.'),
    );
    await task.done;
    return `Cancelled task ${taskId} (${task.snap.description}).`;
  }

  // ------------------------------------------------------------------ a task's life

  /** Checks, creates and starts (or queues) a task. */
  #create(req: CreateRequest, origin?: voice.RunContext<unknown>): TaskState {
    if (this.#closed) throw new TasklineError('session_closed', 'This TaskManager is closed.');
    const admitted = checkRequest(req, origin !== undefined, {
      types: this.#types,
      tasks: this.#tasks,
      maxDepth: this.#limits.maxDepth,
      options: this.#options,
    });
    const queued = this.#slots.mustQueue(req.depth);
    const { spec, voiceTask, description } = admitted;

    this.#counter += 1;
    const id = `t${this.#counter}`;
    const conversation =
      admitted.conversation ?? (voiceTask ? undefined : newConversation(`c${this.#counter}`, spec));
    if (conversation) conversation.busy = true;

    const now = this.#clock.now();
    const timeoutMs = spec.timeoutMs ?? this.#limits.timeoutMs;
    const task = newTask(id, req, {
      spec,
      description,
      model: admitted.model,
      conversation,
      resumedFrom: admitted.resumedFrom,
      now,
      timeoutMs,
      origin,
    });
    const parent = req.parentId ? this.#tasks.get(req.parentId) : undefined;
    // A nested task ends with its parent.
    if (parent) linkToParent(task, parent, (t, why) => this.#stop(t, 'cancelled', why));
    this.#tasks.set(id, task);
    task.timer = this.#deadlines.add(timeoutMs, () =>
      this.#stop(
        task,
        'timeout',
        new TasklineError('timeout', `The task did not finish within ${seconds(timeoutMs)} s.`),
      ),
    );
    if (queued) {
      this.#records.created(task, parent);
      this.#slots.enqueue(task);
      this.#events.emit('queued', task);
    } else {
      // Started at once: the record is created in progress (one write instead of two).
      this.#slots.begin(task, now);
      this.#records.created(task, parent);
      this.#events.emit('started', task);
      void this.#trace.run(task.snap.id, () => this.#execute(task));
    }
    return task;
  }

  /** Starts a queued task now that a slot is free. */
  #run(task: TaskState): void {
    this.#slots.begin(task, this.#clock.now());
    this.#records.started(task);
    this.#events.emit('started', task);
    void this.#trace.run(task.snap.id, () => this.#execute(task));
  }

  /** Runs the task's work and finishes it (plain promise handlers: this runs for every task). */
  #execute(task: TaskState): Promise<void> {
    return executeTask(task, this.#execution).then(
      (payload) => {
        if (!payload) return undefined;
        task.receipt = payload.delivered;
        return this.#finish(task, 'completed', payload);
      },
      (err: unknown) => {
        if (task.controller.signal.aborted) return; // cancel/timeout already finished it
        return this.#finish(task, 'failed', failurePayload(task, err, this.#limits.summaryChars));
      },
    );
  }

  /** Ends a task now (cancel or timeout) with what it produced so far. */
  #stop(task: TaskState, status: 'cancelled' | 'timeout', reason: TasklineError): void {
    if (task.finishing) return;
    this.#slots.drop(task);
    void this.#finish(task, status, stoppedPayload(task, reason, this.#limits.summaryChars));
    task.controller.abort(reason);
  }

  /**
   * Ends a task once: its result is filed (a filing failure only leaves the result without
   * its files), recorded, resolved, announced and delivered.
   */
  #finish(task: TaskState, status: FinalTaskStatus, payload: FinishPayload): Promise<void> {
    if (task.finishing) return Promise.resolve();
    task.finishing = true;
    task.timer?.cancel();
    this.#slots.end(task);
    task.snap.status = status;
    task.snap.endedAt = this.#clock.now();
    if (task.conversation) task.conversation.busy = false;
    const result = resultOf(task, status, payload);
    task.snap.result = result;
    // Free the slot before anything async, so a queued task starts at once.
    this.#slots.pump((next) => this.#run(next));

    const settle = () => {
      this.#records.finished(task);
      this.#delivery.settle(task);
      task.resolve(result);
      this.#events.emit('finished', task);
      this.#delivery.afterFinish(task);
      // Anything the task started (nested tasks) stops now; a finished run has nothing else.
      if (!task.controller.signal.aborted && (status !== 'completed' || task.children > 0)) {
        task.controller.abort(new TasklineError('cancelled', `Task ${task.snap.id} has ended.`));
      }
    };
    return fileResult(task, result, this.#parentFiles(task)).then(settle, settle);
  }

  /** The files a task's result lands in: its parent task's workspace, or the call's files. */
  #parentFiles(task: TaskState): FileBackend {
    if (!task.snap.parentId) return this.files;
    const parent = this.#tasks.get(task.snap.parentId)?.conversation;
    return parent ? workspaceOf(parent, this.#clock).files : this.files;
  }

  #must(id: string): TaskState {
    const task = this.#tasks.get(id);
    if (!task) throw new TasklineError('not_found', `There is no task "${id}".`, { id });
    return task;
  }
}
