import { TasklineError } from '../../core/errors.js';
import {
  assertMove,
  type DelegationPatch,
  type DelegationRecord,
  type DelegationState,
  epochSeconds,
  FINAL_STATES,
  isFinished,
  type StageStatus,
  type StageUpdate,
  stageOf,
  type UpdateOptions,
} from '../record.js';
import {
  checkDepth,
  checkEpoch,
  checkStageName,
  checkState,
  checkText,
  dict,
  isPlainObject,
  LIMITS,
  parseRecord,
} from '../validate.js';

/**
 * Validates a new record and returns a private copy (status map with a null prototype); every
 * store calls this first, so they all accept and return exactly the same records.
 */
export function normalizeRecord(input: unknown): DelegationRecord {
  return parseRecord(input);
}

/** A copy of a status map with a null prototype and `stage` set to `value`. */
function withStage(
  status: DelegationRecord['status'],
  stage: string,
  value: StageStatus,
): DelegationRecord['status'] {
  const out = dict<StageStatus>();
  for (const key of Object.keys(status)) out[key] = status[key]!;
  out[stage] = value;
  return out;
}

/**
 * Moves one stage of `record` forward (illegal moves throw `invalid_state`) and returns the new
 * record plus the state it left. A stage that does not exist yet is created. The deadline and
 * result are kept unless the update gives new ones; `time` defaults to `nowMs`.
 */
export function applyStage(
  record: DelegationRecord,
  stageName: string,
  update: StageUpdate,
  nowMs: number,
): { record: DelegationRecord; from?: DelegationState } {
  const stage = checkStageName(stageName);
  const state = checkState(update.state);
  update.precondition?.(record);
  const current = stageOf(record, stage);
  if (update.expect !== undefined && (current?.state ?? 'pending') !== update.expect) {
    throw new TasklineError(
      'invalid_state',
      `Delegation ${record.delegation_id}: stage "${stage}" is ${current?.state ?? 'pending'}, not ${update.expect}.`,
      { reason: 'changed', stage },
    );
  }
  if (current) assertMove(record.delegation_id, stage, current.state, state);
  if (state === 'expired' && isFinished(record)) {
    throw new TasklineError(
      'invalid_state',
      `Delegation ${record.delegation_id} already has its result; stage "${stage}" no longer expires.`,
      { reason: 'finished' },
    );
  }
  const time =
    update.time === undefined
      ? epochSeconds(nowMs)
      : checkEpoch(update.time, `status.${stage}.time`);
  const next: StageStatus = { state, time };
  const deadline =
    update.deadline !== undefined
      ? checkEpoch(update.deadline, `status.${stage}.deadline`)
      : current?.deadline;
  if (deadline !== undefined) next.deadline = deadline;
  if (update.delegation_result !== undefined) {
    checkDepth(update.delegation_result, 'delegation_result');
    next.delegation_result = update.delegation_result;
  } else if (current?.delegation_result !== undefined) {
    next.delegation_result = current.delegation_result;
  }
  return {
    record: { ...record, status: withStage(record.status, stage, next) },
    ...(current ? { from: current.state } : {}),
  };
}

const TEXT_FIELDS = {
  task_id: LIMITS.id,
  sub_task_id: LIMITS.id,
  delegation_type: LIMITS.type,
  target_subject_id: LIMITS.id,
  sender_subject_id: LIMITS.id,
} as const;

const DATA_PREFIX = 'sub_task_data.';

/** True when two JSON values are equal, whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => sameJson(x, b[i]))
    );
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b, k) &&
        sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** Sets `value` at a dotted path inside a copy of `data`, creating objects on the way. */
