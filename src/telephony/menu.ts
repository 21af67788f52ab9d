import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, type voice } from '@livekit/agents';
import { z } from 'zod/v4';
import type { InputModality } from '../core/call.js';
import { TasklineError } from '../core/errors.js';
import { countModelCallAvoided } from '../observability/tasks.js';
import type { Outcome } from '../outcome.js';
import { joinSpeech } from '../tasks/capture.js';
import { choice } from '../tasks/parsers/choice.js';
import { spokenDigits } from '../tasks/parsers/digits.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from '../tasks/policy.js';
import { recordCapture } from './captures.js';
import { KeypadTask } from './keypad-task.js';
import { checkKey, spokenKey } from './keys.js';

/**
 * The value a menu resolves (as `{ status: 'ok', value: BACK }`) when the caller presses
 * the back key or says "go back": a distinct value the caller's code branches on, so
 * going back stays an ordinary `ok` outcome instead of a failure status.
 */
export const BACK: unique symbol = Symbol.for('taskline.menu.back');

/** One menu entry: what is read out, other words for it, and what the menu resolves. */
export interface MenuOption<V> {
  /** Read out in the prompt: "For {label}, press 1." */
  label: string;
  /** Other ways a caller may say it ("stolen", "missing card"). */
  synonyms?: readonly string[];
  /** The menu's `ok` value when this option is picked. */
  value: V;
}

/** Options of {@link menu}. */
export interface MenuConfig<V> {
  /** Task id (default "menu"): scripts, captures and logs key on it. */
  name?: string;
  /** Said before the numbered options ("Main menu."). */
  prompt?: string;
  /**
   * Keyed by the phone key that picks it ('1', '2', …, '*', '#'); read out in key order
   * (JavaScript lists digit keys in ascending order, whatever order they are written in).
   */
  options: Readonly<Record<string, MenuOption<V>>>;
  /** Replays the menu. */
  repeatKey?: string;
  /** Resolves {@link BACK}. */
  backKey?: string;
  /** Accept spoken answers (default true). */
  allowSpeech?: boolean;
  /**
   * Also pick options by position in speech ("the second one", "the last one"). Off by default:
   * on a phone menu "two" is a key, and "the second one" is only clear when the options were
   * read as a list.
   */
  positional?: boolean;
  /** Ask the model when speech matches no label, synonym or key (default true). */
  modelFallback?: boolean;
  /** Extra guidance for the fallback model. */
  instructions?: string;
  /** A model for the fallback (the session's otherwise). */
  llm?: llm.LLM;
  /** Silence after the menu before it counts as no input (default: retry.noInputTimeoutMs). */
  firstKeyTimeoutMs?: number;
  retry?: Partial<RetryPolicy<V>>;
  watchdog?: Partial<Watchdog>;
  chatCtx?: llm.ChatContext;
}

type Stream = ReadableStream<llm.ChatChunk | string | FlushSentinel>;

const REPEAT =
  /^\W*(please\s+)?(repeat( that| the options| the menu)?|say (that|it) again|again|what were the options|menu)\W*(please)?\W*$/i;
