import type { CountryCode } from 'libphonenumber-js';
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import { fromSpec, mergeOverrides, type TaskDefinition, type TaskOverrides } from './define.js';
import { patchDigitEnd, patchEmail, spelledTarget } from './parsers/correct.js';
import * as parse from './parsers/index.js';
import { spelledWord } from './parsers/name.js';
import type { ParseResult } from './parsers/result.js';
import {
  DIGIT_PHRASES,
  dateMayGrow,
  numberMayGrow,
  timeMayGrow,
  YES_NO_PHRASES,
} from './task-expectation.js';
import type { TaskSpec } from './typed-task-spec.js';

export type { PersonName } from './parsers/name.js';

/** Options every prebuilt task takes: its question, an id, and any task override. */
export type PrebuiltOptions<T> = TaskOverrides<T> & {
  /** Spoken as the prompt (no model call). */
  question: string;
  /** Task id (defaults to the task kind, e.g. "email"). */
  name?: string;
};

function build<T>(
  kind: string,
  schema: z.ZodType<T>,
  instructions: string,
  defaults: TaskOverrides<T>,
  { question, name, ...overrides }: PrebuiltOptions<T>,
): TaskDefinition<T> {
  const base: TaskSpec<T> = {
    name: name ?? kind,
    schema,
    instructions,
    prompt: question,
    ...defaults,
  };
  return fromSpec<T>(mergeOverrides(base, overrides as Partial<TaskSpec<T>>));
}

const same =
  <T>(fn: (text: string) => ParseResult<T>) =>
  (value: T): ParseResult<T> =>
    typeof value === 'string' ? fn(value) : { kind: 'match', value };

/** A yes/no question; "yeah", "nope", "that's right" need no model. */
export function yesNo(options: PrebuiltOptions<boolean>): TaskDefinition<boolean> {
  return build(
    'yes_no',
    z.boolean(),
    'Get a yes or no answer to the question.',
    {
      parse: (text) => parse.yesNo(text),
      readBack: (v) => (v ? 'yes' : 'no'),
      expects: { kind: 'yesNo', phrases: YES_NO_PHRASES },
    },
    options,
  );
}

/** One option of a {@link choice} task. */
export interface ChoiceTaskOption<V extends string> {
  value: V;
  label: string;
  synonyms?: readonly string[];
}

/** Pick one of several options by label, synonym or position ("the second one"). */
export function choice<const V extends string>(
  options: PrebuiltOptions<V> & { options: readonly ChoiceTaskOption<V>[] },
): TaskDefinition<V> {
  const { options: choices, ...rest } = options;
  if (!Array.isArray(choices) || choices.length === 0) {
    throw new TasklineError(
      'invalid_argument',
      'choice({ options }) needs a non-empty array of { value, label, synonyms? }.',
    );
  }
  const values = choices.map((c) => c.value) as [V, ...V[]];
  const labels = choices.map((c) => `${c.value} (${c.label})`).join(', ');
  return build(
    'choice',
    z.enum(values) as unknown as z.ZodType<V>,
    `Get one of: ${labels}.`,
    {
      parse: (text) => parse.choice(text, choices),
      readBack: (v) => choices.find((c) => c.value === v)?.label ?? v,
      expects: {
        kind: 'choice',
        phrases: choices.flatMap((c) => [c.label, ...(c.synonyms ?? [])]),
      },
    },
    rest,
  );
}

/**
 * A number, optionally bounded and whole; "forty two" needs no model. With `keypad: true`
 * (and a `max`), the caller may also key it in: entry ends as soon as no more digits fit.
 */
export function number(
  options: Omit<PrebuiltOptions<number>, 'keypad'> & parse.NumberOptions & { keypad?: boolean },
): TaskDefinition<number> {
  const { min, max, integer, keypad, ...rest } = options;
  if (keypad && (max === undefined || !Number.isInteger(max) || max < 0)) {
    throw new TasklineError(
      'invalid_argument',
      'number({ keypad: true }) needs a whole `max` so keypad entry knows when it is complete.',
    );
  }
  const bounds = { min, max, integer };
  let schema = z.number();
  if (integer) schema = schema.int();
  if (min !== undefined) schema = schema.min(min);
  if (max !== undefined) schema = schema.max(max);
  return build(
    'number',
    schema,
    describeBounds('Get a number', bounds),
    {
      parse: (text) => parse.number(text, bounds),
      normalize: (v) => parse.number(String(v), bounds),
      keypad:
        keypad && max !== undefined
          ? {
              maxDigits: String(max).length,
              // "0", or keys no further digit can extend within `max`, are a whole answer.
              isComplete: (keys: string) => keys === '0' || Number(keys) * 10 > max,
            }
          : undefined,
      readBack: (v) => parse.readBack('number', v),
      expects: { kind: 'number', phrases: numberWords(min, max, integer), mayGrow: numberMayGrow },
    },
    rest,
  );
}

