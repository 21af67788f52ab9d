/**
 * Branch conditions as data (`next: { when: [{ if: { gte: 9 }, to: 'referral' }], else:
 * 'thanks' }`): what a condition may say, how it is checked when a flow is declared (or a
 * document loaded), and how it is evaluated on an answer. Pure functions, no model.
 */
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';

/** A value a condition compares with: what a JSON document can hold besides objects. */
export type Scalar = string | number | boolean | null;

/** What a comparison reads: the step's own answer (default), another step's, and a field of it. */
export interface ConditionSubject {
  /** Compare another step's answer instead of this step's. */
  readonly of?: string;
  /** A field of an object answer, dotted for nested fields (`"address.city"`). */
  readonly field?: string;
}

/** One comparison: exactly one operator, on the subject. */
export type Comparison = ConditionSubject &
  (
    | { readonly eq: Scalar }
    | { readonly ne: Scalar }
    | { readonly in: readonly Scalar[] }
    | { readonly notIn: readonly Scalar[] }
    | { readonly lt: number }
    | { readonly lte: number }
    | { readonly gt: number }
    | { readonly gte: number }
    | { readonly between: readonly [number, number] }
    | { readonly answered: boolean }
  );

/**
 * A branch condition. A comparison on an answer that was not given (skipped, not reached,
 * withheld) is false, except `answered: false`.
 *
 * @example
 * { gte: 9 }                                  // this step's answer is 9 or more
 * { of: 'consent', eq: true }                 // another step's answer
 * { all: [{ gte: 7 }, { of: 'plan', in: ['gold', 'silver'] }] }
 */
export type Condition =
  | Comparison
  | { readonly all: readonly Condition[] }
  | { readonly any: readonly Condition[] }
  | { readonly not: Condition };

/** Operators of a comparison, in the order documents and messages list them. */
export const OPERATORS = [
  'eq',
  'ne',
  'in',
  'notIn',
  'lt',
  'lte',
  'gt',
  'gte',
  'between',
  'answered',
] as const;

/** An operator name. */
export type Operator = (typeof OPERATORS)[number];

const NUMERIC = new Set<string>(['lt', 'lte', 'gt', 'gte', 'between']);
const SUBJECT = new Set(['of', 'field']);
const COMBINATORS = new Set(['all', 'any', 'not']);
const MAX_DEPTH = 8;

/** True when `value` answers the condition (`answers` holds the other steps' answers). */
export function evaluate(
  condition: Condition,
  value: unknown,
  answers: Readonly<Record<string, unknown>>,
): boolean {
  if ('all' in condition) return condition.all.every((c) => evaluate(c, value, answers));
  if ('any' in condition) return condition.any.some((c) => evaluate(c, value, answers));
  if ('not' in condition) return !evaluate(condition.not, value, answers);
  const c = condition as unknown as Record<string, unknown> & ConditionSubject;
  let subject = c.of === undefined ? value : answers[c.of];
  if (c.field !== undefined) subject = fieldOf(subject, c.field);
  const op = operatorOf(c)!;
  const arg = c[op];
  if (op === 'answered') return (subject !== undefined) === arg;
  if (subject === undefined) return false;
  switch (op) {
    case 'eq':
      return same(subject, arg);
    case 'ne':
      return !same(subject, arg);
    case 'in':
      return (arg as Scalar[]).some((a) => same(subject, a));
    case 'notIn':
      return !(arg as Scalar[]).some((a) => same(subject, a));
    default: {
      if (typeof subject !== 'number' || Number.isNaN(subject)) return false;
      if (op === 'between') {
        const [lo, hi] = arg as [number, number];
        return subject >= lo && subject <= hi;
      }
      const n = arg as number;
      return op === 'lt'
        ? subject < n
        : op === 'lte'
          ? subject <= n
          : op === 'gt'
            ? subject > n
            : subject >= n;
    }
  }
}

