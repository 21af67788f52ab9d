/**
 * Mongo-style filters for `query()`: parsed from untrusted JSON against an allow-list, compiled
 * to parameterised SQL for SQLite and Postgres, and evaluated in memory with the same meaning.
 *
 * Allowed: equality (`{"target_subject_id":"agentB"}`), `$eq $ne $gt $gte $lt $lte $in $nin
 * $exists`, `$and $or`, and dotted paths into `sub_task_data` and `status.<stage>.<field>`.
 * As in MongoDB: equality with `null` matches a missing field; a comparison only matches values of
 * its own type (numbers with numbers, strings with strings, compared by code point); a path whose
 * value is an array matches when any element matches. Paths do not walk through arrays in the
 * middle (`items.name` on a list of objects) and do not take positions (`items.0`).
 */
import { TasklineError } from '../../core/errors.js';
import type { SqlDialect } from '../../core/sql/runner.js';
import { type DelegationFilter, type DelegationRecord, DelegationState } from '../record.js';
import { isPlainObject } from '../validate.js';

/** Top-level columns a filter may test, with the type of their values. */
const COLUMNS = {
  delegation_id: 'string',
  task_id: 'string',
  sub_task_id: 'string',
  workflow_level: 'number',
  delegation_type: 'string',
  target_subject_id: 'string',
  sender_subject_id: 'string',
} as const;

/** A record column a filter may test. */
export type FilterColumn = keyof typeof COLUMNS;

/** A field a filter tests: a column, or a path inside one of the two JSON columns. */
export type FilterPath =
  | { kind: 'column'; column: FilterColumn }
  | { kind: 'json'; column: 'status' | 'sub_task_data'; keys: string[] };

/** A value an equality compares with. */
export type FilterScalar = string | number | boolean | null;

/** A validated filter: the only shape the SQL compilers and the matcher accept. */
export type FilterNode =
  | { op: 'and' | 'or'; items: FilterNode[] }
  | { op: 'not'; item: FilterNode }
  | { op: 'eq'; path: FilterPath; value: FilterScalar }
  | { op: 'cmp'; path: FilterPath; cmp: Comparison; value: string | number }
  | { op: 'exists'; path: FilterPath; exists: boolean };

type Comparison = 'gt' | 'gte' | 'lt' | 'lte';

const LIMITS = { depth: 8, nodes: 200, in: 200 } as const;

const FIELD_OPS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);

/** Path parts refused: anything that names a property of Object.prototype, and `prototype`. */
const PROTO_KEYS: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
]);

const ALLOWED =
  'Filters are MongoDB-style: {"target_subject_id":"agentB"}, {"workflow_level":{"$gte":1}}, ' +
  '{"sub_task_data.key":"value"}, {"status.execution.state":{"$in":["pending","in_progress"]}}, ' +
  'with $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or.';

function bad(message: string): TasklineError {
  return new TasklineError('invalid_argument', `${message} ${ALLOWED}`);
}