/** A calendar date as YYYY-MM-DD; "tomorrow" and "next Monday" resolve on the call's clock. */
export function date(
  options: PrebuiltOptions<string> & Omit<parse.DateOptions, 'now'>,
): TaskDefinition<string> {
  const { timeZone, prefer, ...rest } = options;
  return build(
    'date',
    z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD'),
    'Get a calendar date. Submit it as YYYY-MM-DD.',
    {
      parse: (text, ctx) => parse.date(text, { now: new Date(ctx.now), timeZone, prefer }),
      readBack: (v) => parse.readBack('date', v),
      expects: { kind: 'date', mayGrow: dateMayGrow },
    },
    rest,
  );
}

/** A time of day as 24-hour HH:MM; "half past three pm" needs no model. */
export function time(options: PrebuiltOptions<string> & parse.TimeOptions): TaskDefinition<string> {
  const { defaultPeriod, ...rest } = options;
  return build(
    'time',
    z.string().regex(/^\d{2}:\d{2}$/, 'a time as HH:MM (24-hour)'),
    'Get a time of day. Submit it as HH:MM on a 24-hour clock.',
    {
      parse: (text) => parse.time(text, { defaultPeriod }),
      // A canonical 24-hour value is final; anything else is read like speech.
      normalize: (v) =>
        /^([01]\d|2[0-3]):[0-5]\d$/.test(v)
          ? { kind: 'match', value: v }
          : parse.time(v, { defaultPeriod }),
      readBack: (v) => parse.readBack('time', v),
      expects: { kind: 'time', mayGrow: timeMayGrow },
    },
    rest,
  );
}

/** An email address; spoken forms ("john dot smith at gmail dot com") need no model. */
export function email(options: PrebuiltOptions<string>): TaskDefinition<string> {
  return build(
    'email',
    z.string(),
    'Get an email address.',
    {
      parse: (text) => parse.email(text),
      correct: (pending, text) => {
        const word = spelledWord(text);
        if (word === undefined) return { kind: 'nomatch' };
        const patched = patchEmail(pending, word);
        return patched === undefined ? NO_SINGLE_PART : parse.email(patched);
      },
      normalize: same((t) => parse.email(t)),
      confirm: 'audio',
      readBack: (v, spelled) => (spelled ? parse.readBack('email', v) : v),
      expects: { kind: 'email', phrases: ['at', 'dot'] },
    },
    options,
  );
}

/** A phone number, returned in E.164 ("+14155551234"). */
export function phone(
  options: PrebuiltOptions<string> & { defaultRegion?: CountryCode },
): TaskDefinition<string> {
  const { defaultRegion = 'US', ...rest } = options;
  return build(
    'phone',
    z.string(),
    `Get a phone number (default country ${defaultRegion}).`,
    {
      parse: (text) => parse.phone(text, { defaultRegion }),
      correct: (pending, text) => {
        const patched = patchDigitEnd(pending, text);
        return patched.kind === 'match' ? parse.phone(patched.value, { defaultRegion }) : patched;
      },
      normalize: same((t) => parse.phone(t, { defaultRegion })),
      confirm: 'audio',
      readBack: (v) => parse.readBack('phone', v),
      expects: {
        kind: 'phone',
        phrases: DIGIT_PHRASES,
        // A national number in North America has 10 digits; elsewhere lengths vary.
        digits: defaultRegion === 'US' || defaultRegion === 'CA' ? { min: 10, max: 10 } : undefined,
      },
    },
    rest,
  );
}

/** A person's name as { first, last? }; spelled letters ("J O H N") are understood. */
export function personName(
  options: PrebuiltOptions<parse.PersonName>,
): TaskDefinition<parse.PersonName> {
  const schema = z.object({ first: z.string().min(1), last: z.string().min(1).optional() });
  return build(
    'name',
    schema,
    "Get the caller's first and last name.",
    {
      parse: (text) => parse.name(text),
      correct: (pending, text) => {
        const word = spelledWord(text);
        if (word === undefined) return { kind: 'nomatch' };
        const parts = [pending.first, pending.last ?? ''];
        const at = spelledTarget(parts, word);
        if (at === undefined) return NO_SINGLE_PART;
        return {
          kind: 'match',
          value: at === 0 ? { ...pending, first: word } : { ...pending, last: word },
        };
      },
      confirm: 'audio',
      readBack: (v, spelled) =>
        spelled ? parse.readBack('name', v) : [v.first, v.last].filter(Boolean).join(' '),
      expects: { kind: 'name' },
    },
    options,
  );
}

/** A postal address. */
export interface Address {
  street: string;
  city: string;
  region?: string;
  postalCode: string;
  country: string;
}

