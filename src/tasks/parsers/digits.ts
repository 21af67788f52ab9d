import { DIGIT_WORDS, TEENS, TENS } from './numerals.js';
import { approximately, invalid, match, nomatch, type ParseResult } from './result.js';
import { selfCorrected } from './speech.js';
import { normalize, removeFillers, stripLeadIns } from './words.js';

/** Rules for a spoken or typed digit string (a PIN, an account number, a menu key). */
export interface DigitsOptions {
  /** Fewest digits accepted. */
  minLength?: number;
  /** Most digits accepted. */
  maxLength?: number;
  /** Every character the answer may contain; defaults to "0123456789" (add "*#" for keys). */
  validDigits?: string;
}

/** How spoken digits are read: phone numbers may start with "plus". */
export interface SpokenDigitsOptions {
  /** Accept a leading "plus" / "+" (kept as "+" in the output). */
  allowPlus?: boolean;
}

const REPEATS: ReadonlyMap<string, number> = new Map([
  ['double', 2],
  ['triple', 3],
  ['treble', 3],
  ['quadruple', 4],
]);

const SEPARATORS = new Set(['dash', 'hyphen', 'space', 'comma', 'then', 'and', 'digits']);
const STAR = new Set(['*', 'star', 'asterisk']);
const POUND = new Set(['#', 'pound', 'hash', 'hashtag']);

function singleDigit(word: string | undefined): string | undefined {
  if (word === undefined) return undefined;
  if (/^\d$/.test(word)) return word;
  const v = DIGIT_WORDS.get(word);
  return v === undefined ? undefined : String(v);
}

function nonZeroUnit(word: string | undefined): string | undefined {
  const d = singleDigit(word);
  return d !== undefined && d !== '0' && word !== 'oh' && word !== 'o' ? d : undefined;
}

/** Reads "twelve", "forty", "forty five", "4 5"-free two-digit chunks; returns [digits, words used]. */
function twoDigitChunk(words: readonly string[], i: number): [string, number] | undefined {
  const w = words[i]!;
  const teen = TEENS.get(w);
  if (teen !== undefined) return [String(teen), 1];
  const tens = TENS.get(w);
  if (tens !== undefined) {
    const unit = nonZeroUnit(words[i + 1]);
    return unit !== undefined ? [String(tens + Number(unit)), 2] : [String(tens), 1];
  }
  return undefined;
}

/** A digit string as read, and whether a word in it may have been misheard. */
export interface SpokenDigitsReading {
  /** The characters: digits, and "+", "*", "#" where allowed. */
  value: string;
  /**
   * A word in it may stand for something else: "oh" (a zero, or a "no" as a recogniser
   * writes it: "four, no, five" heard as "four oh five"), or a digit's homophone ("for",
   * "to", "won", "ate"…) read as that digit. Read it back before taking it.
   */
  approximate: boolean;
}

/**
 * Words a recogniser writes for a spoken digit ("four" heard as "for"). Read as that digit
 * only among other digits, and then only as an approximate reading.
 */
const HOMOPHONES: ReadonlyMap<string, string> = new Map([
  ['for', '4'],
  ['fore', '4'],
  ['to', '2'],
  ['too', '2'],
  ['won', '1'],
  ['ate', '8'],
  ['tree', '3'],
  ['free', '3'],
  ['sex', '6'],
  ['sicks', '6'],
  ['nein', '9'],
]);

/**
 * Converts a spoken or typed digit string to its characters: "4 1 5 5", "four one five five",
 * "oh", "double five", "triple two", mixed "4 one 5", "forty one fifty five", "one eight
 * hundred", "415-555-1234", "star" / "pound". Returns undefined when any word is not a digit,
 * or when its only digits are "oh" ("oh", "oh thanks": an interjection or a misheard "no",
 * never a zero on its own). Homophones ("for", "to") are not digits here; see
 * {@link readSpokenDigits}, which also says when a reading may be misheard.
 */
export function spokenDigits(text: string, options: SpokenDigitsOptions = {}): string | undefined {
  const read = readDigitWords(text, options, false);
  return read?.value;
}

/**
 * {@link spokenDigits} for speech from a recogniser: the same reading, and `approximate` when
 * a word in it may have been misheard — an "oh" read as zero, or a digit's homophone ("one
 * two three for" → "1234") read among other digits. An approximate reading is read back
 * before it is taken; undefined when the words are not a digit string.
 */
export function readSpokenDigits(
  text: string,
  options: SpokenDigitsOptions = {},
): SpokenDigitsReading | undefined {
  return readDigitWords(text, options, true);
}