function same(a: unknown, b: unknown): boolean {
  return a === b || (a === null && b === null);
}

function fieldOf(value: unknown, path: string): unknown {
  let cur = value;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    if (!Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function operatorOf(c: object): Operator | undefined {
  return OPERATORS.find((op) => op in c);
}

/** A problem with a condition: what is wrong, and where inside it (`["all", 1, "gte"]`). */
export interface ConditionProblem {
  path: (string | number)[];
  message: string;
}

/** What the checker knows about the flow a condition lives in. */
export interface ConditionScope {
  /** The schema of a step's answer, when it has one (undefined: unknown step). */
  schemaOf(step: string): z.ZodType | undefined | null;
  /** True when the flow has this step. */
  hasStep(step: string): boolean;
}

/**
 * Checks a condition's shape and, where the answer's schema is known, its types: numeric
 * operators on a number, `eq` / `in` values the answer can take. Returns the problems.
 */
export function checkCondition(
  condition: unknown,
  self: string,
  scope: ConditionScope,
): ConditionProblem[] {
  const problems: ConditionProblem[] = [];
  walk(condition, [], 0);
  return problems;

  function walk(c: unknown, path: (string | number)[], depth: number): boolean {
    const fail = (message: string, at: (string | number)[] = path): false => {
      problems.push({ path: at, message });
      return false;
    };
    if (depth > MAX_DEPTH) return fail(`conditions nest at most ${MAX_DEPTH} deep`);
    if (typeof c !== 'object' || c === null || Array.isArray(c)) {
      return fail(
        `a condition is an object with one operator (${OPERATORS.join(', ')}) or all / any / not`,
      );
    }
    const keys = Object.keys(c);
    const combinator = keys.find((k) => COMBINATORS.has(k));
    if (combinator) {
      if (keys.length !== 1) {
        return fail(`"${combinator}" stands alone in its condition (found ${keys.join(', ')})`);
      }
      const inner = (c as Record<string, unknown>)[combinator];
      if (combinator === 'not') return walk(inner, [...path, 'not'], depth + 1);
      if (!Array.isArray(inner) || inner.length === 0) {
        return fail(`"${combinator}" takes a non-empty list of conditions`, [...path, combinator]);
      }
      return inner.map((x, i) => walk(x, [...path, combinator, i], depth + 1)).every(Boolean);
    }
    const ops = keys.filter((k) => !SUBJECT.has(k));
    const unknown = ops.filter((k) => !(OPERATORS as readonly string[]).includes(k));
    if (unknown.length > 0) {
      return fail(
        `unknown operator "${unknown[0]}" (known: ${OPERATORS.join(', ')}, all, any, not, with of / field)`,
        [...path, unknown[0]!],
      );
    }
    if (ops.length !== 1) {
      return fail(
        ops.length === 0
          ? `a condition needs one operator (${OPERATORS.join(', ')})`
          : `a condition has one operator; split ${ops.join(' and ')} with all: [...]`,
      );
    }
    const op = ops[0] as Operator;
    const rec = c as Record<string, unknown>;
    const of = rec.of;
    if (of !== undefined && (typeof of !== 'string' || !scope.hasStep(of))) {
      return fail(`"of" names a step of this flow (got ${JSON.stringify(of)})`, [...path, 'of']);
    }
    const field = rec.field;
    if (field !== undefined && (typeof field !== 'string' || !/^[\w-]+(\.[\w-]+)*$/.test(field))) {
      return fail(
        `"field" is a field name, dotted for nested fields (got ${JSON.stringify(field)})`,
        [...path, 'field'],
      );
    }
    const arg = rec[op];
    const at = [...path, op];
    if (op === 'answered') {
      return typeof arg === 'boolean' || fail('"answered" takes true or false', at);
    }
    if (NUMERIC.has(op)) {
      const ok =
        op === 'between'
          ? Array.isArray(arg) &&
            arg.length === 2 &&
            arg.every((n) => typeof n === 'number' && Number.isFinite(n)) &&
            (arg[0] as number) <= (arg[1] as number)
          : typeof arg === 'number' && Number.isFinite(arg);
      if (!ok) {
        return fail(
          op === 'between' ? '"between" takes [low, high], two numbers' : `"${op}" takes a number`,
          at,
        );
      }
    } else if (op === 'in' || op === 'notIn') {
      if (!Array.isArray(arg) || arg.length === 0 || !arg.every(isScalar)) {
        return fail(`"${op}" takes a non-empty list of values`, at);
      }
    } else if (!isScalar(arg)) {
      return fail(`"${op}" takes a string, number, true, false or null`, at);
    }
    // Types against the answer's schema, when it is known and the comparison reads it whole.
    if (field !== undefined) return true;
    const schema = scope.schemaOf(typeof of === 'string' ? of : self);
    if (!schema) return true;
    const kind = kindOf(schema);
    if (NUMERIC.has(op)) {
      if (kind !== undefined && kind !== 'number') {
        return fail(`"${op}" compares numbers, but the answer of "${of ?? self}" is a ${kind}`, at);
      }
      return true;
    }
    const values = op === 'in' || op === 'notIn' ? (arg as unknown[]) : [arg];
    const bad = values.find((v) => !schema.safeParse(v).success);
    if (bad !== undefined) {
      return fail(
        `${JSON.stringify(bad)} is never an answer of "${of ?? self}"${kind ? ` (a ${kind})` : ''}`,
        at,
      );
    }
    return true;
  }
}

function isScalar(v: unknown): v is Scalar {
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v))
  );
}