/** A postal address (street, city, region, postal code, country); the model assembles it. */
export function address(options: PrebuiltOptions<Address>): TaskDefinition<Address> {
  const schema = z.object({
    street: z.string().min(3),
    city: z.string().min(1),
    region: z.string().optional(),
    postalCode: z.string().min(2).max(12),
    country: z.string().min(2),
  });
  return build(
    'address',
    schema,
    'Get the full postal address. Ask for missing parts one at a time.',
    {
      confirm: 'always',
      readBack: (v, spelled) => {
        const line = [v.street, v.city, v.region, v.postalCode, v.country]
          .filter(Boolean)
          .join(', ');
        return spelled ? `${line}; postal code ${parse.spellLetters(v.postalCode)}` : line;
      },
      expects: { kind: 'address' },
    },
    options,
  );
}

/** A rating on a scale (1-5 by default), by number or by label ("very satisfied"). */
export function likert(
  options: PrebuiltOptions<number> & Partial<parse.LikertOptions>,
): TaskDefinition<number> {
  const { min = 1, max = 5, labels, ...rest } = options;
  const scale = { min, max, labels };
  return build(
    'likert',
    z.number().int().min(min).max(max),
    `Get a rating from ${min} to ${max}.`,
    {
      parse: (text) => parse.likert(text, scale),
      readBack: (v) => (labels?.[v] ? `${v}, ${labels[v]}` : String(v)),
      expects: {
        kind: 'number',
        phrases: [...numberWords(min, max, true), ...Object.values(labels ?? {})],
      },
    },
    rest,
  );
}

/**
 * Free text up to `maxChars` (default 500), taken as said. Optional by default: a refusal or a
 * "nothing to add" reply ("skip", "no thanks", "nope, that's all") ends the task as `declined`
 * (a skippable flow step is skipped) instead of being stored; with `optional: false` only
 * refusals to answer are declined and a bare "no" or "nothing" is the answer.
 */
export function freeText(
  options: PrebuiltOptions<string> & Partial<parse.FreeTextOptions>,
): TaskDefinition<string> {
  const { maxChars = 500, minChars, optional = true, ...rest } = options;
  return build(
    'free_text',
    z.string().max(maxChars),
    "Get the caller's answer in their words.",
    {
      // A filler on its own ("um", "hmm") is not an answer: let the model or a re-prompt handle it.
      parse: (text) =>
        FILLER_ONLY.test(text)
          ? { kind: 'nomatch' }
          : parse.freeText(text, { maxChars, minChars, optional }),
      readBack: (v) => v,
      expects: { kind: 'freeText', judge: () => 'unknown' },
    },
    rest,
  );
}

/** A spoken digit string ("four one five five", "double five"). */
export function digits(
  options: PrebuiltOptions<string> & parse.DigitsOptions,
): TaskDefinition<string> {
  const { minLength, maxLength, validDigits, ...rest } = options;
  const rules = { minLength, maxLength, validDigits };
  return build(
    'digits',
    z.string().regex(/^[0-9*#]+$/, 'digits only'),
    'Get a string of digits.',
    {
      parse: (text) => parse.digits(text, rules),
      correct: (pending, text) => {
        const patched = patchDigitEnd(pending, text, { allowFirst: true });
        return patched.kind === 'match' ? parse.digits(patched.value, rules) : patched;
      },
      normalize: (v) => parse.digits(v, rules),
      readBack: (v) => parse.groupDigits(v),
      expects: {
        kind: 'digits',
        phrases: DIGIT_PHRASES,
        digits: { min: minLength ?? 1, max: maxLength ?? 32 },
      },
    },
    rest,
  );
}

/** A spelled correction that fits no single part of the value read back. */
const NO_SINGLE_PART: ParseResult<never> = {
  kind: 'invalid',
  reason: "Sorry, I couldn't tell which part that spelling fixes.",
};

const FILLER_ONLY = /^[\s\p{P}]*(?:(?:um+|uh+|hmm+|er+|ah+|mm+)[\s\p{P}]*)*$/iu;

const SMALL_NUMBERS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];

/** The words of every whole number a small scale allows (0-20), as recogniser hints. */
function numberWords(min = 0, max?: number, integer?: boolean): string[] {
  if (max === undefined || !integer || min < 0 || max > 20 || min > max) return [];
  return SMALL_NUMBERS.slice(min, max + 1);
}

function describeBounds(
  base: string,
  b: { min?: number; max?: number; integer?: boolean },
): string {
  const parts = [base];
  if (b.integer) parts.push('(a whole number)');
  if (b.min !== undefined) parts.push(`no less than ${b.min}`);
  if (b.max !== undefined) parts.push(`no more than ${b.max}`);
  return `${parts.join(' ')}.`;
}
