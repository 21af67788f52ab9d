/**
 * The request bodies, path parameters and query strings of the delegation routes, exactly as the
 * wire contract writes them, checked strictly with zod: a wrong type is a 400 naming the field,
 * what to send and what came (`null` is never "omitted", `true` is never 1, `"5"` is never 5),
 * unknown fields are refused, and ids that name a route (`events`, `query`, `submit_result`) are
 * not record ids. The stores check records again (../validate.ts) and build their status maps.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { TasklineError } from '../../core/errors.js';
import {
  type DelegationFilter,
  type DelegationRecord,
  DelegationState,
} from '../../delegation/record.js';
import { LIMITS, parseRecord } from '../../delegation/validate.js';
import { HttpError } from './envelope.js';

/** Largest epoch-second time accepted (9999-12-31T23:59:59Z). */
const MAX_EPOCH = 253_402_300_799;

/**
 * Path segments under `/delegations/` that are routes, not records: a record with such an id
 * could never be read back by its URL. `.` and `..` are rewritten by every HTTP client.
 */
export const RESERVED_IDS: ReadonlySet<string> = new Set([
  'events',
  'query',
  'submit_result',
  '.',
  '..',
]);

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

const text = (max: number) => z.string().min(1).max(max);
const Id = text(LIMITS.id).refine((v) => !CONTROL.test(v), {
  error: 'must not contain control characters',
});
const NewId = Id.refine((v) => !RESERVED_IDS.has(v), {
  error: `names a route, not a record (${[...RESERVED_IDS].join(', ')} cannot be ids)`,
});
const Epoch = z.number().int().min(0).max(MAX_EPOCH);
const Level = z.number().int().min(0).max(LIMITS.level);
const JsonObject = z.record(z.string(), z.unknown());
/** A result: any JSON value but `null`, which would read as "no result". */
const Result = z.unknown().refine((v) => v !== null && v !== undefined, {
  error: 'is null; omit delegation_result when there is none',
});
const StageName = text(LIMITS.stage);

const StageStatusBody = z.strictObject({
  state: DelegationState,
  time: Epoch,
  deadline: Epoch.optional(),
  delegation_result: Result.optional(),
});

const CreateBody = z.strictObject({
  delegation_id: NewId.optional(),
  task_id: Id,
  sub_task_id: Id,
  workflow_level: Level.optional(),
  delegation_type: text(LIMITS.type),
  target_subject_id: Id,
  sender_subject_id: Id,
  status: z.record(StageName, StageStatusBody).optional(),
  sub_task_data: JsonObject.optional(),
});

const DATA_PREFIX = 'sub_task_data.';
const UPDATE_FIELDS = [
  'task_id',
  'sub_task_id',
  'workflow_level',
  'delegation_type',
  'target_subject_id',
  'sender_subject_id',
  'sub_task_data',
  'delegation_id',
  'status',
] as const;
const UpdateBody = z
  .object({
    delegation_id: Id.optional(),
    task_id: Id.optional(),
    sub_task_id: Id.optional(),
    workflow_level: Level.optional(),
    delegation_type: text(LIMITS.type).optional(),
    target_subject_id: Id.optional(),
    sender_subject_id: Id.optional(),
    sub_task_data: JsonObject.optional(),
    // The whole record sent back may carry its status unchanged (the store checks it is).
    status: JsonObject.optional(),
  })
  .catchall(z.unknown())
  .superRefine((value, ctx) => {
    const unknown = Object.keys(value).filter(
      (k) =>
        !(UPDATE_FIELDS as readonly string[]).includes(k) &&
        !(k.startsWith(DATA_PREFIX) && k.length > DATA_PREFIX.length),
    );
    if (unknown.length > 0)
      ctx.addIssue({ code: 'unrecognized_keys', keys: unknown, input: value });
    if (Object.keys(value).length === 0) {
      ctx.addIssue({
        code: 'custom',
        message:
          'Nothing to update: send the fields to change, e.g. {"workflow_level":2,"sub_task_data":{"key":"value"}}',
      });
    }
  });

const StatusBody = z.strictObject({
  state: DelegationState,
  time: Epoch.optional(),
  deadline: Epoch.optional(),
  delegation_result: Result.optional(),
});

