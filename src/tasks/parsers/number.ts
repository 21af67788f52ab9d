import { isNumberWord, parseCardinal } from './numerals.js';
import {
  alternatives,
  approximately,
  invalid,
  match,
  nomatch,
  type ParseResult,
} from './result.js';
import { isQuestion, selfCorrected, splitAlternatives, unhedge } from './speech.js';
import { cleanTokens, plainWords } from './words.js';

/** Rules a spoken or typed number must satisfy. */
export interface NumberOptions {
  /** Smallest allowed value (inclusive). */
  min?: number;
  /** Largest allowed value (inclusive). */
  max?: number;
  /** Reject fractions such as 3.5. */
  integer?: boolean;
}

const NUMERIC = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$/;
const CURRENCY = /^[$£€¥]|^(?:usd|eur|gbp)$/u;

function parseNumeric(token: string): number | undefined {
  if (!NUMERIC.test(token) || !/\d/.test(token)) return undefined;
  const value = Number(token.replace(/,/g, ''));
  return Number.isFinite(value) ? value : undefined;
}

/** Formats a bound for a sentence a caller will hear ("1,000" reads better than "1000"). */
function say(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/** Checks a parsed number against the options, producing the reason a caller would be told. */
export function checkNumber(value: number, options: NumberOptions): ParseResult<number> {
  const { min, max, integer } = options;
  if (integer && !Number.isInteger(value)) return invalid('Please say a whole number.');
  const low = min !== undefined && value < min;
  const high = max !== undefined && value > max;
  if (low || high) {
    if (min !== undefined && max !== undefined) {
      return invalid(`The number must be between ${say(min)} and ${say(max)}.`);
    }
    if (low) return invalid(`The number must be at least ${say(min!)}.`);
    return invalid(`The number must be at most ${say(max!)}.`);
  }
  return match(value);
}

/**
 * Words that may stand before the one number of a short answer: "a table for four", "there
 * are four of us", "a solid eight", "make it four", "I need four".
 */
const BEFORE = new Set([
  'a',
  'an',
  'the',
  'for',
  'of',
  'just',
  'only',
  'exactly',
  'total',
  'table',
  'party',
  'make',
  'it',
  'say',
  'we',
  "we're",
  "we'll",
  "i'm",
  'im',
  'am',
  'there',
  'are',
  'is',
  'be',
  'i',
  "i'll",
  "i'd",
  'need',
  'want',
  'take',
  'like',
  'get',
  'give',
  'me',
  'us',
  'them',
  'you',
  'rate',
  'definitely',
  'certainly',
  'surely',
  // intensifiers: "a solid eight"
  'solid',
  'strong',
  'firm',
  'straight',
  'flat',
  'clean',
  'good',
  'definite',
  'full',
  'whole',
  'perfect',
  'honest',
]);
/** Words that make the number an estimate ("a high seven", "I'd give it about a six"). */
const ROUGH_BEFORE = new Set([
  'high',
  'low',
  'weak',
  'about',
  'around',
  'roughly',
  'approximately',
  'maybe',
  'probably',
  'perhaps',
]);
/**
 * Words a recogniser writes for a spoken digit ("four" as "for", "two" as "to", "eight" as
 * "ate"): next to a number they may be part of it.
 */
const SOUNDS_LIKE_A_DIGIT = new Set([
  'for',
  'fore',
  'to',
  'too',
  'won',
  'ate',
  'tree',
  'free',
  'sex',
  'nein',
]);
/** Where a word's homophone usually stands: the words before or after it. */
interface Neighbours {
  before?: ReadonlySet<string>;
  after?: ReadonlySet<string>;
}

const wordSet = (list: string): ReadonlySet<string> => new Set(list.split(' '));

/**
 * Digit words a recogniser writes for their homophones, where the homophone is the likely
 * reading: "for sure" heard as "four sure", "I ate" as "I eight", "we won" as "we one". Such a
 * number is not taken.
 */
const LIKELY_HOMOPHONE: ReadonlyMap<string, Neighbours> = new Map([
  ['four', { after: wordSet('sure real now example instance me you it them') }],
  ['one', { before: wordSet('i we you they he she who') }],
  ['eight', { before: wordSet('i we you they he she just already') }],
]);

/**
 * Digit words where the homophone is a possible reading ("I need two" or "I need to…"): such
 * a number is read back before it is taken.
 */
const POSSIBLE_HOMOPHONE: ReadonlyMap<string, Neighbours> = new Map([
  ['two', { before: wordSet('want need have has had going like love able got try used me wish') }],
]);

function near(
  table: ReadonlyMap<string, Neighbours>,
  word: string,
  previous: string | undefined,
  next: string | undefined,
): boolean {
  const where = table.get(word);
  return (
    where !== undefined &&
    ((previous !== undefined && where.before?.has(previous) === true) ||
      (next !== undefined && where.after?.has(next) === true))
  );
}

/**
 * Whether a one-word number sits where its homophone usually does: 'likely' ("I eight",
 * "four sure", "me two" said alone), 'possible' ("I need two"), or undefined.
 */
function homophoneReading(words: readonly string[], at: number): 'likely' | 'possible' | undefined {
  const word = words[at]!;
  const previous = words[at - 1];
  const next = words[at + 1];
  if (near(LIKELY_HOMOPHONE, word, previous, next)) return 'likely';
  // "me two" alone is "me too"; "give me two" is a number.
  if (word === 'two' && previous === 'me' && at === 1) return 'likely';
  return near(POSSIBLE_HOMOPHONE, word, previous, next) ? 'possible' : undefined;
}

/** "one sec", "one moment": asking to wait, not a number. */
const WAIT_UNITS = new Set(['sec', 'second', 'moment', 'minute', 'min', 'mo', 'tick']);
/** Words that may follow the number (after an optional unit noun): "four of us please". */
const AFTER = new Set([
  'of',
  'us',
  'them',
  'please',
  'thanks',
  'thank',
  'you',
  'in',
  'total',
  'all',
  'altogether',
  'together',
  'each',
  'only',
  'exactly',
  'old',
  'then',
]);
/** Never a unit after a number: they change the value or are not an answer ("5 k", "twenty odd"). */
const NOT_UNITS = new Set([
  'k',
  'grand',
  'mil',
  'something',
  'odd',
  'and',
  'or',
  'but',
  'not',
  'no',
  'none',
  'point',
  'dot',
  'half',
  'halves',
  'quarter',
  'quarters',
  'am',
  'pm',
  'oclock',
  "o'clock",
  'ago',
  'maybe',
  'what',
  'which',
  'times',
  'minus',
  'hundreds',
  'thousands',
  'millions',
  'dozens',
]);

/** "two thirds", "three fifths": a fraction, not a count of something. */
const FRACTION_UNIT = /^(?:thirds|(?:four|fif|six|seven|eigh|nin|ten|hundred|thousand)ths?)$/u;

/** What one utterance says as a number. */
export type Quantity =
  | { kind: 'value'; value: number; approximate: boolean; outOf?: number }
  | { kind: 'alternatives'; values: number[] };

/** A value, possibly approximate, from words that hold exactly one number. */
function spanValue(input: readonly string[]): { value: number; approximate: boolean } | undefined {
  let words = [...input];
  // "oh, five": a leading interjection, not a zero. "oh" alone is not a zero either: it is an
  // interjection, or a "no" as a recogniser writes it ("oh thanks").
  if (words[0] === 'oh' || words[0] === 'o') words = words.slice(1);
  if (words.length === 0) return undefined;
  if (words.length === 1) {
    const v = parseNumeric(words[0]!);
    if (v !== undefined) return { value: v, approximate: false };
  }
  if (words.length === 2 && (words[0] === 'minus' || words[0] === 'negative')) {
    const v = parseNumeric(words[1]!);
    if (v !== undefined && v >= 0) return { value: v === 0 ? 0 : -v, approximate: false };
  }
  const whole = parseCardinal(words);
  if (whole !== undefined) return { value: whole, approximate: false };
  // The longest run of words that is one number; every other word must be a carrier.
  let best: { start: number; end: number; value: number } | undefined;
  for (let i = 0; i < words.length; i++) {
    for (let j = words.length; j > i; j--) {
      const slice = words.slice(i, j);
      const v =
        j - i === 1 ? (parseNumeric(slice[0]!) ?? parseCardinal(slice)) : parseCardinal(slice);
      if (v === undefined) continue;
      if (best === undefined || j - i > best.end - best.start)
        best = { start: i, end: j, value: v };
      break;
    }
  }
  if (best === undefined) return undefined;
  const before = words.slice(0, best.start);
  const after = words.slice(best.end);
  const numeric = (w: string) =>
    isNumberWord(w) || parseNumeric(w) !== undefined || w === 'dozen' || w === 'half';
  if ([...before, ...after].some(numeric)) return undefined;
  // A digit's homophone next to the number may be part of it, misheard: "twenty for" is
  // likely "twenty four" (never 20); "for five" may be "four five" (read back the 5).
  if (SOUNDS_LIKE_A_DIGIT.has(after[0] ?? '')) return undefined;
  const homophone = best.end - best.start === 1 ? homophoneReading(words, best.start) : undefined;
  if (homophone === 'likely') return undefined;
  let approximate = homophone === 'possible' || SOUNDS_LIKE_A_DIGIT.has(before.at(-1) ?? '');
  // "a" right before the number is an article ("a six"), except where it is part of it.
  for (const w of before) {
    if (ROUGH_BEFORE.has(w)) approximate = true;
    else if (!BEFORE.has(w)) return undefined;
  }
  const [unit, ...rest] = after;
  if (best.value === 1 && WAIT_UNITS.has(unit ?? '')) return undefined;
  if (unit !== undefined && !AFTER.has(unit)) {
    if (NOT_UNITS.has(unit) || !/^\p{L}{3,}$/u.test(unit) || FRACTION_UNIT.test(unit)) {
      return undefined;
    }
  }
  if (rest.some((w) => !AFTER.has(w))) return undefined;
  return { value: best.value, approximate };
}

/** Plain words of an utterance, keeping written numbers ("3.5", "1,200", "-2") whole. */
function numberWords(text: string): string[] {
  return cleanTokens(text).flatMap((token) => {
    const bare = token.replace(CURRENCY, '');
    if (bare.length === 0) return [];
    if (parseNumeric(bare) !== undefined) return [bare];
    const slash = /^(\d+)\/(\d+)$/u.exec(bare);
    if (slash) return [slash[1]!, 'out', 'of', slash[2]!];
    return plainWords(bare).filter((w) => !CURRENCY.test(w));
  });
}

/**
 * Reads what an utterance says as a number: one value (maybe approximate: "about six", "a high
 * seven"; maybe on a scale: "8 out of 10"), or alternatives ("seven or eight"). Undefined when
 * it holds no number, several unrelated ones ("two adults and two kids"), or a bound ("more
 * than six", "between five and ten").
 */
export function readQuantity(text: string): Quantity | undefined {
  if (isQuestion(text)) return undefined;
  // "seven?": said unsure, so read back before it is taken.
  const unsure = /\?\s*$/u.test(text);
  let words = numberWords(text);
  let outOf: number | undefined;
  const out = words.findIndex((w, i) => w === 'out' && words[i + 1] === 'of');
  if (out > 0) {
    const scale = spanValue(words.slice(out + 2));
    if (scale === undefined || scale.approximate) return undefined;
    outOf = scale.value;
    words = words.slice(0, out);
  }
  const hedged = unhedge(words);
  if (hedged === undefined) return undefined;
  const pair = splitAlternatives(hedged.words);
  if (pair !== undefined) {
    const a = spanValue(pair[0]);
    const b = spanValue(pair[1]);
    if (a === undefined || b === undefined) return undefined;
    // "seven to eight" is a range only upwards ("twenty to five" is a clock time).
    const joiner = hedged.words[pair[0].length];
    if (joiner === 'to' && !(a.value < b.value)) return undefined;
    if (a.value !== b.value) return { kind: 'alternatives', values: [a.value, b.value] };
    return { kind: 'value', value: a.value, approximate: true };
  }
  const one = spanValue(hedged.words);
  if (one === undefined) return undefined;
  const approximate = hedged.approximate || one.approximate || unsure;
  return outOf === undefined
    ? { kind: 'value', value: one.value, approximate }
    : { kind: 'value', value: one.value, approximate, outOf };
}

/** Reads the number an utterance consists of, or undefined when it is not just one number. */
export function readNumber(text: string): number | undefined {
  const q = readQuantity(text);
  return q?.kind === 'value' && !q.approximate && q.outOf === undefined ? q.value : undefined;
}

function numberOnce(text: string, options: NumberOptions): ParseResult<number> {
  const q = readQuantity(text);
  if (q === undefined) return nomatch();
  if (q.kind === 'alternatives') {
    const valid = q.values.filter((v) => checkNumber(v, options).kind === 'match');
    return valid.length >= 2 ? alternatives(valid) : nomatch();
  }
  // "4 out of 10" on another scale than the task's is not this task's number.
  if (q.outOf !== undefined && options.max !== undefined && q.outOf !== options.max) {
    return nomatch();
  }
  const checked = checkNumber(q.value, options);
  return checked.kind === 'match' && q.approximate ? approximately(q.value) : checked;
}

/**
 * Reads one number, written ("42", "-2", "3.5", "1,200", "$19.99") or spoken ("forty two",
 * "three hundred and five", "minus three", "zero", "a dozen", "two and a half"), in a short
 * answer ("I'd say a six", "a table for four please", "ten out of ten", "four, no wait,
 * five"). An estimate ("about six") is an approximate match; alternatives ("seven or eight")
 * are a nomatch with `candidates`. Digit-by-digit speech ("four two"), several numbers or a
 * bound ("more than six") → nomatch. Out of range, or not whole when `integer` is set →
 * invalid with a reason.
 */
export function number(text: string, options: NumberOptions = {}): ParseResult<number> {
  return selfCorrected(text, (t) => numberOnce(t, options)) ?? numberOnce(text, options);
}