const GO_BACK = /^\W*(go\s+back|back|previous( menu)?|return)\W*(please)?\W*$/i;
const KEY_LEAD = /^\s*(i('ll| will)? )?(press(ed)?|option|number|key|select)\s+/i;

/** Checks a menu's keys at definition time (clashes, non-keys, empty menus). */
export function validateMenu<V>(config: MenuConfig<V>): void {
  const keys = Object.keys(config.options);
  if (keys.length === 0) {
    throw new TasklineError('invalid_argument', 'A menu needs at least one option.');
  }
  for (const key of keys) {
    checkKey(`Menu option key ${JSON.stringify(key)}`, key);
    if (!config.options[key]?.label?.trim()) {
      throw new TasklineError(
        'invalid_argument',
        `Menu option "${key}" needs a label to read out.`,
      );
    }
  }
  if (config.repeatKey !== undefined) checkKey('repeatKey', config.repeatKey);
  if (config.backKey !== undefined) checkKey('backKey', config.backKey);
  for (const [label, key] of [
    ['repeatKey', config.repeatKey],
    ['backKey', config.backKey],
  ] as const) {
    if (key !== undefined && keys.includes(key)) {
      throw new TasklineError(
        'invalid_argument',
        `${label} "${key}" is also the key of option "${config.options[key]?.label}": pick another key for one of them.`,
      );
    }
  }
  if (config.repeatKey !== undefined && config.repeatKey === config.backKey) {
    throw new TasklineError(
      'invalid_argument',
      `repeatKey and backKey are both "${config.repeatKey}": give them different keys.`,
    );
  }
}

/** The spoken menu: "Main menu. For billing, press 1. For support, press 2. …". */
export function menuPrompt<V>(config: MenuConfig<V>): string {
  const parts = [config.prompt ?? ''];
  for (const [key, option] of Object.entries(config.options)) {
    parts.push(`For ${option.label}, press ${spokenKey(key)}`);
  }
  if (config.repeatKey !== undefined) {
    parts.push(`To hear these options again, press ${spokenKey(config.repeatKey)}`);
  }
  if (config.backKey !== undefined) parts.push(`To go back, press ${spokenKey(config.backKey)}`);
  return joinSpeech(...parts);
}

/**
 * A phone menu: keys pick options, speech is matched on keys, labels, synonyms and partial
 * mentions ("agent please" for "an agent", "operator") without a model, and only free speech
 * nothing matches goes to the model (a `submit` tool taking the option's key, or
 * `report_unclear`).
 */
export class MenuTask<V> extends KeypadTask<V | typeof BACK> {
  readonly menu: MenuConfig<V>;
  private readonly prompt: string;

  constructor(config: MenuConfig<V>) {
    const name = config.name ?? 'menu';
    const retry = resolveRetry(config.retry) as RetryPolicy<V | typeof BACK>;
    const prompt = menuPrompt(config);
    const keys = Object.keys(config.options);
    const lines = Object.entries(config.options).map(
      ([key, o]) =>
        `- ${key}: ${o.label}${o.synonyms?.length ? ` (also: ${o.synonyms.join(', ')})` : ''}`,
    );
    super({
      name,
      instructions: [
        config.instructions ?? '',
        'The caller is choosing from a phone menu. Options (key: label):',
        ...lines,
        `Call submit with the key of the option the caller wants${config.backKey !== undefined ? `, or "${config.backKey}" to go back` : ''}.`,
        'If the request matches no option or is unclear, call report_unclear. Never chat.',
      ]
        .filter(Boolean)
        .join('\n'),
      prompt,
      retry,
      watchdog: resolveWatchdog(config.watchdog),
      firstKeyTimeoutMs: config.firstKeyTimeoutMs ?? retry.noInputTimeoutMs,
      llm: config.llm,
      chatCtx: config.chatCtx,
      tools:
        config.modelFallback === false
          ? []
          : [
              llm.tool({
                name: 'submit',
                description: `Pick the menu option the caller wants, by its key (${keys.join(', ')}).`,
                parameters: z.object({ key: z.string().describe('The key of the option') }),
                execute: async ({ key }) => this.onModelPick(key),
              }),
              llm.tool({
                name: 'report_unclear',
                description: 'The request matches no option or could not be understood.',
                parameters: z.object({ reason: z.string().describe('Why, briefly') }),
                execute: async () => {
                  const next = this.fail('noMatch');
                  if (next) this.speak(next);
                },
              }),
            ],
    });
    this.menu = config;
    this.prompt = prompt;
  }

  protected override onListen(): void {
    this.armKeyTimer(this.config.firstKeyTimeoutMs, () => {
      const next = this.fail('noInput');
      if (next) this.speak(next);
    });
  }

  protected override onKey(key: string): void {
    this.cancelKeyTimer();
    this.addCallerLine(`(keypad) ${key}`);
    const next = this.pick(key, 'dtmf');
    if (next) this.speak(next);
  }

  protected override async onSpeech(
    message: llm.ChatMessage,
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    const text = message.textContent ?? '';
    const modality = this.modality();
    if (this.menu.allowSpeech === false) {
      return this.reply(this.fail('noMatch', 'Please use the keypad on your phone.'));
    }
    if (REPEAT.test(text)) return this.reply(this.prompt);
    if (this.menu.backKey !== undefined && GO_BACK.test(text)) {
      return this.reply(this.pick(this.menu.backKey, modality));
    }
    const key = spokenDigits(text.replace(KEY_LEAD, ''));
    if (key !== undefined && key.length === 1 && this.menu.options[key]) {
      countModelCallAvoided(this);
      return this.reply(this.pick(key, modality));
    }
    const options = Object.entries(this.menu.options).map(([k, o]) => ({
      value: k,
      label: o.label,
      synonyms: o.synonyms,
    }));
    // Labels, synonyms, a word only one option uses ("agent please" for "an agent"), common
    // words for an agent ("operator"); never a guess when two options match.
    const parsed = choice(text, options, { positional: this.menu.positional === true });
    if (parsed.kind === 'match') {
      countModelCallAvoided(this);
      return this.reply(this.pick(parsed.value, modality));
    }
    if (this.menu.modelFallback === false) return this.reply(this.fail('noMatch'));
    return this.model(chatCtx, toolCtx, modelSettings);
  }

  protected override get fullPrompt(): string {
    return this.prompt;
  }

  /** Resolves a key; returns what to say next (repeat or an error), if anything. */
  private pick(key: string, modality: InputModality): string | undefined {
    if (key === this.menu.repeatKey) return this.prompt;
    if (key === this.menu.backKey) {
      recordCapture(this.session, this.config.name, 'back');
      this.finish({ status: 'ok', value: BACK, attempts: this.failures() + 1, modality });
      return undefined;
    }
    const option = this.menu.options[key];
    if (!option) return this.fail('invalid', `Sorry, ${spokenKey(key)} is not an option.`);
    recordCapture(this.session, this.config.name, option.label);
    this.finish({ status: 'ok', value: option.value, attempts: this.failures() + 1, modality });
    return undefined;
  }

  private onModelPick(key: string): undefined {
    if (this.finished) return undefined;
    const k = key.trim();
    if (k === this.menu.backKey || this.menu.options[k]) {
      this.pick(k, this.modality());
      return undefined;
    }
    // Counted once for the utterance and re-prompted here; the model is not asked again.
    const next = this.fail('invalid', 'Sorry, that is not an option.');
    if (next) this.speak(next);
    throw new llm.ToolError(
      `There is no option "${k}". Valid keys: ${Object.keys(this.menu.options).join(', ')}.`,
    );
  }
}

/** What may change per use of a menu (its options and keys are fixed at definition). */
export type MenuOverrides<V> = Partial<
  Pick<
    MenuConfig<V>,
    | 'name'
    | 'prompt'
    | 'instructions'
    | 'llm'
    | 'firstKeyTimeoutMs'
    | 'retry'
    | 'watchdog'
    | 'chatCtx'
  >
>;

/** A reusable menu: `create()` gives a fresh task, `run()` awaits one inline. */
export interface MenuDefinition<V, T = V> {
  readonly name: string;
  readonly config: MenuConfig<V>;
  /** The spoken menu. */
  readonly prompt: string;
  /** A new task (an upstream AgentTask resolving `Outcome<T>`), with per-use overrides. */
  create(overrides?: MenuOverrides<V>): KeypadTask<T>;
  /** Creates the task and awaits its outcome (inside a tool or `onEnter`). */
  run(overrides?: MenuOverrides<V>): Promise<Outcome<T>>;
}

/**
 * Defines a phone menu, auto-numbered into its prompt ("For billing, press 1…"). Keys are
 * checked now: an option key that clashes with `repeatKey` or `backKey` throws a
 * TasklineError at definition time. With a `backKey` the outcome's value may be
 * {@link BACK}.
 *
 * @example
 * const main = menu({ name: 'main_menu', options: {
 *   '1': { label: 'your balance', synonyms: ['balance'], value: 'balance' },
 *   '2': { label: 'a lost card', synonyms: ['lost', 'stolen'], value: 'lost' } } });
 * const pick = await main.run(); // Outcome<'balance' | 'lost'>
 */
export function menu<const V>(
  config: MenuConfig<V> & { backKey: string },
): MenuDefinition<V, V | typeof BACK>;
export function menu<const V>(config: MenuConfig<V>): MenuDefinition<V>;
export function menu<const V>(config: MenuConfig<V>): MenuDefinition<V, V | typeof BACK> {
  validateMenu(config);
  resolveRetry(config.retry);
  resolveWatchdog(config.watchdog);
  const create = (overrides: MenuOverrides<V> = {}): KeypadTask<V | typeof BACK> => {
    const merged = { ...config, ...overrides };
    resolveRetry(merged.retry);
    return new MenuTask<V>(merged);
  };
  return {
    name: config.name ?? 'menu',
    config,
    prompt: menuPrompt(config),
    create,
    run: (overrides) => create(overrides).run(),
  };
}
