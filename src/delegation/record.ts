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

const NEXT: Record<DelegationState, readonly DelegationState[]> = {
  pending: ['in_progress', 'done', 'failed', 'expired', 'cancelled'],
  in_progress: ['done', 'failed', 'expired', 'cancelled'],
  done: [],
  failed: [],
  expired: [],
  cancelled: [],
};

/** True when a stage may move from `from` to `to`. */
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
export const StageStatus = z.object({
  state: DelegationState,
  /** ISO-8601 time of the last state change. */
  time: z.string(),
  /** ISO-8601 deadline; an expiry checker marks the stage `expired` after it. */
  deadline: z.string().optional(),
  delegation_result: z.unknown().optional(),
});
/** One stage's status. */
export type StageStatus = z.infer<typeof StageStatus>;

/**
 * A durable delegation: who asked whom to do what, and where every stage stands. Field
 * names are the wire format of the HTTP API and the event bus.
 */
export const DelegationRecord = z.object({
  delegation_id: z.string().min(1).max(200),
  task_id: z.string().min(1).max(200),
  sub_task_id: z.string().min(1).max(200),
  workflow_level: z.number().int().min(0).max(100),
  delegation_type: z.string().min(1).max(100),
  sender_subject_id: z.string().min(1).max(200),
  target_subject_id: z.string().min(1).max(200),
  /** Status by stage name (e.g. "execution"). */
  status: z.record(z.string().min(1).max(100), StageStatus),
  sub_task_data: z.record(z.string(), z.unknown()).default({}),
});
/** A durable delegation record. */
export type DelegationRecord = z.infer<typeof DelegationRecord>;

/** Equality, `$in`, `$gt`/`$lt` on times, `$and`/`$or`: the only query operators accepted. */
export type DelegationFilter =
  | { $and: DelegationFilter[] }
  | { $or: DelegationFilter[] }
  | {
      [field: string]:
        | string
        | number
        | { $in: Array<string | number> }
        | { $gt?: string; $lt?: string };
    };

/** A page of query results. */
export interface DelegationPage {
  items: DelegationRecord[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  next?: string;
}

/**
 * Where delegation records live. In-memory for a single process; SQLite (embedded
 * default) and Postgres for durability. Every write is atomic per record, and a record
 * and its outbox event are written in one transaction where the store supports it.
 */
export interface DelegationStore {
  /** Inserts a new record; `exists` error (TasklineError invalid_state) on a duplicate id. */
  create(record: DelegationRecord): Promise<DelegationRecord>;
  get(id: string): Promise<DelegationRecord | undefined>;
  /** Moves one stage forward (illegal moves throw); returns the updated record. */
  setStage(
    id: string,
    stage: string,
    update: { state: DelegationState; deadline?: string; delegation_result?: unknown },
  ): Promise<DelegationRecord>;
  /** Replaces the mutable fields (sub_task_data, target) of a record. */
  update(
    id: string,
    patch: Partial<Pick<DelegationRecord, 'sub_task_data' | 'target_subject_id'>>,
  ): Promise<DelegationRecord>;
  delete(id: string): Promise<boolean>;
  query(
    filter: DelegationFilter,
    page?: { limit?: number; cursor?: string },
  ): Promise<DelegationPage>;
  /** Records with a non-final stage whose deadline is before `now` (ISO). */
  overdue(now: string, limit?: number): Promise<DelegationRecord[]>;
  close(): Promise<void>;
}