function shown(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

function pathOf(key: string): FilterPath {
  if (Object.hasOwn(COLUMNS, key)) return { kind: 'column', column: key as FilterColumn };
  const [head, ...keys] = key.split('.');
  if ((head !== 'status' && head !== 'sub_task_data') || keys.length === 0) {
    throw bad(
      `Unknown filter field ${shown(key)}; use ${Object.keys(COLUMNS).join(', ')}, sub_task_data.<path> or status.<stage>.<field>.`,
    );
  }
  for (const part of keys) {
    if (part === '') throw bad(`Filter field ${shown(key)} has an empty part.`);
    if (PROTO_KEYS.has(part)) {
      throw bad(
        `Filter field ${shown(key)} uses the reserved name ${shown(part)} (prototype keys are refused).`,
      );
    }
    if (/^\d+$/.test(part)) {
      throw bad(`Filter field ${shown(key)}: array positions (${part}) are not supported.`);
    }
    if (/["\\]/.test(part))
      throw bad(`Filter field ${shown(key)}: names with " or \\ cannot be queried.`);
  }
  if (head === 'status' && keys.length >= 2 && !STAGE_FIELDS.has(keys[1]!)) {
    throw bad(
      `Filter field ${shown(key)}: a stage has state, time, deadline and delegation_result (status.<stage>.<field>).`,
    );
  }
  if (head === 'status' && keys.length > 2 && keys[1] !== 'delegation_result') {
    throw bad(`Filter field ${shown(key)}: ${keys[1]} has no fields inside it.`);
  }
  return { kind: 'json', column: head, keys };
}

const STAGE_FIELDS: ReadonlySet<string> = new Set([
  'state',
  'time',
  'deadline',
  'delegation_result',
]);
const STATE_NAMES: ReadonlySet<unknown> = new Set(DelegationState.options);

/**
 * What the values compared with a field must be, for the fields whose type the record fixes:
 * the columns, and a stage's state and times. A value of another type could never match, so it
 * is a mistake (`{"workflow_level":"1 OR 1=1"}`), refused rather than answered with nothing.
 * `null` stays allowed where the field can be missing (a stage's fields: the stage may not exist).
 */
function fixedType(
  path: FilterPath,
): { type: 'string' | 'integer' | 'state'; nullable: boolean } | undefined {
  if (path.kind === 'column') {
    return { type: COLUMNS[path.column] === 'number' ? 'integer' : 'string', nullable: false };
  }
  if (path.column !== 'status' || path.keys.length !== 2) return undefined;
  const field = path.keys[1]!;
  if (field === 'state') return { type: 'state', nullable: true };
  if (field === 'time' || field === 'deadline') return { type: 'integer', nullable: true };
  return undefined;
}

function checkType(key: string, path: FilterPath, op: string, v: unknown): void {
  const fixed = fixedType(path);
  if (!fixed) return;
  if (
    v === null &&
    fixed.nullable &&
    (op === 'equality' || op === '$eq' || op === '$ne' || op === '$in' || op === '$nin')
  ) {
    return;
  }
  const ok =
    fixed.type === 'string'
      ? typeof v === 'string'
      : fixed.type === 'integer'
        ? typeof v === 'number' && Number.isInteger(v)
        : typeof v === 'string' &&
          (STATE_NAMES.has(v) ||
            (op !== 'equality' && op !== '$eq' && op !== '$ne' && op !== '$in' && op !== '$nin'));
  if (ok) return;
  const want =
    fixed.type === 'string'
      ? 'a string'
      : fixed.type === 'integer'
        ? key.endsWith('level')
          ? 'an integer'
          : 'an integer (epoch seconds)'
        : `a state (${DelegationState.options.join(', ')})`;
  throw bad(`${key} ${op} compares with ${want}; got ${shown(v)}.`);
}

function scalar(key: string, op: string, v: unknown): FilterScalar {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw bad(
    `${key} ${op} compares with a string, number, boolean or null; got ${shown(v)} (use a dotted path to test inside objects).`,
  );
}

function ordered(key: string, op: string, v: unknown): string | number {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw bad(
    `${key} ${op} compares with a number or a string (times are epoch seconds); got ${shown(v)}.`,
  );
}

function list(key: string, op: string, v: unknown): FilterScalar[] {
  if (!Array.isArray(v)) throw bad(`${op} on ${key} takes an array.`);
  if (v.length > LIMITS.in) throw bad(`${op} on ${key} has more than ${LIMITS.in} values.`);
  return v.map((x) => scalar(key, op, x));
}

function anyOf(path: FilterPath, values: FilterScalar[]): FilterNode {
  return { op: 'or', items: values.map((value) => ({ op: 'eq', path, value })) };
}

/**
 * Validates an untrusted filter (from the API or a caller) into a {@link FilterNode}. Anything
 * outside the allow-list — `$where`, `$regex`, `$function`, an unknown field, a prototype key, a
 * value of the wrong kind, too deep or too large — is an `invalid_argument` error naming it.
 */
export function parseDelegationFilter(input: DelegationFilter | unknown): FilterNode {
  let nodes = 0;
  const count = () => {
    if (++nodes > LIMITS.nodes) throw bad(`Filter has more than ${LIMITS.nodes} conditions.`);
  };
  const field = (key: string, v: unknown): FilterNode => {
    const path = pathOf(key);
    if (!isPlainObject(v)) {
      checkType(key, path, 'equality', v);
      return { op: 'eq', path, value: scalar(key, 'equality', v) };
    }
    const ops = Object.keys(v);
    if (ops.length === 0) throw bad(`${key} compares with {}; give a value or an operator.`);
    const items: FilterNode[] = [];
    for (const op of ops) {
      count();
      if (!FIELD_OPS.has(op)) {
        throw bad(
          op.startsWith('$')
            ? `Operator ${shown(op)} on ${key} is not allowed.`
            : `${key} compares with an object; test nested values with a dotted path (${key}.${op}).`,
        );
      }
      const arg = v[op];
      if (op === '$in' || op === '$nin') {
        if (Array.isArray(arg)) for (const x of arg) checkType(key, path, op, x);
      } else if (op !== '$exists') {
        checkType(key, path, op, arg);
      }
      switch (op) {
        case '$eq':
          items.push({ op: 'eq', path, value: scalar(key, op, arg) });
          break;
        case '$ne':
          items.push({ op: 'not', item: { op: 'eq', path, value: scalar(key, op, arg) } });
          break;
        case '$in':
          items.push(anyOf(path, list(key, op, arg)));
          break;
        case '$nin':
          items.push({ op: 'not', item: anyOf(path, list(key, op, arg)) });
          break;
        case '$exists':
          if (typeof arg !== 'boolean') throw bad(`$exists on ${key} takes true or false.`);
          items.push({ op: 'exists', path, exists: arg });
          break;
        default:
          items.push({
            op: 'cmp',
            path,
            cmp: op.slice(1) as Comparison,
            value: ordered(key, op, arg),
          });
      }
    }
    return items.length === 1 ? items[0]! : { op: 'and', items };
  };
  const walk = (value: unknown, depth: number): FilterNode => {
    if (depth > LIMITS.depth) throw bad(`Filter is nested deeper than ${LIMITS.depth} levels.`);
    if (!isPlainObject(value)) {
      throw bad(
        `A filter is a JSON object; got ${Array.isArray(value) ? 'an array' : shown(value)}.`,
      );
    }
    const items: FilterNode[] = [];
    for (const key of Object.keys(value)) {
      count();
      const v = value[key];
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(v) || v.length === 0)
          throw bad(`${key} takes a non-empty array of filters.`);
        items.push({ op: key === '$and' ? 'and' : 'or', items: v.map((x) => walk(x, depth + 1)) });
        continue;
      }
      if (key.startsWith('$')) throw bad(`Operator ${shown(key)} is not allowed.`);
      items.push(field(key, v));
    }
    return items.length === 1 ? items[0]! : { op: 'and', items };
  };
  return walk(input, 0);
}

// ------------------------------------------------------------------------------- SQL

const SQL_CMP: Record<Comparison, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function sqliteJsonPath(keys: readonly string[]): string {
  return `$${keys.map((k) => `."${k}"`).join('')}`;
}

/**
 * Compiles a validated filter to a parameterised SQL boolean expression that is never NULL;
 * values and JSON paths are pushed onto `params`, never spliced into the text.
 */
export function compileFilterSql(node: FilterNode, dialect: SqlDialect, params: unknown[]): string {
  const param = (v: unknown, cast = ''): string => {
    params.push(v);
    return dialect === 'sqlite' ? '?' : `$${params.length}${cast}`;
  };
  const column = (
    path: Extract<FilterPath, { kind: 'column' }>,
    n: Extract<FilterNode, { op: 'eq' | 'cmp' | 'exists' }>,
  ): string => {
    const type = COLUMNS[path.column];
    const col = `"${path.column}"`;
    if (n.op === 'exists') return n.exists ? '1 = 1' : '1 = 0';
    if (typeof n.value !== type) return '1 = 0';
    const collate = type === 'string' && dialect === 'postgres' ? ' COLLATE "C"' : '';
    const op = n.op === 'eq' ? '=' : SQL_CMP[n.cmp];
    return `${col}${collate} ${op} ${param(n.value, type === 'number' && dialect === 'postgres' ? '::numeric' : '')}`;
  };
  const json = (
    path: Extract<FilterPath, { kind: 'json' }>,
    n: Extract<FilterNode, { op: 'eq' | 'cmp' | 'exists' }>,
  ): string => {
    const col = `"${path.column}"`;
    if (dialect === 'sqlite') {
      const p = sqliteJsonPath(path.keys);
      const type = () => `json_type(${col}, ${param(p)})`;
      if (n.op === 'exists') return `${type()} IS ${n.exists ? 'NOT ' : ''}NULL`;
      // Built strictly in text order: SQLite parameters are positional.
      const test = (typeCol: () => string, valueCol: () => string): string => {
        const v = n.value;
        if (v === null) return `${typeCol()} = 'null'`;
        if (typeof v === 'boolean') return `${typeCol()} = '${v ? 'true' : 'false'}'`;
        const types = typeof v === 'number' ? `('integer', 'real')` : `('text')`;
        const op = n.op === 'eq' ? '=' : SQL_CMP[n.cmp];
        const t = typeCol();
        const value = valueCol();
        return `(${t} IN ${types} AND ${value} ${op} ${param(v)})`;
      };
      const missing = n.op === 'eq' && n.value === null ? `${type()} IS NULL OR ` : '';
      const scalarTest = test(type, () => `json_extract(${col}, ${param(p)})`);
      const inArray = `(${type()} = 'array' AND EXISTS (SELECT 1 FROM json_each(${col}, ${param(p)}) AS e WHERE ${test(
        () => 'e.type',
        () => 'e.value',
      )}))`;
      return `(${missing}COALESCE(${scalarTest}, 0) OR ${inArray})`;
    }
    const x = `(${col} #> ${param(path.keys, '::text[]')})`;
    if (n.op === 'exists') return `${x} IS ${n.exists ? 'NOT ' : ''}NULL`;
    const v = n.value;
    if (n.op === 'eq') {
      const literal = param(JSON.stringify(v), '::jsonb');
      const missing = v === null ? `${x} IS NULL OR ` : '';
      return `(${missing}COALESCE(${x} = ${literal}, false) OR COALESCE(jsonb_typeof(${x}) = 'array' AND ${x} @> jsonb_build_array(${literal}), false))`;
    }
    const op = SQL_CMP[n.cmp];
    const bound = typeof v === 'number' ? param(v, '::numeric') : param(v, '::text');
    const typed = (e: string): string =>
      typeof v === 'number'
        ? `CASE WHEN jsonb_typeof(${e}) = 'number' THEN (${e})::numeric ${op} ${bound} ELSE false END`
        : `CASE WHEN jsonb_typeof(${e}) = 'string' THEN (${e} #>> '{}') COLLATE "C" ${op} ${bound} ELSE false END`;
    return `(COALESCE(${typed(x)}, false) OR COALESCE(jsonb_typeof(${x}) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements(${x}) AS e(v) WHERE ${typed('e.v')}), false))`;
  };
  switch (node.op) {
    case 'and':
    case 'or': {
      if (node.items.length === 0) return node.op === 'and' ? '1 = 1' : '1 = 0';
      const joiner = node.op === 'and' ? ' AND ' : ' OR ';
      return `(${node.items.map((n) => compileFilterSql(n, dialect, params)).join(joiner)})`;
    }
    case 'not':
      return `(NOT ${compileFilterSql(node.item, dialect, params)})`;
    default:
      return node.path.kind === 'column' ? column(node.path, node) : json(node.path, node);
  }
}

// ------------------------------------------------------------------------------- in memory

const MISSING = Symbol('missing');

function read(record: DelegationRecord, path: FilterPath): unknown {
  if (path.kind === 'column') return record[path.column];
  let node: unknown = record[path.column];
  for (const key of path.keys) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return MISSING;
    node = node[key];
  }
  return node;
}

