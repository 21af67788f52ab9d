/**
 * The delegation record as the published wire contract defines it: field names, integer
 * epoch-second times, and a status map from stage name to `{ state, time, deadline?,
 * delegation_result? }`. Everything taskline adds (versions, outbox, incarnations) lives beside
 * the record, never in it, so a record read from any store is exactly what a contract client
 * sends and expects.
 */
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';

/** The lifecycle of one stage of a delegation; states only move forward. */
export const DelegationState = z.enum([
  'pending',
  'in_progress',
  'done',
  'failed',
  'expired',
  'cancelled',
]);
/** A delegation stage's state. */
export type DelegationState = z.infer<typeof DelegationState>;

/** States a stage can never leave. */
export const FINAL_STATES: ReadonlySet<DelegationState> = new Set([
  'done',
  'failed',
  'expired',
  'cancelled',
]);

/**
 * The status key the contract's `submit_result` route writes (`status.delegation_result`): a
 * record whose result stage is final is finished, whatever its other stages say.
 */
export const RESULT_STAGE = 'delegation_result';

const NEXT: Readonly<Record<DelegationState, readonly DelegationState[]>> = {
  pending: ['pending', 'in_progress', 'done', 'failed', 'expired', 'cancelled'],
  in_progress: ['in_progress', 'done', 'failed', 'expired', 'cancelled'],
  done: [],
  failed: [],
  expired: [],
  cancelled: [],
};

/**
 * True when a stage may move from `from` to `to`: forward, or to the same open state again
 * (a new time or deadline for a stage still pending or in progress).
 */
export function canMove(from: DelegationState, to: DelegationState): boolean {
  return NEXT[from].includes(to);
}

/** Throws `invalid_state` with a readable message for an illegal move. */
export function assertMove(
  id: string,
  stage: string,
  from: DelegationState,
  to: DelegationState,
): void {
  if (!canMove(from, to)) {
    throw new TasklineError(
      'invalid_state',
      `Delegation ${id}: stage "${stage}" cannot move from ${from} to ${to} (states only move forward: pending → in_progress → done | failed | expired | cancelled).`,
      { id, stage, from, to },
    );
  }
}

/** One stage's status: its state, when it got there, its deadline and its result. */
export interface StageStatus {
  state: DelegationState;
  /** When the stage got its state, integer seconds since the epoch. */
  time: number;
  /** Integer seconds since the epoch; an expiry checker marks the stage `expired` after it. */
  deadline?: number;
  /** The result: a string in the contract; any JSON value is a taskline addition. */
  delegation_result?: unknown;
}

/**
 * Status by stage name. At runtime a null-prototype object, so any stage name — including
 * `__proto__`, `constructor` or `toString` — is an ordinary key; read it with {@link stageOf}.
 */
export type StatusMap = Record<string, StageStatus>;

/** A durable delegation: who asked whom to do what, and where every stage stands. */
export interface DelegationRecord {
  delegation_id: string;
  task_id: string;
  sub_task_id: string;
  workflow_level: number;
  /** The kind of delegation, e.g. "manual" or "system". */
  delegation_type: string;
  /** The agent (or pool of workers) that does the work. */
  target_subject_id: string;
  /** The agent that asked for it. */
  sender_subject_id: string;
  status: StatusMap;
  /** Anything the target needs to do the work (a JSON object). */
  sub_task_data: Record<string, unknown>;
}

/** The stage called `name`, if the record has one (own keys only, never the prototype). */
export function stageOf(
  record: Pick<DelegationRecord, 'status'>,
  name: string,
): StageStatus | undefined {
  return Object.hasOwn(record.status, name) ? record.status[name] : undefined;
}

/** True once the record's result stage ({@link RESULT_STAGE}) is final. */
export function isFinished(record: Pick<DelegationRecord, 'status'>): boolean {
  const result = stageOf(record, RESULT_STAGE);
  return result !== undefined && FINAL_STATES.has(result.state);
}

/** Integer epoch seconds for a clock time in ms (rounded down: "when it happened"). */
export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** Integer epoch seconds for a deadline in ms (rounded up, so nothing expires early). */
export function deadlineSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/**
 * A Mongo-style filter: `{"target_subject_id":"agentB"}`, `{"workflow_level":{"$gte":1}}`,
 * `{"sub_task_data.key":"value"}`, `{"$or":[…]}`. Validated by the stores against an allow-list.
 */
export type DelegationFilter = Record<string, unknown>;

/** A page of query results. */
export interface DelegationPage {
  items: DelegationRecord[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  next?: string;
}

/** A record with stages past their deadline, as `overdue()` finds it. */
export interface OverdueRecord {
  record: DelegationRecord;
  /** The open stages whose deadline has passed. */
  stages: string[];
}

/** The update `setStage` takes. */
export interface StageUpdate {
  state: DelegationState;
  /** Integer epoch seconds; default: now on the store's clock. */
  time?: number;
  /** Integer epoch seconds; kept from before when absent. */
  deadline?: number;
  delegation_result?: unknown;
  /**
   * Only move if the stage is in this state now (a missing stage counts as `pending`); otherwise
   * `invalid_state` with reason `changed`. Lets a worker claim a stage atomically.
   */
  expect?: DelegationState;
  /**
   * Called with the record as it is inside the write, before anything changes; throwing refuses
   * the write. Lets a caller decide on the record it actually changes (who may move which stage,
   * `If-Match`), with no window between the check and the write.
   */
  precondition?: (current: DelegationRecord) => void;
}

/** Options of {@link DelegationStore.update}. */
export interface UpdateOptions {
  /** As {@link StageUpdate.precondition}: checked on the record inside the write. */
  precondition?: (current: DelegationRecord) => void;
}

/**
 * The fields `update()` may change: any record field but the id and the status map (stages
 * move through `setStage`). Keys `sub_task_data.<path>` set one nested value, as Mongo's `$set`.
 */
export type DelegationPatch = Partial<
  Pick<
    DelegationRecord,
    | 'task_id'
    | 'sub_task_id'
    | 'workflow_level'
    | 'delegation_type'
    | 'target_subject_id'
    | 'sender_subject_id'
    | 'sub_task_data'
  >
> &
  Record<string, unknown>;

/**
 * Where delegation records live. In-memory for a single process; SQLite (embedded
 * default) and Postgres for durability. Every write is atomic per record, and a record
 * and its outbox event are written in one transaction where the store supports it.
 */
export interface DelegationStore {
  /** Inserts a new record; `invalid_state` (reason `exists`) on a duplicate id. */
  create(record: DelegationRecord): Promise<DelegationRecord>;
  get(id: string): Promise<DelegationRecord | undefined>;
  /** Moves one stage forward, creating it if new (illegal moves throw); returns the record. */
  setStage(id: string, stage: string, update: StageUpdate): Promise<DelegationRecord>;
  /** Changes record fields (see {@link DelegationPatch}); returns the updated record. */
  update(id: string, patch: DelegationPatch, options?: UpdateOptions): Promise<DelegationRecord>;
  delete(id: string): Promise<boolean>;
  query(
    filter: DelegationFilter,
    page?: { limit?: number; cursor?: string },
  ): Promise<DelegationPage>;
  /**
   * Unfinished records with an open stage whose deadline passed before `nowMs`, each with the
   * stages that are due (a stage written with a deadline already past is never due).
   */
  overdue(nowMs: number, limit?: number): Promise<OverdueRecord[]>;
  close(): Promise<void>;
}