const SubmitBody = z
  .strictObject({
    state: z.enum(['done', 'failed']).optional(),
    delegation_result: Result.optional(),
    stage: StageName.optional(),
    time: Epoch.optional(),
  })
  .refine((v) => v.state !== undefined || v.delegation_result !== undefined, {
    error:
      'An empty result: send {"state":"done","delegation_result":"…"} (or "failed" with a reason)',
  });

/** Paging of a query (`?limit=&cursor=`), a taskline addition: digits only, no repeats. */
const PagingQuery = z.strictObject({
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/)
    .transform(Number)
    .pipe(z.number().max(500))
    .optional(),
  cursor: text(2_000).optional(),
});
const WrappedQuery = z.strictObject({
  filter: JsonObject,
  limit: z.number().int().min(1).max(500).optional(),
  cursor: text(2_000).optional(),
});

/** What each field must be, for the messages. */
const EXPECTED: Record<string, string> = {
  delegation_id: `a string of 1 to ${LIMITS.id} characters`,
  task_id: `a string of 1 to ${LIMITS.id} characters`,
  sub_task_id: `a string of 1 to ${LIMITS.id} characters`,
  target_subject_id: `a string of 1 to ${LIMITS.id} characters`,
  sender_subject_id: `a string of 1 to ${LIMITS.id} characters`,
  delegation_type: `a string of 1 to ${LIMITS.type} characters`,
  workflow_level: `an integer from 0 to ${LIMITS.level}`,
  sub_task_data: 'a JSON object',
  status: 'an object from stage name to {"state":"pending","time":1717390000}',
  state: `one of ${DelegationState.options.join(', ')}`,
  time: 'integer seconds since the epoch, e.g. 1717390000',
  deadline: 'integer seconds since the epoch, e.g. 1717400000',
  stage: `a stage name of 1 to ${LIMITS.stage} characters`,
  limit: 'an integer from 1 to 500',
  cursor: 'the "next" of the previous answer',
  filter: 'a JSON object (a MongoDB-style filter)',
};

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function where(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) =>
      typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `[${JSON.stringify(p)}]`,
    )
    .join('');
}

/** One sentence per problem: the field, what it must be, what came. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  expected: Record<string, string> = EXPECTED,
): string[] {
  return issues.map((issue) => {
    const path = issue.path;
    const at = where(path);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
      return `${at ? `${at} has ` : ''}unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`;
    }
    if (issue.code === 'custom') return at ? `${at} ${issue.message}` : issue.message;
    const last = path.at(-1);
    const want =
      (typeof last === 'string' ? expected[last] : undefined) ??
      (path[0] === 'status' && path.length === 2
        ? 'an object {state, time, deadline?}'
        : undefined);
    const value = valueAt(input, path);
    const ms =
      (last === 'time' || last === 'deadline') &&
      typeof value === 'number' &&
      Number.isInteger(value) &&
      value > MAX_EPOCH
        ? ' (it looks like milliseconds; divide by 1000)'
        : '';
    return `${at || 'the body'} must be ${want ?? issue.message.replace(/^Invalid input: /, '')}; got ${shown(value)}${ms}`;
  });
}

function bodyOf(input: unknown, example: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new TasklineError(
      'invalid_argument',
      input === undefined
        ? `This request needs a body: Send a JSON object with Content-Type: application/json, e.g. ${example}.`
        : `Send a JSON object with Content-Type: application/json, e.g. ${example}; got ${shown(input)}.`,
    );
  }
  return input as Record<string, unknown>;
}

function parseWith<T>(
  schema: z.ZodType<T>,
  input: unknown,
  what: string,
  expected: Record<string, string> = EXPECTED,
): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error.issues, input, expected);
  throw new TasklineError('invalid_argument', `Invalid ${what}: ${problems.join('; ')}.`, {
    problems,
  });
}

const CREATE_EXAMPLE =
  '{"task_id":"task123","sub_task_id":"sub456","workflow_level":1,"delegation_type":"manual","target_subject_id":"agentB","sender_subject_id":"agentA","sub_task_data":{"key":"value"}}';

/**
 * POST /delegations: a record without id or status, as the contract's example. The server
 * makes a UUID when `delegation_id` is absent; `status` (stages with integer times) and
 * `workflow_level` are optional (an empty map and 0).
 */
