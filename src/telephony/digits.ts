import type { ReadableStream } from 'node:stream/web';
import type { FlushSentinel, llm } from '@livekit/agents';
import type { InputModality } from '../core/call.js';
import { TasklineError } from '../core/errors.js';
import { maskPII, maskValue, registerSecret } from '../core/pii.js';
import { countModelCallAvoided } from '../observability/tasks.js';
import type { Outcome } from '../outcome.js';
import { spokenDigits } from '../tasks/parsers/digits.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from '../tasks/policy.js';
import { recordCapture } from './captures.js';
import { KeypadTask } from './keypad-task.js';
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
  /** Fewest digits accepted (default 1). */
  minDigits?: number;
  /** Input ends as soon as this many digits are in (default 32). */
  maxDigits?: number;
  /** Ends input early (default '#'); '' disables it. Never part of the value. */
  finishOnKey?: string;
  /** Removes the last digit entered (e.g. '*'); off by default. */
  deleteKey?: string;
  /** Silence after the prompt before it counts as no input (default: retry.noInputTimeoutMs). */
  firstDigitTimeoutMs?: number;
  /** Silence between keys that ends input with what was entered (default 5,000 ms). */
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

const DURATION = { min: 500, max: 120_000 };

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
  const minDigits = options.minDigits ?? 1;
  const maxDigits = options.maxDigits ?? 32;
  for (const [key, v] of [
    ['minDigits', minDigits],
    ['maxDigits', maxDigits],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > 64) {
      throw new TasklineError(
        'invalid_argument',
        `${key} must be a whole number from 1 to 64 (got ${String(v)}).`,
      );
    }
  }
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
  const firstDigitTimeoutMs = options.firstDigitTimeoutMs ?? retry.noInputTimeoutMs;
  const interDigitTimeoutMs = options.interDigitTimeoutMs ?? 5_000;
  for (const [key, v] of [
    ['firstDigitTimeoutMs', firstDigitTimeoutMs],
    ['interDigitTimeoutMs', interDigitTimeoutMs],
  ] as const) {
    if (!Number.isFinite(v) || v < DURATION.min || v > DURATION.max) {
      throw new TasklineError(
        'invalid_argument',
        `${key} must be between ${DURATION.min} and ${DURATION.max} ms (got ${String(v)}).`,
      );
    }
  }
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

type Stream = ReadableStream<llm.ChatChunk | string | FlushSentinel>;

/**
 * Collects a digit string from the keypad (and, if allowed, from speech without a
 * model). Resolves `Outcome<string>`; a pure DTMF path never calls a model.
 */
export class DigitsTask extends KeypadTask<string> {
  readonly options: ResolvedDigitsOptions;
  private buffer = '';

  constructor(options: ResolvedDigitsOptions) {
    super({
      name: options.name,
      instructions: `Collect ${describeLength(options)} digits from the caller's keypad.`,
      prompt: options.prompt,
      reprompt: options.reprompt,
      retry: options.retry,
      watchdog: options.watchdog,
      firstKeyTimeoutMs: options.firstDigitTimeoutMs,
      secret: options.mask,
      chatCtx: options.chatCtx,
    });
    this.options = options;
  }

  protected override onListen(): void {
    if (this.buffer === '') {
      this.armKeyTimer(this.options.firstDigitTimeoutMs, () => this.noKeys());
    } else {
      this.armInterDigit();
    }
  }

  protected override onKey(key: string): void {
    const o = this.options;
    if (o.finishOnKey !== '' && key === o.finishOnKey) {
      this.submitKeys();
      return;
    }
    if (o.deleteKey !== undefined && key === o.deleteKey) {
      this.buffer = this.buffer.slice(0, -1);
      this.armInterDigit();
      return;
    }
    this.buffer += key;
    // Only keys the value may contain count toward maxDigits: a stray "*" never completes
    // an entry (it is rejected with the rest of the entry when that ends).
    if (countValid(this.buffer, o.validDigits) >= o.maxDigits) {
      this.submitKeys();
      return;
    }
    this.armInterDigit();
  }

