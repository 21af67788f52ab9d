/**
 * Numeric options declared once with their accepted range: a zod schema checks them, and a
 * bad value is a TasklineError (`invalid_argument`) that names the option and the range.
 */
import { z } from 'zod/v4';
import { TasklineError } from './errors.js';

/** The accepted range of a numeric option. */
export interface Range {
  readonly min: number;
  readonly max?: number;
  /** Whole numbers only. */
  readonly whole?: boolean;
  /** A duration in milliseconds (the message says "ms"). */
  readonly ms?: boolean;
  /** `Infinity` is accepted too (no limit). */
  readonly infinite?: boolean;
  /** A duration in milliseconds that must be a whole number of seconds. */
  readonly seconds?: boolean;
}

/** A whole number from `min` (to `max`, when given). */
export function whole(min: number, max?: number): Range {
  return max === undefined ? { min, whole: true } : { min, max, whole: true };
}

/**
 * The longest delay Node's timers keep (2^31 − 1 ms, about 24.8 days): a longer one fires at
 * once, so a duration option past it would end its wait immediately instead of never.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A duration in milliseconds that a timer waits: from `min` to `max` (Node's longest timer when not given). */
export function millis(min: number, max: number = MAX_TIMER_MS): Range {
  return { min, max, ms: true };
}

/**
 * A duration in milliseconds handed to a service that counts whole seconds (LiveKit SIP's
 * ringing timeout and call length): from `min` to `max` ms, a multiple of 1,000 — a value
 * in between is refused rather than rounded silently.
 */
export function wholeSeconds(min: number, max: number): Range {
  return { min, max, ms: true, seconds: true };
}

/** A duration in milliseconds compared against, never waited (no timer limit): `min` or more, or Infinity. */
export function timeWindow(min: number): Range {
  return { min, ms: true, infinite: true };
}

/** Any finite number of at least `min`. */
export function atLeast(min: number): Range {
  return { min };
}

/** The range in words, as an error message says it ("a whole number from 1 to 20"). */
export function describeRange(range: Range): string {
  const unit = range.ms ? ' ms' : '';
  const kind = range.seconds
    ? 'a whole number of seconds'
    : range.whole
      ? 'a whole number'
      : 'a number';
  let text: string;
  if (range.max === undefined) text = `${kind} of at least ${range.min}${unit}`;
  else if (range.whole || range.seconds) text = `${kind} from ${range.min} to ${range.max}${unit}`;
  else text = `between ${range.min} and ${range.max}${unit}`;
  return range.infinite ? `${text}, or Infinity` : text;
}

const schemas = new WeakMap<Range, z.ZodType<number>>();

/** The zod schema of a range (NaN, ±Infinity and non-numbers fail unless `infinite`). */
export function rangeSchema(range: Range): z.ZodType<number> {
  const cached = schemas.get(range);
  if (cached) return cached;
  const error = `must be ${describeRange(range)}`;
  let finite = z.number({ error }).min(range.min, { error });
  if (range.whole) finite = finite.int({ error });
  if (range.seconds) finite = finite.multipleOf(1000, { error });
  if (range.max !== undefined) finite = finite.max(range.max, { error });
  const schema: z.ZodType<number> = range.infinite
    ? z.custom<number>((v) => v === Infinity || finite.safeParse(v).success, { error })
    : finite;
  schemas.set(range, schema);
  return schema;
}

function invalid(
  name: string,
  range: Range,
  value: unknown,
  owner: string | undefined,
  why: string | undefined,
): TasklineError {
  const got = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new TasklineError(
    'invalid_argument',
    `${owner ? `${owner}: ` : ''}${name} must be ${describeRange(range)} (got ${got})${why ? `: ${why}` : ''}.`,
    { option: name, range: describeRange(range) },
  );
}

/**
 * `value` when it is within `range` (undefined passes); otherwise throws `invalid_argument`
 * naming `name` (prefixed with `owner`, e.g. `Step "dob"`) and the range, plus `why`.
 */
export function checkRange(
  name: string,
  value: unknown,
  range: Range,
  context: { owner?: string; why?: string } = {},
): number | undefined {
  if (value === undefined) return undefined;
  if (rangeSchema(range).safeParse(value).success) return value as number;
  throw invalid(name, range, value, context.owner, context.why);
}

/** Declared options: each with its range and, optionally, its default. */
export type OptionTable = Readonly<Record<string, { range: Range; default?: number }>>;

/** The checked values of an option table: a number where a default is declared. */
export type CheckedOptions<T extends OptionTable> = {
  -readonly [K in keyof T]: T[K] extends { default: number } ? number : number | undefined;
};

/**
 * Checks `options` against a table of declared options (a zod object built from it) and fills
 * in the defaults; the first bad one throws `invalid_argument` naming it, its range and
 * `prefix` (e.g. `retry.`). Options the table does not declare are left alone.
 */
export function checkOptions<T extends OptionTable>(
  table: T,
  options: object | undefined,
  context: { prefix?: string; owner?: string } = {},
): CheckedOptions<T> {
  const source = (options ?? {}) as Readonly<Record<string, unknown>>;
  const shape: Record<string, z.ZodType> = {};
  for (const [key, decl] of Object.entries(table)) {
    const schema = rangeSchema(decl.range);
    shape[key] = decl.default === undefined ? schema.optional() : schema.default(decl.default);
  }
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(table)) picked[key] = source[key];
  const parsed = z.object(shape).safeParse(picked);
  if (parsed.success) return parsed.data as CheckedOptions<T>;
  const key = String(parsed.error.issues[0]?.path[0]);
  throw invalid(
    `${context.prefix ?? ''}${key}`,
    table[key]!.range,
    source[key],
    context.owner,
    undefined,
  );
}
