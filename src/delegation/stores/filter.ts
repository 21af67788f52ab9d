import { TasklineError } from '../../core/errors.js';
import { type DelegationFilter, type DelegationRecord, DelegationState } from '../record.js';
import { canonicalTime } from './common.js';

/** Top-level record fields a filter may test, with the type their values must have. */
const COLUMNS = {
  delegation_id: 'string',
  task_id: 'string',
  sub_task_id: 'string',
  workflow_level: 'integer',
  delegation_type: 'string',
  sender_subject_id: 'string',
  target_subject_id: 'string',
} as const;

/** A record column a filter may test. */
export type FilterColumn = keyof typeof COLUMNS;

const STAGE_FIELD = /^status\.([A-Za-z0-9_-]{1,100})\.(state|time|deadline)$/;

/** A field a filter tests: a top-level column, or one property of one stage's status. */
export type FilterField =
  | { kind: 'column'; column: FilterColumn }
  | { kind: 'stage'; stage: string; prop: 'state' | 'time' | 'deadline' };

/** A validated filter: the only shape the SQL compilers and the matcher accept. */
export type FilterNode =
  | { op: 'and' | 'or'; items: FilterNode[] }
  | { op: 'eq'; field: FilterField; value: string | number }
  | { op: 'in'; field: FilterField; values: Array<string | number> }
  | { op: 'range'; field: FilterField; gt?: string; lt?: string };

const LIMITS = { depth: 8, nodes: 200, in: 200 } as const;

const ALLOWED =
  'Filters allow equality ({"target_subject_id":"billing"}), $in ({"delegation_type":{"$in":["a","b"]}}), ' +
  '$gt/$lt on times ({"status.execution.deadline":{"$lt":"2026-01-05T09:00:00.000Z"}}), $and and $or.';

const FIELDS = `${Object.keys(COLUMNS).join(', ')}, status.<stage>.state, status.<stage>.time, status.<stage>.deadline`;

