import type { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import { checkOptions, type OptionTable } from '../core/options.js';
import { joinSpeech } from '../tasks/capture.js';
import { type CaptureDefinition, captureDefinition } from '../tasks/define.js';
import { choice } from '../tasks/parsers/choice.js';
import { spokenDigits } from '../tasks/parsers/digits.js';
import type { ParseResult } from '../tasks/parsers/result.js';
import type { RetryPolicy, Watchdog } from '../tasks/policy.js';
import { type TaskSpec, TypedTask } from '../tasks/typed-task.js';
import { KEY_TIMEOUT } from './digits.js';
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
  /**
   * Silence after the menu before it counts as no input: 500 to 120,000 ms, as collectDigits'
   * key timeouts (default: retry.noInputTimeoutMs). Checked when the menu is defined.
   */
  firstKeyTimeoutMs?: number;
  retry?: Partial<RetryPolicy<V>>;
  watchdog?: Partial<Watchdog>;
  chatCtx?: llm.ChatContext;
}

/** The wait of {@link MenuConfig}, with its accepted range. */
const MENU_WAITS = { firstKeyTimeoutMs: { range: KEY_TIMEOUT } } as const satisfies OptionTable;

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

/** What a menu resolves: an option's value, or {@link BACK}. */
type Pick<V> = V | typeof BACK;

/**
 * The capture spec of a phone menu: keys pick options; speech is matched on keys, labels,
 * synonyms and partial mentions ("agent please" for "an agent", "operator") without a model;
 * only free speech nothing matches goes to the model (a `submit` tool taking the option's
 * key, or `report_unclear`), and the menu words its own re-prompts.
 */
export function menuSpec<V>(config: MenuConfig<V>): TaskSpec<Pick<V>> {
  const name = config.name ?? 'menu';
  const keys = Object.keys(config.options);
  const prompt = menuPrompt(config);
  const lines = Object.entries(config.options).map(
    ([key, o]) =>
      `- ${key}: ${o.label}${o.synonyms?.length ? ` (also: ${o.synonyms.join(', ')})` : ''}`,
  );
  // Named as the menu's own option, not as the retry policy it feeds.
  const { firstKeyTimeoutMs } = checkOptions(MENU_WAITS, config, { owner: `menu "${name}"` });
  const { retry } = config;
  const noInputTimeoutMs = firstKeyTimeoutMs ?? retry?.noInputTimeoutMs;
  const values: Pick<V>[] = [
    ...Object.values(config.options).map((o) => o.value),
    ...(config.backKey !== undefined ? [BACK as typeof BACK] : []),
  ];
  return {
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
    schema: menuSchema(values),
    prompt,
    retry: {
      ...(retry as Partial<RetryPolicy<Pick<V>>> | undefined),
      ...(noInputTimeoutMs !== undefined ? { noInputTimeoutMs } : {}),
    },
    watchdog: config.watchdog,
    llm: config.llm,
    chatCtx: config.chatCtx,
    // Every key is a whole answer: options may be on any key, '#' and '*' included. The
    // menu's own keys are its options, repeat and back keys; another key may be a flow-wide
    // request (0 for a person) before it is "not an option".
    keypad: {
      maxDigits: 1,
      finishOnKey: '',
      ownKeys: [...keys, config.repeatKey ?? '', config.backKey ?? ''].join(''),
    },
    repeat: { key: config.repeatKey, phrases: REPEAT },
    allowSpeech: config.allowSpeech,
    modelFallback: config.modelFallback,
    detectRefusal: false,
    parse: (text, ctx) => readMenu(config, text, ctx.modality === 'dtmf'),
    submit: {
      description: `Pick the menu option the caller wants, by its key (${keys.join(', ')}).`,
      parameters: KEY_PARAMETERS,
      args: (value) => ({
        key:
          value === BACK
            ? config.backKey
            : Object.entries(config.options).find(([, o]) => o.value === value)?.[0],
      }),
      read: ({ key }) => {
        const k = String(key).trim();
        if (k === config.backKey) return { kind: 'match', value: BACK };
        const option = config.options[k];
        return option
          ? { kind: 'match', value: option.value }
          : { kind: 'invalid', reason: 'Sorry, that is not an option.' };
      },
    },
    reports: { declined: false, confirm: false },
    repromptBy: 'task',
    display: (value) =>
      value === BACK
        ? 'back'
        : (Object.values(config.options).find((o) => o.value === value)?.label ?? String(value)),
    expects: {
      kind: 'choice',
      phrases: [
        ...Object.values(config.options).flatMap((o) => [o.label, ...(o.synonyms ?? [])]),
        ...(config.repeatKey !== undefined ? ['repeat'] : []),
        ...(config.backKey !== undefined ? ['go back'] : []),
      ],
    },
    logComponent: 'taskline.telephony',
  };
}