function setPath(
  data: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const parts = path.split('.');
  if (parts.some((p) => p === '' || p === '__proto__')) {
    throw new TasklineError(
      'invalid_argument',
      `"${DATA_PREFIX}${path}" is not a valid path; use names separated by single dots (no __proto__).`,
    );
  }
  const root: Record<string, unknown> = { ...data };
  let node = root;
  for (const [i, part] of parts.entries()) {
    if (i === parts.length - 1) {
      Object.defineProperty(node, part, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      break;
    }
    const existing = Object.hasOwn(node, part) ? node[part] : undefined;
    if (existing !== undefined && !isPlainObject(existing)) {
      throw new TasklineError(
        'invalid_argument',
        `Cannot set "${DATA_PREFIX}${path}": "${parts.slice(0, i + 1).join('.')}" is not an object.`,
      );
    }
    const child: Record<string, unknown> = existing ? { ...existing } : {};
    Object.defineProperty(node, part, {
      value: child,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    node = child;
  }
  return root;
}

/**
 * Applies an update: any record field but `delegation_id` (unless unchanged) and `status`
 * (stages move through `setStage`), plus `sub_task_data.<path>` keys that set one nested value.
 * Every problem is an `invalid_argument` error that names the field.
 */
export function applyPatch(
  record: DelegationRecord,
  patch: DelegationPatch,
  options: UpdateOptions = {},
): DelegationRecord {
  if (!isPlainObject(patch)) {
    throw new TasklineError(
      'invalid_argument',
      'An update is a JSON object of the fields to change.',
    );
  }
  const keys = Object.keys(patch);
  if (keys.length === 0) {
    throw new TasklineError(
      'invalid_argument',
      'Nothing to update: send the fields to change, e.g. {"workflow_level":2,"sub_task_data":{"key":"value"}}.',
    );
  }
  options.precondition?.(record);
  const next: DelegationRecord = { ...record };
  let data = record.sub_task_data;
  for (const key of keys) {
    const value = patch[key];
    if (Object.hasOwn(TEXT_FIELDS, key)) {
      const field = key as keyof typeof TEXT_FIELDS;
      next[field] = checkText(value, field, TEXT_FIELDS[field]);
    } else if (key === 'workflow_level') {
      if (
        typeof value !== 'number' ||
        !Number.isInteger(value) ||
        value < 0 ||
        value > LIMITS.level
      ) {
        throw new TasklineError(
          'invalid_argument',
          `workflow_level must be an integer from 0 to ${LIMITS.level}; got ${JSON.stringify(value)}.`,
        );
      }
      next.workflow_level = value;
    } else if (key === 'sub_task_data') {
      if (!isPlainObject(value)) {
        throw new TasklineError('invalid_argument', 'sub_task_data must be a JSON object.');
      }
      data = value;
    } else if (key.startsWith(DATA_PREFIX)) {
    } else if (key === 'delegation_id') {
      if (value !== record.delegation_id) {
        throw new TasklineError(
          'invalid_argument',
          'delegation_id cannot change; create a new delegation instead.',
        );
      }
    } else if (key === 'status') {
      // A client that sends the whole record back may include the status map unchanged.
      if (sameJson(value, record.status)) continue;
      throw new TasklineError(
        'invalid_argument',
        'status cannot be changed by an update; set each stage with PUT /delegations/<id>/status/<stage> (or submit_result).',
      );
    } else {
      throw new TasklineError(
        'invalid_argument',
        `Unknown field ${JSON.stringify(key)}; an update may change task_id, sub_task_id, workflow_level, delegation_type, target_subject_id, sender_subject_id, sub_task_data or sub_task_data.<path>.`,
      );
    }
  }
  for (const key of keys) {
    if (key.startsWith(DATA_PREFIX))
      data = setPath(data, key.slice(DATA_PREFIX.length), patch[key]);
  }
  checkDepth(data, 'sub_task_data');
  next.sub_task_data = data;
  return next;
}

/** The stages whose deadline a `setStage` writes: the stage, if the update gives a deadline. */
export function deadlineWritten(stage: string, update: StageUpdate): string[] {
  return update.deadline !== undefined ? [stage] : [];
}

/**
 * The open stages whose deadline had already passed when it was written (`written`: the stages
 * whose deadline this write set, or every stage of a new record; the others keep their
 * `previous` verdict). Such a deadline — over before it was recorded (history being imported, a client's
 * example payload, a skewed clock) — is kept as written and not enforced: the expiry checker
 * never expires the stage and a result for it is not refused as late.
 */
export function staleStages(
  record: DelegationRecord,
  written: readonly string[] | 'all',
  nowMs: number,
  previous: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const name of Object.keys(record.status)) {
    const s = record.status[name]!;
    if (FINAL_STATES.has(s.state) || s.deadline === undefined) continue;
    const rewritten = written === 'all' || written.includes(name);
    if (rewritten ? s.deadline * 1000 <= nowMs : previous.includes(name)) out.push(name);
  }
  return out;
}

/**
 * The earliest deadline among stages that are neither final nor stale (see
 * {@link staleStages}), or null (also for a finished record): stored in an indexed column so
 * `overdue()` is one range scan.
 */
export function openDeadline(
  record: DelegationRecord,
  stale: readonly string[] = [],
): number | null {
  if (isFinished(record)) return null;
  let min: number | null = null;
  for (const name of Object.keys(record.status)) {
    const s = record.status[name]!;
    if (s.deadline === undefined || FINAL_STATES.has(s.state) || stale.includes(name)) continue;
    if (min === null || s.deadline < min) min = s.deadline;
  }
  return min;
}

/** The stages of `record` that are due at `nowMs`: open, not stale, deadline passed. */
export function dueStages(
  record: DelegationRecord,
  stale: readonly string[],
  nowMs: number,
): string[] {
  if (isFinished(record)) return [];
  return Object.keys(record.status).filter((name) => {
    const s = record.status[name]!;
    return (
      s.deadline !== undefined &&
      s.deadline * 1000 < nowMs &&
      !FINAL_STATES.has(s.state) &&
      !stale.includes(name)
    );
  });
}

/** The largest stored deadline (epoch seconds) that has passed at `nowMs`. */
export function overdueBound(nowMs: number): number {
  return Math.floor((nowMs - 1) / 1000);
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

/** Page size bounds shared by every store and the API. */
export const PAGE = { default: 500, max: 500 } as const;

/** Clamps a requested page size into [1, PAGE.max]. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return PAGE.default;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TasklineError('invalid_argument', `limit must be a positive integer; got ${limit}.`);
  }
  return Math.min(limit, PAGE.max);
}

/** Error a SQL store throws when it finds tables from an older taskline. */
export function oldTablesError(table: string): TasklineError {
  return new TasklineError(
    'invalid_state',
    `Table ${table} was created by an older taskline (ISO times; no incarnation or stale_stages column). Use a new table prefix, or export the records and drop the tables.`,
    { table },
  );
}