  protected override async onSpeech(message: llm.ChatMessage): Promise<Stream> {
    const text = message.textContent ?? '';
    let value = spokenDigits(text);
    if (this.options.mask) {
      if (value) registerSecret(value);
      scrubMessage(this, message, `(spoken) ${maskValue(value ?? text)}`);
    }
    this.buffer = '';
    if (!this.options.allowSpeech) {
      return this.reply(this.fail('noMatch', 'Please use the keypad on your phone.'));
    }
    if (value === undefined) return this.reply(this.fail('noMatch'));
    if (this.options.finishOnKey && value.endsWith(this.options.finishOnKey)) {
      value = value.slice(0, -1);
    }
    countModelCallAvoided(this);
    return this.reply(this.evaluate(value, this.modality()));
  }

  private armInterDigit(): void {
    this.armKeyTimer(this.options.interDigitTimeoutMs, () =>
      this.buffer === '' ? this.noKeys() : this.submitKeys(),
    );
  }

  private noKeys(): void {
    this.buffer = '';
    const next = this.fail('noInput');
    if (next) this.speak(next);
  }

  private submitKeys(): void {
    const keys = this.buffer;
    this.buffer = '';
    this.cancelKeyTimer();
    if (keys === '') {
      this.noKeys();
      return;
    }
    if (this.options.mask) registerSecret(keys);
    this.addCallerLine(`(keypad) ${this.options.mask ? maskValue(keys) : keys}`);
    const next = this.evaluate(keys, 'dtmf');
    if (next) this.speak(next);
  }

  /** Accepts the value or counts it invalid; returns what to say next, if anything. */
  private evaluate(value: string, modality: InputModality): string | undefined {
    const problem = this.problemWith(value);
    if (problem) return this.fail('invalid', problem);
    recordCapture(this.session, this.options.name, value, { masked: this.options.mask });
    this.finish({ status: 'ok', value, attempts: this.failures() + 1, modality });
    return undefined;
  }

  private problemWith(value: string): string | undefined {
    const o = this.options;
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
}

/** A reusable digit collection: `create()` gives a fresh task, `run()` awaits one inline. */
export interface DigitsDefinition {
  readonly name: string;
  readonly options: ResolvedDigitsOptions;
  /** A new task (an upstream AgentTask), with per-use overrides. */
  create(overrides?: Partial<CollectDigitsOptions>): DigitsTask;
  /** Creates the task and awaits its outcome (inside a tool or `onEnter`). */
  run(overrides?: Partial<CollectDigitsOptions>): Promise<Outcome<string>>;
  /** A new definition with these overrides baked in. */
  with(overrides: Partial<CollectDigitsOptions>): DigitsDefinition;
}

/**
 * Defines a keypad digit collection with Twilio `<Gather>` semantics, checked now rather
 * than mid-call.
 *
 * @example
 * const pin = collectDigits({ name: 'pin', prompt: 'Enter your 4-digit PIN, then press pound.',
 *   minDigits: 4, maxDigits: 4, mask: true });
 * const outcome = await pin.run(); // inside a tool or onEnter
 */
export function collectDigits(options: CollectDigitsOptions): DigitsDefinition {
  const resolved = resolveDigitsOptions(options);
  const definition: DigitsDefinition = {
    name: resolved.name,
    options: resolved,
    create: (overrides) =>
      new DigitsTask(overrides ? resolveDigitsOptions({ ...options, ...overrides }) : resolved),
    run: (overrides) => definition.create(overrides).run(),
    with: (overrides) => collectDigits({ ...options, ...overrides }),
  };
  return definition;
}

function countValid(keys: string, validDigits: string): number {
  let n = 0;
  for (const k of keys) if (validDigits.includes(k)) n += 1;
  return n;
}

function describeLength(o: { minDigits: number; maxDigits: number }): string {
  if (o.minDigits === o.maxDigits) return `exactly ${o.minDigits}`;
  return `${o.minDigits} to ${o.maxDigits}`;
}

/** Replaces a caller message's text everywhere the session keeps it (chat context, history). */
function scrubMessage(task: DigitsTask, message: llm.ChatMessage, text: string): void {
  message.content = [text];
  for (const ctx of [task.session.history, task.chatCtx]) {
    const item = ctx.items.find((i) => i.id === message.id);
    if (item && item.type === 'message') item.content = [text];
  }
}