function readDigitWords(
  text: string,
  options: SpokenDigitsOptions,
  homophones: boolean,
): SpokenDigitsReading | undefined {
  const spaced = normalize(text)
    .replace(/([+*#])/g, ' $1 ')
    .replace(/[-().,/:;!?"]/g, ' ');
  const words = stripLeadIns(removeFillers(spaced.split(' ').filter((w) => w.length > 0)));
  let out = '';
  let lastWasSingle = false;
  let ohs = 0;
  let soundAlikes = 0;
  let sure = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    let single = false;
    if (/^\d+$/.test(w)) {
      out += w;
      single = w.length === 1;
      sure++;
    } else if (w === '+' || w === 'plus') {
      if (!options.allowPlus || out.length > 0) return undefined;
      out = '+';
    } else if (STAR.has(w)) {
      out += '*';
      sure++;
    } else if (POUND.has(w)) {
      out += '#';
      sure++;
    } else if (REPEATS.has(w)) {
      const d = singleDigit(words[i + 1]);
      if (d === undefined) return undefined;
      if (words[i + 1] === 'oh' || words[i + 1] === 'o') ohs++;
      else sure++;
      out += d.repeat(REPEATS.get(w)!);
      i++;
    } else if (DIGIT_WORDS.has(w)) {
      out += String(DIGIT_WORDS.get(w));
      single = true;
      if (w === 'oh' || w === 'o') ohs++;
      else sure++;
    } else if (TEENS.has(w) || TENS.has(w)) {
      const [chunk, used] = twoDigitChunk(words, i)!;
      out += chunk;
      i += used - 1;
      sure++;
    } else if (w === 'hundred') {
      if (!lastWasSingle) return undefined;
      let next = i + 1;
      if (words[next] === 'and') next++;
      const chunk = next < words.length ? twoDigitChunk(words, next) : undefined;
      if (chunk) {
        out += chunk[0].padStart(2, '0');
        i = next + chunk[1] - 1;
      } else if (words[i + 1] === 'and' && nonZeroUnit(words[next]) !== undefined) {
        out += `0${nonZeroUnit(words[next])}`;
        i = next;
      } else {
        out += '00';
      }
    } else if (w === 'thousand') {
      if (!lastWasSingle) return undefined;
      out += '000';
    } else if (SEPARATORS.has(w)) {
      // spoken punctuation between groups
    } else if (homophones && HOMOPHONES.has(w)) {
      out += HOMOPHONES.get(w)!;
      single = true;
      soundAlikes++;
    } else {
      return undefined;
    }
    lastWasSingle = single;
  }
  if (!/[0-9*#]/.test(out)) return undefined;
  // "oh", "oh thanks": no digit said for sure. Sound-alikes only count among more sure digits.
  if (sure === 0 || soundAlikes > sure) return undefined;
  return { value: out, approximate: ohs > 0 || soundAlikes > 0 };
}

function describeLength(options: DigitsOptions): string {
  const { minLength: min, maxLength: max } = options;
  if (min !== undefined && max !== undefined) {
    return min === max ? `exactly ${min}` : `between ${min} and ${max}`;
  }
  if (min !== undefined) return `at least ${min}`;
  return `at most ${max}`;
}

/**
 * Reads a spoken or typed digit string (see `spokenDigits`) and checks it: a character outside
 * `validDigits` or a length outside `minLength`…`maxLength` → invalid with a reason. A
 * self-correction counts its last digits ("4 7 1 2, sorry, 4 7 1 3").
 */
export function digits(text: string, options: DigitsOptions = {}): ParseResult<string> {
  return (
    selfCorrected(text, (t) => digitsOnce(t, options), { bareNo: false }) ??
    digitsOnce(text, options)
  );
}

function digitsOnce(text: string, options: DigitsOptions): ParseResult<string> {
  const read = readSpokenDigits(text);
  if (read === undefined) return nomatch();
  const value = read.value;
  const valid = options.validDigits ?? '0123456789';
  const bad = [...value].find((c) => !valid.includes(c));
  if (bad !== undefined) {
    const allowed = valid === '0123456789' ? 'digits' : [...valid].join(' ');
    return invalid(`"${bad}" isn't allowed here. Please use only ${allowed}.`);
  }
  const n = value.length;
  const tooShort = options.minLength !== undefined && n < options.minLength;
  const tooLong = options.maxLength !== undefined && n > options.maxLength;
  if (tooShort || tooLong) {
    const heard = `I heard ${n} digit${n === 1 ? '' : 's'}`;
    return invalid(`${heard}, but I need ${describeLength(options)}.`);
  }
  return read.approximate ? approximately(value) : match(value);
}