/** Compares strings by Unicode code point (the order of UTF-8 bytes, as SQLite and "C" do). */
function compareText(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function compare(v: unknown, cmp: Comparison, bound: string | number): boolean {
  let d: number;
  if (typeof bound === 'number' && typeof v === 'number') d = v - bound;
  else if (typeof bound === 'string' && typeof v === 'string') d = compareText(v, bound);
  else return false;
  return cmp === 'gt' ? d > 0 : cmp === 'gte' ? d >= 0 : cmp === 'lt' ? d < 0 : d <= 0;
}

/** Evaluates a validated filter against one record in memory (same meaning as the SQL). */
export function matchFilter(node: FilterNode, record: DelegationRecord): boolean {
  switch (node.op) {
    case 'and':
      return node.items.every((n) => matchFilter(n, record));
    case 'or':
      return node.items.some((n) => matchFilter(n, record));
    case 'not':
      return !matchFilter(node.item, record);
    case 'exists':
      return (read(record, node.path) !== MISSING) === node.exists;
    case 'eq': {
      const v = read(record, node.path);
      if (node.value === null && v === MISSING) return true;
      const same = (x: unknown) => x === node.value;
      return same(v) || (Array.isArray(v) && v.some(same));
    }
    case 'cmp': {
      const v = read(record, node.path);
      const ok = (x: unknown) => compare(x, node.cmp, node.value);
      return ok(v) || (Array.isArray(v) && v.some(ok));
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
