/**
 * Hand-written checks of the wire contract's record shape, shared by every store, the HTTP API
 * and the bus. Hand-written rather than zod because stage names are arbitrary keys (zod's
 * records drop `__proto__`), and because every problem gets a message that says what to send.
 */
import { TasklineError } from '../core/errors.js';
import {
  type DelegationRecord,
  DelegationState,
  type StageStatus,
  type StatusMap,
} from './record.js';

/** Deepest JSON nesting accepted anywhere in a record or a request body. */
export const MAX_JSON_DEPTH = 64;

/** Largest epoch-second time accepted (9999-12-31T23:59:59Z). */
const MAX_EPOCH = 253_402_300_799;

/** Bounds of the record's text fields. */
export const LIMITS = { id: 200, type: 100, stage: 100, level: 100 } as const;

const STATES: ReadonlySet<unknown> = new Set(DelegationState.options);

/** True for a plain JSON object (`{}` literal, JSON.parse output or null-prototype). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A null-prototype object: any key, including `__proto__`, is an ordinary own property. */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Nesting depth of a JSON value (a scalar is 0, `{}` or `[]` is 1), computed without
 * recursion; stops counting once past `cap`.
 */
export function jsonDepth(value: unknown, cap = MAX_JSON_DEPTH): number {
  if (typeof value !== 'object' || value === null) return 0;
  let max = 0;
  const stack: Array<{ v: unknown; d: number }> = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const depth = d + 1;
    if (depth > max) max = depth;
    if (max > cap) return max;
    for (const inner of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof inner === 'object' && inner !== null) stack.push({ v: inner, d: depth });
    }
  }
  return max;
}

/** Throws `invalid_argument` when `value` nests deeper than {@link MAX_JSON_DEPTH}. */
export function checkDepth(value: unknown, what: string): void {
  if (jsonDepth(value) > MAX_JSON_DEPTH) {
    throw new TasklineError(
      'invalid_argument',
      `${what} is nested deeper than ${MAX_JSON_DEPTH} levels; flatten it.`,
      { reason: 'too_deep', maxDepth: MAX_JSON_DEPTH },
    );
  }
}

/** Checks an epoch-second time: a whole number of seconds, not milliseconds. */
export function checkEpoch(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_EPOCH) {
    return value;
  }
  const hint =
    typeof value === 'number' && Number.isInteger(value) && value > MAX_EPOCH
      ? ' (it looks like milliseconds; divide by 1000)'
      : '';
  throw new TasklineError(
    'invalid_argument',
    `${what} must be integer seconds since the epoch, e.g. 1717390000; got ${JSON.stringify(value) ?? String(value)}${hint}.`,
  );
}

/** Checks a stage name: 1 to 100 characters. */
export function checkStageName(stage: unknown): string {
  if (typeof stage !== 'string' || stage.length < 1 || stage.length > LIMITS.stage) {
    throw new TasklineError(
      'invalid_argument',
      `A stage name is 1 to ${LIMITS.stage} characters (e.g. "execution"); got ${JSON.stringify(stage)}.`,
    );
  }
  return stage;
}

/** Checks a state name against the lifecycle. */
export function checkState(state: unknown, what = 'state'): DelegationState {
  if (STATES.has(state)) return state as DelegationState;
  throw new TasklineError(
    'invalid_argument',
    `${what} must be one of ${DelegationState.options.join(', ')}; got ${JSON.stringify(state) ?? String(state)}.`,
  );
}

function problem(what: string, expected: string, got: unknown): string {
  return `${what} must be ${expected}; got ${got === undefined ? 'nothing' : (JSON.stringify(got) ?? String(got))}`;
}

/** Checks one text field (`min`..`max` characters); pushes a problem otherwise. */
function text(problems: string[], what: string, v: unknown, max: number): string {
  if (typeof v === 'string' && v.length >= 1 && v.length <= max) return v;
  problems.push(problem(what, `a string of 1 to ${max} characters`, v));
  return '';
}

const STAGE_KEYS: ReadonlySet<string> = new Set(['state', 'time', 'deadline', 'delegation_result']);

