/**
 * The request bodies of the delegation routes, exactly as the wire contract writes them. Checked
 * by hand (see ../validate.ts) so that every problem names the field and what to send.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { TasklineError } from '../../core/errors.js';
import type { DelegationFilter, DelegationRecord, DelegationState } from '../record.js';
import { checkEpoch, checkState, isPlainObject, LIMITS, parseRecord } from '../validate.js';

function body(value: unknown, example: string): Record<string, unknown> {
  if (!isPlainObject(value)) {
    throw new TasklineError(
      'invalid_argument',
      `Send a JSON object with Content-Type: application/json, e.g. ${example}.`,
    );
  }
  return value;
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], what: string): void {
  const unknown = Object.keys(value).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw new TasklineError(
      'invalid_argument',
      `${what} has unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}; allowed: ${allowed.join(', ')}.`,
    );
  }
}

const CREATE_EXAMPLE =
  '{"task_id":"task123","sub_task_id":"sub456","workflow_level":1,"delegation_type":"manual","target_subject_id":"agentB","sender_subject_id":"agentA","sub_task_data":{"key":"value"}}';

/**
 * POST /delegations: a record without id or status, as the contract's example. The server
 * makes a UUID when `delegation_id` is absent; `status` (stages with integer times) and
 * `workflow_level` are optional (an empty map and 0).
 */
export function parseCreateBody(input: unknown): DelegationRecord {
  const value = body(input, CREATE_EXAMPLE);
  return parseRecord(
    { ...value, delegation_id: value.delegation_id ?? randomUUID() },
    'delegation (see the example in the README)',
  );
}

/** PUT /delegations/<id>/status/<stage>: `{"state":"in_progress","time":1717390000,"deadline":1717400000}`. */
export interface StatusBody {
  state: DelegationState;
  time?: number;
  deadline?: number;
  delegation_result?: unknown;
}

/** Parses the status route's body. */
export function parseStatusBody(input: unknown): StatusBody {
  const value = body(input, '{"state":"in_progress","time":1717390000,"deadline":1717400000}');
  onlyKeys(value, ['state', 'time', 'deadline', 'delegation_result'], 'A status');
  const out: StatusBody = { state: checkState(value.state) };
  if (value.time !== undefined && value.time !== null) out.time = checkEpoch(value.time, 'time');
  if (value.deadline !== undefined && value.deadline !== null) {
    out.deadline = checkEpoch(value.deadline, 'deadline');
  }
  if (value.delegation_result !== undefined && value.delegation_result !== null) {
    out.delegation_result = value.delegation_result;
  }
  return out;
}

/** PUT /delegations/submit_result/<id>: `{"state":"done","delegation_result":"…"}` (+ `stage`, `time`). */
export interface SubmitBody {
  state: 'done' | 'failed';
  delegation_result?: unknown;
  /** taskline addition: the stage the result completes (default the contract's `delegation_result`). */
  stage?: string;
  time?: number;
}

/** Parses the submit_result route's body. */
export function parseSubmitBody(input: unknown): SubmitBody {
  const value = body(
    input,
    '{"state":"done","delegation_result":"Execution completed successfully"}',
  );
  onlyKeys(value, ['state', 'delegation_result', 'stage', 'time'], 'A result');
  const state = value.state === undefined ? 'done' : value.state;
  if (state !== 'done' && state !== 'failed') {
    throw new TasklineError(
      'invalid_argument',
      `A submitted result's state is "done" or "failed"; got ${JSON.stringify(state)}.`,
    );
  }
  const out: SubmitBody = { state };
  if (value.delegation_result !== undefined && value.delegation_result !== null) {
    out.delegation_result = value.delegation_result;
  }
  if (value.stage !== undefined) {
    if (
      typeof value.stage !== 'string' ||
      value.stage.length < 1 ||
      value.stage.length > LIMITS.stage
    ) {
      throw new TasklineError('invalid_argument', `stage is 1 to ${LIMITS.stage} characters.`);
    }
    out.stage = value.stage;
  }
  if (value.time !== undefined && value.time !== null) out.time = checkEpoch(value.time, 'time');
  return out;
}

/** PUT /delegations/<id>: the fields to change (any record field but the id and status). */
export function parseUpdateBody(input: unknown): Record<string, unknown> {
  return body(input, '{"workflow_level":2,"sub_task_data":{"key":"new value"}}');
}

/**
 * POST /delegations/query: the whole body is the filter, as in the contract. For compatibility
 * the older wrapped form `{"filter":{…},"limit":50,"cursor":"…"}` is also taken.
 */
export function parseQueryBody(input: unknown): {
  filter: DelegationFilter;
  limit?: number;
  cursor?: string;
} {
  const value = input === undefined ? {} : body(input, '{"target_subject_id":"agentB"}');
  const keys = Object.keys(value);
  const wrapped =
    Object.hasOwn(value, 'filter') &&
    isPlainObject(value.filter) &&
    keys.every((k) => k === 'filter' || k === 'limit' || k === 'cursor');
  if (!wrapped) return { filter: value };
  const paging = Paging.safeParse({ limit: value.limit, cursor: value.cursor });
  if (!paging.success) throw new TasklineError('invalid_argument', z.prettifyError(paging.error));
  return {
    filter: value.filter as DelegationFilter,
    ...(paging.data.limit !== undefined ? { limit: paging.data.limit } : {}),
    ...(paging.data.cursor !== undefined ? { cursor: paging.data.cursor } : {}),
  };
}

/** Paging of a query (`?limit=&cursor=`), a taskline addition. */
export const Paging = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: z.string().min(1).max(2_000).optional(),
});

/** Route parameters. */
export const IdParams = z.strictObject({ id: z.string().min(1).max(LIMITS.id) });
/** Route parameters of the status route. */
export const StageParams = z.strictObject({
  id: z.string().min(1).max(LIMITS.id),
  stage: z.string().min(1).max(LIMITS.stage),
});