const KEY_PARAMETERS = z.object({ key: z.string().describe('The key of the option') });

/** The schema of a menu's values: their literals (flows branch on them), or any value. */
function menuSchema<V>(values: readonly Pick<V>[]): z.ZodType<Pick<V>> {
  const literals = values.filter((v): v is Pick<V> & (string | number | boolean | symbol) =>
    ['string', 'number', 'boolean', 'symbol'].includes(typeof v),
  );
  if (literals.length !== values.length || literals.length === 0) {
    return z.custom<Pick<V>>((v) => values.includes(v as Pick<V>));
  }
  return z.literal(literals as never) as unknown as z.ZodType<Pick<V>>;
}

/** Reads a key (as pressed) or speech: an option, {@link BACK}, or why it is none. */
function readMenu<V>(config: MenuConfig<V>, text: string, keyed: boolean): ParseResult<Pick<V>> {
  if (keyed) {
    if (text === config.backKey) return { kind: 'match', value: BACK };
    const option = config.options[text];
    if (option) return { kind: 'match', value: option.value };
    return { kind: 'invalid', reason: `Sorry, ${spokenKey(text)} is not an option.` };
  }
  if (config.backKey !== undefined && GO_BACK.test(text)) return { kind: 'match', value: BACK };
  const key = spokenDigits(text.replace(KEY_LEAD, ''));
  if (key !== undefined && key.length === 1 && config.options[key]) {
    return { kind: 'match', value: config.options[key].value };
  }
  const options = Object.entries(config.options).map(([k, o]) => ({
    value: k,
    label: o.label,
    synonyms: o.synonyms,
  }));
  // Labels, synonyms, a word only one option uses ("agent please" for "an agent"), common
  // words for an agent ("operator"); never a guess when two options match.
  const parsed = choice(text, options, { positional: config.positional === true });
  if (parsed.kind === 'match') return { kind: 'match', value: config.options[parsed.value]!.value };
  return { kind: 'nomatch' };
}

/** A phone menu: taskline's capture engine with a menu spec (see {@link menuSpec}). */
export class MenuTask<V> extends TypedTask<Pick<V>> {
  readonly menu: MenuConfig<V>;

  constructor(config: MenuConfig<V>) {
    super(menuSpec(config));
    this.menu = config;
  }
}

/** What may change per use of a menu (its options and keys are fixed at definition). */
export type MenuOverrides<V> = Partial<
  Pick2<
    MenuConfig<V>,
    | 'name'
    | 'prompt'
    | 'instructions'
    | 'llm'
    | 'firstKeyTimeoutMs'
    | 'retry'
    | 'watchdog'
    | 'chatCtx'
    | 'allowSpeech'
    | 'modelFallback'
  >
>;
type Pick2<O, K extends keyof O> = { [P in K]: O[P] };

/** A reusable menu: `create()` gives a fresh task, `run()` awaits one inline, `with()` derives. */
export interface MenuDefinition<V, T = V>
  extends CaptureDefinition<T, MenuOverrides<V>, MenuDefinition<V, T>, TypedTask<T>> {
  readonly config: MenuConfig<V>;
  /** The spoken menu. */
  readonly prompt: string;
  /** The option keys, the repeat and the back key (`validateFlow` checks them for clashes). */
  readonly keys: readonly string[];
  readonly repeatKey?: string;
  readonly backKey?: string;
}

/**
 * Defines a phone menu, auto-numbered into its prompt ("For billing, press 1…"). Keys are
 * checked now: an option key that clashes with `repeatKey` or `backKey` throws a
 * TasklineError at definition time. With a `backKey` the outcome's value may be
 * {@link BACK}. Per-use overrides merge into the definition (`retry` key by key).
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
  const definition = captureDefinition(
    config,
    (c) => menuSpec(c),
    (_spec, c) => new MenuTask<V>(c),
    (c) => menu(c),
  );
  return {
    ...(definition as unknown as CaptureDefinition<
      V | typeof BACK,
      MenuOverrides<V>,
      MenuDefinition<V, V | typeof BACK>
    >),
    config,
    prompt: menuPrompt(config),
    keys: Object.keys(config.options),
    ...(config.repeatKey !== undefined ? { repeatKey: config.repeatKey } : {}),
    ...(config.backKey !== undefined ? { backKey: config.backKey } : {}),
  };
}