/** Validates one stage status; pushes problems. Unknown keys are refused. */
function stageStatus(problems: string[], where: string, v: unknown): StageStatus | undefined {
  if (!isPlainObject(v)) {
    problems.push(problem(where, 'an object like {"state":"pending","time":1717390000}', v));
    return undefined;
  }
  for (const key of Object.keys(v)) {
    if (!STAGE_KEYS.has(key)) {
      problems.push(
        `${where} has an unknown field ${JSON.stringify(key)} (allowed: state, time, deadline, delegation_result)`,
      );
    }
  }
  const before = problems.length;
  let state: DelegationState = 'pending';
  let time = 0;
  let deadline: number | undefined;
  try {
    state = checkState(v.state, `${where}.state`);
  } catch (error) {
    problems.push((error as Error).message.replace(/\.$/, ''));
  }
  try {
    time = checkEpoch(v.time, `${where}.time`);
  } catch (error) {
    problems.push((error as Error).message.replace(/\.$/, ''));
  }
  if (v.deadline !== undefined && v.deadline !== null) {
    try {
      deadline = checkEpoch(v.deadline, `${where}.deadline`);
    } catch (error) {
      problems.push((error as Error).message.replace(/\.$/, ''));
    }
  }
  if (problems.length > before) return undefined;
  const out: StageStatus = { state, time };
  if (deadline !== undefined) out.deadline = deadline;
  if (v.delegation_result !== undefined && v.delegation_result !== null) {
    out.delegation_result = v.delegation_result;
  }
  return out;
}

/** Validates a status map into a null-prototype map; pushes problems. */
function statusMap(problems: string[], v: unknown): StatusMap {
  const out = dict<StageStatus>();
  if (!isPlainObject(v)) {
    problems.push(problem('status', 'an object from stage name to {state, time, deadline?}', v));
    return out;
  }
  for (const stage of Object.keys(v)) {
    if (stage.length < 1 || stage.length > LIMITS.stage) {
      problems.push(`stage name ${JSON.stringify(stage)} must be 1 to ${LIMITS.stage} characters`);
      continue;
    }
    const s = stageStatus(problems, `status[${JSON.stringify(stage)}]`, v[stage]);
    if (s) out[stage] = s;
  }
  return out;
}

const RECORD_KEYS: ReadonlySet<string> = new Set([
  'delegation_id',
  'task_id',
  'sub_task_id',
  'workflow_level',
  'delegation_type',
  'target_subject_id',
  'sender_subject_id',
  'status',
  'sub_task_data',
]);

/**
 * Validates a whole record (unknown fields refused, `sub_task_data` defaults to `{}`, `status`
 * to an empty map) and returns a fresh copy whose status map has a null prototype. Every
 * problem is listed in one `invalid_argument` error.
 */
export function parseRecord(input: unknown, what = 'delegation record'): DelegationRecord {
  if (!isPlainObject(input)) {
    throw new TasklineError('invalid_argument', `A ${what} is a JSON object.`);
  }
  const problems: string[] = [];
  for (const key of Object.keys(input)) {
    if (!RECORD_KEYS.has(key)) problems.push(`unknown field ${JSON.stringify(key)}`);
  }
  const level = input.workflow_level ?? 0;
  if (typeof level !== 'number' || !Number.isInteger(level) || level < 0 || level > LIMITS.level) {
    problems.push(problem('workflow_level', `an integer from 0 to ${LIMITS.level}`, level));
  }
  const data = input.sub_task_data ?? {};
  if (!isPlainObject(data)) problems.push(problem('sub_task_data', 'a JSON object', data));
  const record: DelegationRecord = {
    delegation_id: text(problems, 'delegation_id', input.delegation_id, LIMITS.id),
    task_id: text(problems, 'task_id', input.task_id, LIMITS.id),
    sub_task_id: text(problems, 'sub_task_id', input.sub_task_id, LIMITS.id),
    workflow_level: level as number,
    delegation_type: text(problems, 'delegation_type', input.delegation_type, LIMITS.type),
    target_subject_id: text(problems, 'target_subject_id', input.target_subject_id, LIMITS.id),
    sender_subject_id: text(problems, 'sender_subject_id', input.sender_subject_id, LIMITS.id),
    status: statusMap(problems, input.status ?? {}),
    sub_task_data: data as Record<string, unknown>,
  };
  if (problems.length > 0) {
    throw new TasklineError('invalid_argument', `Invalid ${what}: ${problems.join('; ')}.`, {
      problems,
    });
  }
  checkDepth(record.sub_task_data, 'sub_task_data');
  for (const stage of Object.keys(record.status)) {
    const result = record.status[stage]!.delegation_result;
    if (result !== undefined)
      checkDepth(result, `status[${JSON.stringify(stage)}].delegation_result`);
  }
  return record;
}

/** Checks a text field given alone (an update): 1 to `max` characters. */
export function checkText(value: unknown, what: string, max: number): string {
  const problems: string[] = [];
  const v = text(problems, what, value, max);
  if (problems.length > 0) throw new TasklineError('invalid_argument', `${problems[0]}.`);
  return v;
}
