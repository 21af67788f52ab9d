import { z } from 'zod/v4';
import { TasklineError } from '../../core/errors.js';
import {
  assertMove,
  DelegationRecord,
  DelegationState,
  FINAL_STATES,
  type StageStatus,
} from '../record.js';

const IsoTime = z.iso.datetime({ offset: true });

/**
 * Parses an ISO-8601 time and returns its canonical UTC form (`toISOString`), so times stored
 * as text compare correctly in SQL; anything else is an `invalid_argument` error.
 */
export function canonicalTime(value: unknown, what: string): string {
  // Fast path: already canonical (what every taskline writer produces).
  if (typeof value === 'string' && value.length === 24 && value.endsWith('Z')) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms) && new Date(ms).toISOString() === value) return value;
  }
  if (typeof value === 'string' && IsoTime.safeParse(value).success) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return new Date(ms).toISOString();
  }
  throw new TasklineError(
    'invalid_argument',
    `${what} must be an ISO-8601 time such as "2026-01-05T09:00:00.000Z"; got ${JSON.stringify(value)}.`,
  );
}

/** Checks a stage name passed to `setStage` (same bounds as the record schema). */
export function checkStageName(stage: unknown): string {
  if (typeof stage !== 'string' || stage.length < 1 || stage.length > 100) {
    throw new TasklineError(
      'invalid_argument',
      `A stage name is 1 to 100 characters (e.g. "execution"); got ${JSON.stringify(stage)}.`,
    );
  }
  return stage;
}

const STATES: ReadonlySet<unknown> = new Set(DelegationState.options);

function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function isText(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= max;
}

/**
 * The common case of {@link DelegationRecord} checked by hand (about 10× faster than zod on the
 * write path): strictly narrower than the schema, so anything it does not accept goes to zod,
 * which accepts or explains. Unknown keys are dropped, as zod does.
 */
function fastRecord(input: unknown): DelegationRecord | undefined {
  if (!isPlain(input)) return undefined;
  const r = input;
  if (
    !isText(r.delegation_id, 200) ||
    !isText(r.task_id, 200) ||
    !isText(r.sub_task_id, 200) ||
    !isText(r.delegation_type, 100) ||
    !isText(r.sender_subject_id, 200) ||
    !isText(r.target_subject_id, 200)
  ) {
    return undefined;
  }
  const level = r.workflow_level;
  if (typeof level !== 'number' || !Number.isInteger(level) || level < 0 || level > 100) {
    return undefined;
  }
  const data = r.sub_task_data === undefined ? {} : r.sub_task_data;
  if (!isPlain(data) || !isPlain(r.status)) return undefined;
  const status: Record<string, StageStatus> = {};
  for (const [stage, st] of Object.entries(r.status)) {
    if (stage.length < 1 || stage.length > 100 || !isPlain(st)) return undefined;
    if (!STATES.has(st.state) || typeof st.time !== 'string') return undefined;
    if (st.deadline !== undefined && typeof st.deadline !== 'string') return undefined;
    const out: StageStatus = { state: st.state as DelegationState, time: st.time };
    if (st.deadline !== undefined) out.deadline = st.deadline;
    if (st.delegation_result !== undefined) out.delegation_result = st.delegation_result;
    status[stage] = out;
  }
  return {
    delegation_id: r.delegation_id,
    task_id: r.task_id,
    sub_task_id: r.sub_task_id,
    workflow_level: level,
    delegation_type: r.delegation_type,
    sender_subject_id: r.sender_subject_id,
    target_subject_id: r.target_subject_id,
    status,
    sub_task_data: data,
  };
}

/**
 * Validates a new record against the zod schema (a hand-written fast path first) and
 * canonicalises its times; every store calls this first so they all accept and return exactly
 * the same records.
 */
export function normalizeRecord(input: unknown): DelegationRecord {
  let record = fastRecord(input);
  if (!record) {
    const parsed = DelegationRecord.safeParse(input);
    if (!parsed.success) {
      throw new TasklineError(
        'invalid_argument',
        `Invalid delegation record: ${z.prettifyError(parsed.error)}`,
        { issues: parsed.error.issues },
      );
    }
    record = parsed.data;
  }
  const status: Record<string, StageStatus> = {};
  for (const [stage, s] of Object.entries(record.status)) {
    const next: StageStatus = {
      state: s.state,
      time: canonicalTime(s.time, `status.${stage}.time`),
    };
    if (s.deadline !== undefined)
      next.deadline = canonicalTime(s.deadline, `status.${stage}.deadline`);
    if (s.delegation_result !== undefined) next.delegation_result = s.delegation_result;
    status[stage] = next;
  }
  return { ...record, status };
}