function bad(message: string): TasklineError {
  return new TasklineError('invalid_argument', `${message} ${ALLOWED}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fieldOf(key: string): FilterField {
  if (Object.hasOwn(COLUMNS, key)) return { kind: 'column', column: key as FilterColumn };
  const m = STAGE_FIELD.exec(key);
  if (m) return { kind: 'stage', stage: m[1]!, prop: m[2] as 'state' | 'time' | 'deadline' };
  throw new TasklineError(
    'invalid_argument',
    `Unknown filter field ${JSON.stringify(key)}; use one of ${FIELDS} (stage names: letters, digits, "_", "-").`,
  );
}

function fieldName(field: FilterField): string {
  return field.kind === 'column' ? field.column : `status.${field.stage}.${field.prop}`;
}

function isTime(field: FilterField): boolean {
  return field.kind === 'stage' && field.prop !== 'state';
}

/** Checks one comparison value against the field's type; returns it (times canonicalised). */
function valueFor(field: FilterField, v: unknown): string | number {
  const name = fieldName(field);
  if (field.kind === 'column') {
    if (COLUMNS[field.column] === 'integer') {
      if (typeof v === 'number' && Number.isInteger(v)) return v;
      throw bad(`${name} compares with an integer; got ${JSON.stringify(v)}.`);
    }
    if (typeof v === 'string') return v;
    throw bad(`${name} compares with a string; got ${JSON.stringify(v)}.`);
  }
  if (field.prop === 'state') {
    const state = DelegationState.safeParse(v);
    if (state.success) return state.data;
    throw bad(`${name} is one of ${DelegationState.options.join(', ')}; got ${JSON.stringify(v)}.`);
  }
  return canonicalTime(v, name);
}

/**
 * Validates an untrusted filter (from the API or a caller) into a {@link FilterNode}. Anything
 * outside the safe subset — another operator, an unknown field, a wrong value type, `$gt` on a
 * non-time field, too deep or too large — is an `invalid_argument` error naming the problem.
 */
export function parseDelegationFilter(input: DelegationFilter | unknown): FilterNode {
  let nodes = 0;
  const walk = (value: unknown, depth: number): FilterNode => {
    if (depth > LIMITS.depth) throw bad(`Filter is nested deeper than ${LIMITS.depth} levels.`);
    if (!isPlainObject(value)) {
      throw bad(
        `A filter is a JSON object; got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}.`,
      );
    }
    const items: FilterNode[] = [];
    for (const [key, v] of Object.entries(value)) {
      if (++nodes > LIMITS.nodes) throw bad(`Filter has more than ${LIMITS.nodes} conditions.`);
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(v) || v.length === 0)
          throw bad(`${key} takes a non-empty array of filters.`);
        items.push({ op: key === '$and' ? 'and' : 'or', items: v.map((x) => walk(x, depth + 1)) });
        continue;
      }
      if (key.startsWith('$')) throw bad(`Operator ${JSON.stringify(key)} is not allowed here.`);
      const field = fieldOf(key);
      if (typeof v === 'string' || typeof v === 'number') {
        items.push({ op: 'eq', field, value: valueFor(field, v) });
        continue;
      }
      if (!isPlainObject(v)) {
        throw bad(
          `${key} compares with a string, a number or an operator object; got ${JSON.stringify(v)}.`,
        );
      }
      const ops = Object.keys(v);
      const unknown = ops.find((op) => op !== '$in' && op !== '$gt' && op !== '$lt');
      if (unknown !== undefined || ops.length === 0) {
        throw bad(`Operator ${JSON.stringify(unknown ?? '{}')} on ${key} is not allowed.`);
      }
      if (ops.includes('$in')) {
        if (ops.length > 1) throw bad(`$in on ${key} cannot be combined with other operators.`);
        const list = v.$in;
        if (!Array.isArray(list)) throw bad(`$in on ${key} takes an array.`);
        if (list.length > LIMITS.in) throw bad(`$in on ${key} has more than ${LIMITS.in} values.`);
        items.push({ op: 'in', field, values: list.map((x) => valueFor(field, x)) });
        continue;
      }
      if (!isTime(field)) {
        throw bad(
          `$gt/$lt work on times (status.<stage>.time, status.<stage>.deadline), not on ${key}.`,
        );
      }
      const node: FilterNode = { op: 'range', field };
      if (v.$gt !== undefined) node.gt = canonicalTime(v.$gt, `${key}.$gt`);
      if (v.$lt !== undefined) node.lt = canonicalTime(v.$lt, `${key}.$lt`);
      items.push(node);
    }
    return items.length === 1 ? items[0]! : { op: 'and', items };
  };
  return walk(input, 0);
}

/** SQL flavour for {@link compileFilterSql}. */
export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Compiles a validated filter to a parameterised SQL boolean expression; values (and JSON paths)
 * are pushed onto `params`, never spliced into the text. An empty `and` is TRUE.
 */
export function compileFilterSql(node: FilterNode, dialect: SqlDialect, params: unknown[]): string {
  const param = (v: unknown): string => {
    params.push(v);
    return dialect === 'sqlite' ? '?' : `$${params.length}`;
  };
  const expr = (field: FilterField): string => {
    if (field.kind === 'column') return `"${field.column}"`;
    if (dialect === 'sqlite')
      return `json_extract("status", ${param(`$."${field.stage}".${field.prop}`)})`;
    return `("status" -> ${param(field.stage)} ->> '${field.prop}')`;
  };
  switch (node.op) {
    case 'and':
    case 'or': {
      if (node.items.length === 0) return node.op === 'and' ? '1 = 1' : '1 = 0';
      const joiner = node.op === 'and' ? ' AND ' : ' OR ';
      return `(${node.items.map((n) => compileFilterSql(n, dialect, params)).join(joiner)})`;
    }
    case 'eq':
      return `${expr(node.field)} = ${param(node.value)}`;
    case 'in':
      if (node.values.length === 0) return '1 = 0';
      return `${expr(node.field)} IN (${node.values.map((v) => param(v)).join(', ')})`;
    case 'range': {
      const parts: string[] = [];
      if (node.gt !== undefined) parts.push(`${expr(node.field)} > ${param(node.gt)}`);
      if (node.lt !== undefined) parts.push(`${expr(node.field)} < ${param(node.lt)}`);
      return parts.length === 0 ? `${expr(node.field)} IS NOT NULL` : `(${parts.join(' AND ')})`;
    }
  }
}

function read(record: DelegationRecord, field: FilterField): string | number | undefined {
  if (field.kind === 'column') return record[field.column];
  return record.status[field.stage]?.[field.prop];
}

/** Evaluates a validated filter against one record in memory (same semantics as the SQL). */
export function matchFilter(node: FilterNode, record: DelegationRecord): boolean {
  switch (node.op) {
    case 'and':
      return node.items.every((n) => matchFilter(n, record));
    case 'or':
      return node.items.some((n) => matchFilter(n, record));
    case 'eq':
      return read(record, node.field) === node.value;
    case 'in': {
      const v = read(record, node.field);
      return v !== undefined && node.values.includes(v);
    }
    case 'range': {
      const v = read(record, node.field);
      if (typeof v !== 'string') return false;
      return (node.gt === undefined || v > node.gt) && (node.lt === undefined || v < node.lt);
    }
  }
}

/** Opaque cursor for keyset paging by delegation id. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ after: lastId }), 'utf8').toString('base64url');
}

/** Decodes a cursor from {@link encodeCursor}; anything else is `invalid_argument`. */
export function decodeCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (isPlainObject(parsed) && typeof parsed.after === 'string') return parsed.after;
  } catch {
    // fall through to the error below
  }
  throw new TasklineError(
    'invalid_argument',
    'The cursor is not one this API returned; pass back the `next` value of the previous page.',
  );
}