/** The kind of value a schema holds, in words, when it is plain enough to tell. */
export function kindOf(schema: z.ZodType): string | undefined {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) {
    s = (s as z.ZodOptional<z.ZodType>).unwrap() as z.ZodType;
  }
  if (s instanceof z.ZodNumber) return 'number';
  if (s instanceof z.ZodBoolean) return 'boolean';
  if (s instanceof z.ZodString || s instanceof z.ZodEnum) return 'string';
  if (s instanceof z.ZodObject) return 'object';
  if (s instanceof z.ZodArray) return 'list';
  return undefined;
}

/** A short description of a condition for diagrams ("≥ 9", "consent = true"). */
export function describeCondition(condition: Condition): string {
  if ('all' in condition) return condition.all.map(describeCondition).join(' and ');
  if ('any' in condition) return condition.any.map(describeCondition).join(' or ');
  if ('not' in condition) return `not (${describeCondition(condition.not)})`;
  const c = condition as unknown as Record<string, unknown> & ConditionSubject;
  const op = operatorOf(c)!;
  const subject = [c.of, c.field].filter(Boolean).join('.');
  const arg = c[op];
  const text =
    op === 'between'
      ? `${(arg as number[])[0]}-${(arg as number[])[1]}`
      : op === 'answered'
        ? arg
          ? 'answered'
          : 'not answered'
        : `${SYMBOL[op]} ${Array.isArray(arg) ? arg.map((a) => JSON.stringify(a)).join(', ') : JSON.stringify(arg)}`;
  return subject ? `${subject} ${text}` : text;
}

const SYMBOL: Record<Exclude<Operator, 'between' | 'answered'>, string> = {
  eq: '=',
  ne: '≠',
  in: 'in',
  notIn: 'not in',
  lt: '<',
  lte: '≤',
  gt: '>',
  gte: '≥',
};

/** Throws a TasklineError for the first problem of a condition declared in code. */
export function assertCondition(condition: unknown, step: string, scope: ConditionScope): void {
  const [problem] = checkCondition(condition, step, scope);
  if (!problem) return;
  const where = problem.path.length ? ` (at ${problem.path.join('.')})` : '';
  throw new TasklineError(
    'invalid_argument',
    `Step "${step}": a when condition is not valid${where}: ${problem.message}.`,
  );
}