export function parseCreateBody(input: unknown): DelegationRecord {
  const value = parseWith(
    CreateBody,
    bodyOf(input, CREATE_EXAMPLE),
    'delegation (see the example in docs/service.md)',
  );
  return parseRecord(
    { ...value, delegation_id: value.delegation_id ?? randomUUID() },
    'delegation (see the example in docs/service.md)',
  );
}

/** PUT /delegations/<id>/status/<stage>: `{"state":"in_progress","time":1717390000,"deadline":1717400000}`. */
export type StatusBody = z.output<typeof StatusBody>;

/** Parses the status route's body; a result goes only with `done` or `failed`. */
export function parseStatusBody(input: unknown): StatusBody {
  const body = parseWith(
    StatusBody,
    bodyOf(input, '{"state":"in_progress","time":1717390000,"deadline":1717400000}'),
    'status',
  );
  if (body.delegation_result !== undefined && body.state !== 'done' && body.state !== 'failed') {
    throw new TasklineError(
      'invalid_argument',
      `A delegation_result goes with state "done" or "failed", not "${body.state}".`,
    );
  }
  return body;
}

/** PUT /delegations/submit_result/<id>: `{"state":"done","delegation_result":"…"}` (+ `stage`, `time`). */
export interface SubmitBody {
  state: 'done' | 'failed';
  delegation_result?: unknown;
  /** taskline addition: the stage the result completes (default the contract's `delegation_result`). */
  stage?: string;
  time?: number;
}

/** Parses the submit_result route's body (`state` defaults to `done` when a result is given). */
export function parseSubmitBody(input: unknown): SubmitBody {
  const body = parseWith(
    SubmitBody,
    bodyOf(input, '{"state":"done","delegation_result":"Execution completed successfully"}'),
    'result',
    { ...EXPECTED, state: '"done" or "failed"' },
  );
  return { ...body, state: body.state ?? 'done' };
}

/** PUT /delegations/<id>: the fields to change (any record field but the id and status). */
export function parseUpdateBody(input: unknown): Record<string, unknown> {
  return parseWith(
    UpdateBody,
    bodyOf(input, '{"workflow_level":2,"sub_task_data":{"key":"new value"}}'),
    'update',
  ) as Record<string, unknown>;
}

/**
 * POST /delegations/query: the whole body is the filter, as in the contract (`{}` for every
 * record). For compatibility the older wrapped form `{"filter":{…},"limit":50,"cursor":"…"}` is
 * also taken. The filter's fields and operators are checked by the store.
 */
export function parseQueryBody(input: unknown): {
  filter: DelegationFilter;
  limit?: number;
  cursor?: string;
} {
  const value = bodyOf(input, '{"target_subject_id":"agentB"} ({} for every record)');
  const keys = Object.keys(value);
  const wrapped =
    keys.includes('filter') && keys.every((k) => k === 'filter' || k === 'limit' || k === 'cursor');
  if (!wrapped) return { filter: value };
  const body = parseWith(WrappedQuery, value, 'query');
  return {
    filter: body.filter,
    ...(body.limit !== undefined ? { limit: body.limit } : {}),
    ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
  };
}

/** Parses `?limit=&cursor=` of a query (nothing else; each at most once). */
export function parsePaging(query: unknown): { limit?: number; cursor?: string } {
  const parsed = PagingQuery.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error.issues, query);
  throw new TasklineError(
    'invalid_argument',
    `Paging is ?limit=<1..500>&cursor=<the "next" of the previous answer>: ${problems.join('; ')}.`,
  );
}

function checkId(id: string): string {
  if (RESERVED_IDS.has(id)) {
    throw new HttpError(
      404,
      'not_found',
      `"${id}" names a route, not a delegation: ${
        id === 'query'
          ? 'query with POST /delegations/query'
          : id === 'events'
            ? 'GET /delegations/events is a WebSocket'
            : 'submit a result with PUT /delegations/submit_result/<id>'
      }.`,
    );
  }
  return id;
}

/** Route parameters. */
export const IdParams = z.strictObject({ id: z.string().min(1).max(LIMITS.id).transform(checkId) });
/** Route parameters of the status route. */
export const StageParams = z.strictObject({
  id: z.string().min(1).max(LIMITS.id).transform(checkId),
  stage: StageName,
});
