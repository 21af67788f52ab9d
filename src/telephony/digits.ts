import type { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import { checkOptions, millis, type OptionTable, whole } from '../core/options.js';
import { maskPII } from '../core/pii.js';
import { type CaptureDefinition, captureDefinition } from '../tasks/define.js';
import { spokenDigits } from '../tasks/parsers/digits.js';
import type { ParseResult } from '../tasks/parsers/result.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from '../tasks/policy.js';
import { DIGIT_PHRASES } from '../tasks/task-expectation.js';
import { type TaskSpec, TypedTask } from '../tasks/typed-task.js';
import { checkKey, spokenKey } from './keys.js';

/**
 * Options of {@link collectDigits}, with Twilio `<Gather>` semantics: input ends at the
 * finish key, at `maxDigits`, or after `interDigitTimeoutMs` without a key.
 */
export interface CollectDigitsOptions {
  /** Task id (default "digits"): scripts, captures and logs key on it. */
  name?: string;
  /** Spoken with `session.say` when the task starts; the first key interrupts it. */
  prompt: string;
  /** Shorter prompt after a failure (default: the prompt). */
  reprompt?: string;
  /** Fewest digits accepted: 1 to 64, at most `maxDigits` (default 1). */
  minDigits?: number;
  /** Input ends as soon as this many digits are in: 1 to 64 (default 32). */
  maxDigits?: number;
  /** Ends input early (default '#'); '' disables it. Never part of the value. */
  finishOnKey?: string;
  /** Removes the last digit entered (e.g. '*'); off by default. */
  deleteKey?: string;
  /**
   * Silence after the prompt before it counts as no input: 500 to 120,000 ms (default:
   * retry.noInputTimeoutMs).
   */
  firstDigitTimeoutMs?: number;
  /** Silence between keys that ends input with what was entered: 500 to 120,000 ms (default 5,000 ms). */
  interDigitTimeoutMs?: number;
  /** Every key the value may contain (default "0123456789"). */
  validDigits?: string;
  /** Extra rule on the entered digits: return the problem in words, or undefined. */
  validator?: (digits: string) => string | undefined;
  /** Accept spoken digits (parsed without a model). Default: true unless `mask`. */
  allowSpeech?: boolean;
  /** Never put the value in chat context or logs in clear ("****" instead). */
  mask?: boolean;
  retry?: Partial<RetryPolicy<string>>;
  watchdog?: Partial<Watchdog>;
  /** Chat history the task starts from. */
  chatCtx?: llm.ChatContext;
}

/** {@link CollectDigitsOptions} with every default applied and checked. */
export interface ResolvedDigitsOptions
  extends Required<
    Omit<
      CollectDigitsOptions,
      'reprompt' | 'deleteKey' | 'validator' | 'retry' | 'watchdog' | 'chatCtx'
    >
  > {
  reprompt?: string;
  deleteKey?: string;
  validator?: (digits: string) => string | undefined;
  retry: RetryPolicy<string>;
  watchdog: Watchdog;
  chatCtx?: llm.ChatContext;
}

/** How long collectDigits (and a menu) waits for a key, first or next: 500 ms to 2 minutes. */
export const KEY_TIMEOUT = millis(500, 120_000);

/** How many digits collectDigits takes, each with its accepted range. */
const DIGIT_COUNTS = {
  minDigits: { range: whole(1, 64), default: 1 },
  maxDigits: { range: whole(1, 64), default: 32 },
} as const satisfies OptionTable;

/** Applies defaults and rejects contradictory options with a clear TasklineError. */
export function resolveDigitsOptions(options: CollectDigitsOptions): ResolvedDigitsOptions {
  const retry = resolveRetry(options.retry);
  const watchdog = resolveWatchdog(options.watchdog);
  const name = options.name ?? 'digits';
  if (!/^[a-z][a-z0-9_]*$/i.test(name)) {
    throw new TasklineError(
      'invalid_argument',
      `Task name "${name}" must start with a letter and use only letters, digits and "_".`,
    );
  }
  if (!options.prompt?.trim()) {
    throw new TasklineError('invalid_argument', 'collectDigits needs a prompt to speak.');
  }
  const { minDigits, maxDigits } = checkOptions(DIGIT_COUNTS, options);
  if (minDigits > maxDigits) {
    throw new TasklineError(
      'invalid_argument',
      `minDigits (${minDigits}) cannot be larger than maxDigits (${maxDigits}).`,
    );
  }
  const finishOnKey = options.finishOnKey ?? '#';
  checkKey('finishOnKey', finishOnKey, true);
  if (options.deleteKey !== undefined) checkKey('deleteKey', options.deleteKey);
  if (options.deleteKey !== undefined && options.deleteKey === finishOnKey) {
    throw new TasklineError(
      'invalid_argument',
      `deleteKey and finishOnKey are both "${finishOnKey}": give them different keys.`,
    );
  }
  const validDigits = options.validDigits ?? '0123456789';
  for (const c of validDigits) checkKey('every character of validDigits', c);
  for (const [label, key] of [
    ['finishOnKey', finishOnKey],
    ['deleteKey', options.deleteKey],
  ] as const) {
    if (key && validDigits.includes(key)) {
      throw new TasklineError(
        'invalid_argument',
        `${label} "${key}" is also in validDigits: a key cannot both end input and be part of it.`,
      );
    }
  }
  const { firstDigitTimeoutMs, interDigitTimeoutMs } = checkOptions(
    {
      firstDigitTimeoutMs: { range: KEY_TIMEOUT, default: retry.noInputTimeoutMs },
      interDigitTimeoutMs: { range: KEY_TIMEOUT, default: 5_000 },
    },
    options,
  );
  const mask = options.mask ?? false;
  return {
    ...options,
    name,
    minDigits,
    maxDigits,
    finishOnKey,
    validDigits,
    firstDigitTimeoutMs,
    interDigitTimeoutMs,
    allowSpeech: options.allowSpeech ?? !mask,
    mask,
    retry,
    watchdog,
  };
}

/**
 * The schema of a collection's value: its length, its keys and its validator, so that anything
 * reading the schema (a checkpoint being resumed, a flow document) checks what the task checks.
 */
function digitsSchema(o: ResolvedDigitsOptions): z.ZodType<string> {
  const keys = [...o.validDigits];
  return z
    .string()
    .min(o.minDigits)
    .max(o.maxDigits)
    .refine((v) => [...v].every((c) => keys.includes(c)), {
      message: `only the keys ${keys.join(' ')}`,
    })
    .refine((v) => {
      try {
        return o.validator?.(v) === undefined;
      } catch {
        return false;
      }
    }, 'rejected by the validator');
}

/**
 * The capture spec of a digit collection: keys (finish, delete and valid keys, Gather's
 * timeouts) and, if allowed, spoken digits read without a model.
 */
export function digitsSpec(o: ResolvedDigitsOptions): TaskSpec<string> {
  return {
    name: o.name,
    instructions: `Collect ${describeLength(o)} digits from the caller's keypad.`,
    schema: digitsSchema(o),
    prompt: o.prompt,
    reprompt: o.reprompt,
    // The first-digit timeout is the task's no-input timeout.
    retry: { ...o.retry, noInputTimeoutMs: o.firstDigitTimeoutMs },
    watchdog: o.watchdog,
    chatCtx: o.chatCtx,
    keypad: {
      maxDigits: o.maxDigits,
      finishOnKey: o.finishOnKey,
      deleteKey: o.deleteKey,
      // Only keys the value may contain count toward maxDigits: a stray "*" never completes
      // an entry (it is rejected with the rest of the entry when that ends).
      validKeys: o.validDigits,
      interDigitTimeoutMs: o.interDigitTimeoutMs,
    },
    allowSpeech: o.allowSpeech,
    mask: o.mask,
    modelFallback: false,
    detectRefusal: false,
    parse: (text, ctx) => readDigits(o, text, ctx.modality === 'dtmf'),
    display: (value) => value,
    // Read back key by key ("4 1 2 3"), never as a number ("four thousand one hundred…").
    readBack: (value) => [...value].join(' '),
    expects: {
      kind: 'digits',
      phrases: DIGIT_PHRASES,
      digits: { min: o.minDigits, max: o.maxDigits },
    },
    logComponent: 'taskline.telephony',
  };
}

/** Reads keys (as entered) or spoken digits, and checks them against the options. */
function readDigits(o: ResolvedDigitsOptions, text: string, keyed: boolean): ParseResult<string> {
  let value = keyed ? text : spokenDigits(text);
  if (value === undefined) return { kind: 'nomatch' };
  if (!keyed && o.finishOnKey && value.endsWith(o.finishOnKey)) value = value.slice(0, -1);
  const problem = problemWith(o, value);
  return problem ? { kind: 'invalid', reason: problem } : { kind: 'match', value };
}

function problemWith(o: ResolvedDigitsOptions, value: string): string | undefined {
  const bad = [...value].find((c) => !o.validDigits.includes(c));
  if (bad !== undefined) return `Sorry, ${spokenKey(bad)} can't be used here.`;
  const n = value.length;
  if (n < o.minDigits || n > o.maxDigits) {
    const need =
      o.minDigits === o.maxDigits
        ? `exactly ${o.minDigits}`
        : n < o.minDigits
          ? `at least ${o.minDigits}`
          : `no more than ${o.maxDigits}`;
    return `I got ${n} digit${n === 1 ? '' : 's'}, but I need ${need}.`;
  }
  const problem = o.validator?.(value);
  return problem && o.mask ? maskPII(problem) : problem;
}

/**
 * Collects a digit string from the keypad (and, if allowed, from speech without a model):
 * taskline's capture engine with a digit spec. Resolves `Outcome<string>`; a pure DTMF path
 * never calls a model.
 */
export class DigitsTask extends TypedTask<string> {
  readonly options: ResolvedDigitsOptions;

  constructor(options: ResolvedDigitsOptions) {
    super(digitsSpec(options));
    this.options = options;
  }
}

/** A reusable digit collection: `create()` gives a fresh task, `run()` awaits one inline. */
export interface DigitsDefinition
  extends CaptureDefinition<string, Partial<CollectDigitsOptions>, DigitsDefinition, DigitsTask> {
  readonly options: ResolvedDigitsOptions;
}

/**
 * Defines a keypad digit collection with Twilio `<Gather>` semantics, checked now rather
 * than mid-call. Per-use overrides merge into the definition (`retry` key by key).
 *
 * @example
 * const pin = collectDigits({ name: 'pin', prompt: 'Enter your 4-digit PIN, then press pound.',
 *   minDigits: 4, maxDigits: 4, mask: true });
 * const outcome = await pin.run(); // inside a tool or onEnter
 */
export function collectDigits(options: CollectDigitsOptions): DigitsDefinition {
  const resolved = resolveDigitsOptions(options);
  const definition = captureDefinition(
    options,
    (o) => digitsSpec(o === options ? resolved : resolveDigitsOptions(o)),
    (_spec, o) => new DigitsTask(o === options ? resolved : resolveDigitsOptions(o)),
    collectDigits,
  );
  return { ...definition, options: resolved };
}

function describeLength(o: { minDigits: number; maxDigits: number }): string {
  if (o.minDigits === o.maxDigits) return `exactly ${o.minDigits}`;
  return `${o.minDigits} to ${o.maxDigits}`;
}