/** The update `setStage` takes. */
export interface StageUpdate {
  state: DelegationState;
  deadline?: string;
  delegation_result?: unknown;
}

/**
 * Moves one stage of `record` forward (illegal moves throw `invalid_state`) and returns the new
 * record plus the state it left. A stage that does not exist yet is created. The deadline and
 * result are kept unless the update gives new ones.
 */
export function applyStage(
  record: DelegationRecord,
  stageName: string,
  update: StageUpdate,
  now: string,
): { record: DelegationRecord; from?: DelegationState } {
  const stage = checkStageName(stageName);
  const state = DelegationState.safeParse(update.state);
  if (!state.success) {
    throw new TasklineError(
      'invalid_argument',
      `Unknown state ${JSON.stringify(update.state)}; use pending, in_progress, done, failed, expired or cancelled.`,
    );
  }
  const current = record.status[stage];
  if (current) assertMove(record.delegation_id, stage, current.state, state.data);
  const next: StageStatus = { state: state.data, time: now };
  const deadline =
    update.deadline !== undefined
      ? canonicalTime(update.deadline, `status.${stage}.deadline`)
      : current?.deadline;
  if (deadline !== undefined) next.deadline = deadline;
  const result =
    update.delegation_result !== undefined ? update.delegation_result : current?.delegation_result;
  if (result !== undefined) next.delegation_result = result;
  return {
    record: { ...record, status: { ...record.status, [stage]: next } },
    ...(current ? { from: current.state } : {}),
  };
}

/** Checks an `update()` patch: only `sub_task_data` and `target_subject_id` may change. */
export function applyPatch(
  record: DelegationRecord,
  patch: { sub_task_data?: unknown; target_subject_id?: unknown },
): DelegationRecord {
  const Patch = DelegationRecord.pick({ sub_task_data: true, target_subject_id: true })
    .partial()
    .strict();
  const parsed = Patch.safeParse(patch);
  if (!parsed.success) {
    throw new TasklineError(
      'invalid_argument',
      `Invalid update: ${z.prettifyError(parsed.error)} (only sub_task_data and target_subject_id can change).`,
    );
  }
  return {
    ...record,
    ...(parsed.data.sub_task_data !== undefined
      ? { sub_task_data: parsed.data.sub_task_data }
      : {}),
    ...(parsed.data.target_subject_id !== undefined
      ? { target_subject_id: parsed.data.target_subject_id }
      : {}),
  };
}

/**
 * The earliest deadline among stages that are not final, or null: stored in an indexed column
 * so `overdue()` is one range scan.
 */
export function openDeadline(record: DelegationRecord): string | null {
  let min: string | null = null;
  for (const s of Object.values(record.status)) {
    if (
      s.deadline !== undefined &&
      !FINAL_STATES.has(s.state) &&
      (min === null || s.deadline < min)
    ) {
      min = s.deadline;
    }
  }
  return min;
}

/** `JSON.stringify` that turns unserialisable input (BigInt, cycles) into `invalid_argument`. */
export function toJson(value: unknown, what: string): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new TasklineError(
      'invalid_argument',
      `${what} must be plain JSON data: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The `invalid_state` error a store throws for a duplicate delegation id. */
export function existsError(id: string): TasklineError {
  return new TasklineError(
    'invalid_state',
    `Delegation ${id} already exists; use a new delegation_id or update the existing record.`,
    { reason: 'exists', id },
  );
}

/** The `not_found` error a store throws for an unknown delegation id. */
export function notFoundError(id: string): TasklineError {
  return new TasklineError('not_found', `Delegation ${id} does not exist.`, { id });
}

/** Validates a table-name prefix (letters, digits, `_`) so it can be spliced into SQL. */
export function checkPrefix(prefix: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,40}$/.test(prefix)) {
    throw new TasklineError(
      'invalid_argument',
      `Table prefix ${JSON.stringify(prefix)} is not allowed; use up to 41 letters, digits and "_".`,
    );
  }
  return prefix;
}

/** Page size bounds shared by every store and the API. */
export const PAGE = { default: 50, max: 500 } as const;

/** Clamps a requested page size into [1, PAGE.max]. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return PAGE.default;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TasklineError('invalid_argument', `limit must be a positive integer; got ${limit}.`);
  }
  return Math.min(limit, PAGE.max);
}
