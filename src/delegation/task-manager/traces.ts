/**
 * What a task leaves behind: its durable record in the DelegationStore (written in order,
 * off the hot path, failures reported as events) and its result file plus merged child
 * files in the parent's workspace.
 */
import type { FileBackend } from '../../tools/files/backend.js';
import type { DelegationStore } from '../record.js';
import { EXECUTION_STAGE, initialRecord, recordResult, recordState } from '../records.js';
import { isVoiceSpecialist } from '../subagent.js';
import type { TaskEvent, TaskResult } from '../types.js';
import { mergeWorkspace, writeResult } from '../workspace.js';
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
    private readonly emit: (make: () => TaskEvent) => void,
  ) {}

  /** The record id of a task (`<namespace>:<task id>`). */
  recordId(task: TaskState): string {
    return `${this.who.namespace}:${task.snap.id}`;
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
   * Queues one write after the task's earlier ones; a failure becomes a `store_error` event.
   * Only each task's last write is tracked (the chain settles in order), and the chain adds
   * two promises per write: this runs for every task, with promise hooks often active.
   */
  #write(task: TaskState, op: (store: DelegationStore) => Promise<unknown>): void {
    const next: Promise<void> = task.persist
      .then(() => op(this.store))
      .then(
        () => this.#settled(task, next),
        (error: unknown) => {
          this.#settled(task, next);
          this.emit(() => ({ type: 'store_error', taskId: task.snap.id, error }));
        },
      );
    this.#tails.delete(task.persist);
    this.#tails.add(next);
    task.persist = next;
  }

  #settled(task: TaskState, write: Promise<void>): void {
    if (task.persist === write) this.#tails.delete(write);
  }
}

/**
 * Puts a finished task's work where its parent finds it: the sub-agent's files merged under
 * `/tasks/<id>/` and the full result in `/tasks/<id>/result.md`. Fills `result.files` and
 * `result.resultPath`.
 */
export async function fileResult(
  task: TaskState,
  result: TaskResult,
  parentFiles: FileBackend,
): Promise<void> {
  if (task.conversation?.workspace) {
    result.files = await mergeWorkspace(task.conversation.workspace, parentFiles, task.snap.id);
  }
  const path = await writeResult(parentFiles, task.snap.id, resultMarkdown(task.snap, result));
  if (path) result.resultPath = path;
}
