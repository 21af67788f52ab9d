/**
 * What a task leaves behind: its durable record in the DelegationStore (written in order
 * without waiting for the store, failures reported as events) and its result file plus
 * merged child files in the parent's workspace.
 */
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { FileBackend } from '../../tools/files/backend.js';
import type { DelegationStore } from '../record.js';
import { isVoiceSpecialist } from '../subagent.js';
import { EXECUTION_STAGE, initialRecord, recordResult, recordState } from '../task-record.js';
import type { TaskResult } from '../types.js';
import { mergeWorkspace, writeResult } from '../workspace.js';
import type { Emit } from './events.js';
import type { TaskState } from './state.js';
import { resultMarkdown } from './wording.js';

/** Who a manager's records name as the parties of a task. */
export interface RecordIdentity {
  /** Prefix of record ids, unique per manager. */
  namespace: string;
  /** The voice agent's identity (default `voice-agent`). */
  agentId: string;
  /** The call's id once attached: the parent record of top-level tasks. */
  callId(): string | undefined;
}

/** Writes each task's record through its life; one ordered chain of writes per task. */
export class TaskRecords {
  /** The last write of each task whose writes are not all settled. */
  readonly #tails = new Set<Promise<void>>();

  constructor(
    readonly store: DelegationStore,
    private readonly who: RecordIdentity,
    private readonly emit: Emit,
  ) {}

  /** The record id of a task (`<namespace>:<task id>`). */
  recordId(task: TaskState): string {
    task.recordId ??= `${this.who.namespace}:${task.snap.id}`;
    return task.recordId;
  }

  /** Creates the task's record (queued, or already in progress when it started at once). */
  created(task: TaskState, parent: TaskState | undefined): void {
    const parties = {
      delegationId: this.recordId(task),
      parentRecordId: parent ? this.recordId(parent) : (this.who.callId() ?? this.who.namespace),
      sender: parent ? `subagent:${parent.snap.subagentType}` : this.who.agentId,
      type: isVoiceSpecialist(task.spec) ? 'voice_specialist' : 'subagent',
    } as const;
    // initialRecord only reads the snapshot: no copy needed.
    this.#write(task, (store) => store.create(initialRecord(task.snap, parties)));
  }

  /** A queued task got its slot. */
  started(task: TaskState): void {
    this.#write(task, (store) =>
      store.setStage(this.recordId(task), EXECUTION_STAGE, { state: 'in_progress' }),
    );
  }

  /** The task ended: its final state and result. */
  finished(task: TaskState): void {
    this.#write(task, (store) =>
      store.setStage(this.recordId(task), EXECUTION_STAGE, {
        state: recordState(task.snap.status),
        delegation_result: recordResult(task.snap),
      }),
    );
  }

  /** Waits until every write issued so far has settled. */
  async flush(): Promise<void> {
    while (this.#tails.size > 0) await Promise.allSettled([...this.#tails]);
  }

  /**
   * Waits for the writes issued so far for at most `ms` on `clock`; true when they all
   * settled, false when some were still pending (a store that stopped answering).
   */
  async flushWithin(ms: number, clock: Clock): Promise<boolean> {
    let timer: TimerHandle | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = clock.setTimer(ms, () => resolve(false));
    });
    try {
      return await Promise.race([this.flush().then(() => true as const), expired]);
    } finally {
      timer?.cancel();
    }
  }

  /**
   * Runs one write after the task's earlier ones (at once when none is unsettled); a failure
   * becomes a `store_error` event. Only each task's last write is tracked (the chain settles
   * in order). This runs for every task, with promise hooks often active: a write issued when
   * none is pending starts at once and adds one promise (two when it waits behind another).
   */
  #write(task: TaskState, op: (store: DelegationStore) => Promise<unknown>): void {
    const before = task.persist;
    const run = (): Promise<unknown> => op(this.store);
    const started = before === undefined ? invoke(run) : before.then(run);
    const next: Promise<void> = started.then(
      () => this.#settled(task, next),
      (error: unknown) => {
        this.#settled(task, next);
        this.emit('store_error', task, error);
      },
    );
    if (before !== undefined) this.#tails.delete(before);
    this.#tails.add(next);
    task.persist = next;
  }

  #settled(task: TaskState, write: Promise<void>): void {
    if (task.persist !== write) return;
    this.#tails.delete(write);
    task.persist = undefined;
  }
}

/**
 * Calls `run` now, always giving a promise: a synchronous throw (a store that is not async)
 * becomes a rejection, a plain return value a resolved promise.
 */
function invoke(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Puts a finished task's work where its parent finds it: the sub-agent's files merged under
 * `/tasks/<id>/` and the full result in `/tasks/<id>/result.md`. Fills `result.files` and
 * `result.resultPath`.
 */
export function fileResult(
  task: TaskState,
  result: TaskResult,
  parentFiles: FileBackend,
): Promise<void> {
  const write = () =>
    writeResult(parentFiles, task.snap.id, resultMarkdown(task.snap, result)).then((path) => {
      if (path) result.resultPath = path;
    });
  const workspace = task.conversation?.workspace;
  if (!workspace) return write();
  // A workspace that cannot be merged leaves the result without files, not without result.md.
  return mergeWorkspace(workspace, parentFiles, task.snap.id)
    .then(
      (files) => {
        result.files = files;
      },
      () => undefined,
    )
    .then(write);
}
