/**
 * Number words: cardinals ("three hundred and five"), ordinals ("twenty first") and single
 * spoken digits ("oh", "nine"), shared by the number, digits, date, time and email parsers.
 */

/** Spoken single digits, including "oh" and "nought" for zero. */
export const DIGIT_WORDS: ReadonlyMap<string, number> = new Map([
  ['zero', 0],
  ['oh', 0],
  ['o', 0],
  ['nought', 0],
  ['naught', 0],
  ['one', 1],
  ['two', 2],
  ['three', 3],
  ['four', 4],
  ['five', 5],
  ['six', 6],
  ['seven', 7],
  ['eight', 8],
  ['nine', 9],
]);

const UNITS: ReadonlyMap<string, number> = new Map([
  ['zero', 0],
  ['one', 1],
  ['two', 2],
  ['three', 3],
  ['four', 4],
  ['five', 5],
  ['six', 6],
  ['seven', 7],
  ['eight', 8],
  ['nine', 9],
]);

/** Ten to nineteen. */
export const TEENS: ReadonlyMap<string, number> = new Map([
  ['ten', 10],
  ['eleven', 11],
  ['twelve', 12],
  ['thirteen', 13],
  ['fourteen', 14],
  ['fifteen', 15],
  ['sixteen', 16],
  ['seventeen', 17],
  ['eighteen', 18],
  ['nineteen', 19],
]);

/** Twenty, thirty … ninety. */
export const TENS: ReadonlyMap<string, number> = new Map([
  ['twenty', 20],
  ['thirty', 30],
  ['forty', 40],
  ['fourty', 40],
  ['fifty', 50],
  ['sixty', 60],
  ['seventy', 70],
  ['eighty', 80],
  ['ninety', 90],
]);

const SCALES: ReadonlyMap<string, number> = new Map([
  ['thousand', 1_000],
  ['million', 1_000_000],
  ['billion', 1_000_000_000],
]);

const ORDINAL_UNITS: ReadonlyMap<string, number> = new Map([
  ['first', 1],
  ['second', 2],
  ['third', 3],
  ['fourth', 4],
  ['fifth', 5],
  ['sixth', 6],
  ['seventh', 7],
  ['eighth', 8],
  ['ninth', 9],
  ['tenth', 10],
  ['eleventh', 11],
  ['twelfth', 12],
  ['thirteenth', 13],
  ['fourteenth', 14],
  ['fifteenth', 15],
  ['sixteenth', 16],
  ['seventeenth', 17],
  ['eighteenth', 18],
  ['nineteenth', 19],
  ['twentieth', 20],
  ['thirtieth', 30],
  ['fortieth', 40],
  ['fiftieth', 50],
  ['sixtieth', 60],
  ['seventieth', 70],
  ['eightieth', 80],
  ['ninetieth', 90],
  ['hundredth', 100],
]);

/** The value of a single spoken or written digit ("oh", "7"), or undefined. */
export function digitValue(word: string): number | undefined {
  if (/^\d$/.test(word)) return Number(word);
  return DIGIT_WORDS.get(word);
}

/** True for any word the cardinal grammar knows, so callers can find runs of number words. */
export function isNumberWord(word: string): boolean {
  return (
    UNITS.has(word) ||
    TEENS.has(word) ||
    TENS.has(word) ||
    SCALES.has(word) ||
    word === 'hundred' ||
    /^\d+$/.test(word)
  );
}

type Kind = 'start' | 'a' | 'unit' | 'teen' | 'tens' | 'twodigit' | 'big' | 'hundred' | 'scale';

/**
 * Parses a whole sequence of plain words as a cardinal number: "forty two", "three hundred and
 * five", "one thousand two hundred", "minus three", "a dozen", "two and a half", "three point
 * one four", digit tokens ("2 thousand"). Returns undefined unless every word is consumed by one
 * well-formed number; digit-by-digit sequences such as "one two" or "twenty twenty" are rejected.
 */
export function parseCardinal(words: readonly string[]): number | undefined {
  let i = 0;
  let sign = 1;
  if (words[0] === 'minus' || words[0] === 'negative') {
    sign = -1;
    i = 1;
  }
  const rest = words.slice(i);
  if (rest.length === 0) return undefined;
  if (rest.length === 1) {
    const only = rest[0]!;
    // A lone "oh" is not a zero: an interjection, or a "no" as a recogniser writes it.
    if (only === 'zero' || only === 'nought' || only === 'naught') return 0;
  }
  let total = 0;
  let group = 0;
  let kind: Kind = 'start';
  let afterAnd = false;
  let lastScale = Number.POSITIVE_INFINITY;
  let fraction = 0;
  let consumed = false;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (w === 'point' || w === 'dot') {
      const digits = words.slice(i + 1).map(digitValue);
      if (digits.length === 0 || digits.some((d) => d === undefined)) return undefined;
      fraction = Number(`0.${digits.join('')}`);
      i = words.length;
      break;
    }
    if (w === 'and') {
      if (words[i + 1] === 'a' && words[i + 2] === 'half' && i + 3 === words.length && consumed) {
        fraction = 0.5;
        i = words.length;
        break;
      }
      if ((kind === 'hundred' || kind === 'scale') && !afterAnd) {
        afterAnd = true;
        continue;
      }
      return undefined;
    }
    const fresh = kind === 'start' || kind === 'hundred' || kind === 'scale';
    if (w === 'a' || w === 'an') {
      if (kind !== 'start') return undefined;
      group = 1;
      kind = 'a';
    } else if (w === 'hundred') {
      if (!['a', 'unit', 'teen', 'tens', 'twodigit'].includes(kind) || group < 1 || group > 99) {
        return undefined;
      }
      group *= 100;
      kind = 'hundred';
    } else if (SCALES.has(w)) {
      const scale = SCALES.get(w)!;
      if (kind === 'start' || group === 0 || scale >= lastScale) return undefined;
      total += group * scale;
      group = 0;
      lastScale = scale;
      kind = 'scale';
    } else if (w === 'dozen') {
      if (!['a', 'unit', 'teen', 'tens', 'twodigit'].includes(kind) || group < 1 || group > 99) {
        return undefined;
      }
      if (i !== words.length - 1) return undefined;
      group *= 12;
      kind = 'big';
    } else if (/^\d+$/.test(w)) {
      const v = Number(w);
      if (v < 10 && (fresh || kind === 'tens')) {
        if (v === 0 && kind !== 'start') return undefined;
        group += v;
        kind = kind === 'tens' ? 'twodigit' : 'unit';
      } else if (v < 100 && fresh) {
        group += v;
        kind = v < 20 ? 'teen' : v % 10 === 0 ? 'tens' : 'twodigit';
      } else if (kind === 'start') {
        group = v;
        kind = 'big';
      } else {
        return undefined;
      }
    } else if (UNITS.has(w)) {
      const v = UNITS.get(w)!;
      // "zero" only stands alone or before "point" ("zero point five").
      if (v === 0 && (kind !== 'start' || !['point', 'dot'].includes(words[i + 1] ?? ''))) {
        return undefined;
      }
      if (!(fresh || kind === 'tens')) return undefined;
      group += v;
      kind = kind === 'tens' ? 'twodigit' : 'unit';
    } else if (TEENS.has(w)) {
      if (!fresh) return undefined;
      group += TEENS.get(w)!;
      kind = 'teen';
    } else if (TENS.has(w)) {
      if (!fresh) return undefined;
      group += TENS.get(w)!;
      kind = 'tens';
    } else {
      return undefined;
    }
    if (kind === 'big' && i < words.length - 1) {
      const next = words[i + 1]!;
      if (!SCALES.has(next)) return undefined;
    }
    consumed = true;
    afterAnd = false;
  }
  if (!consumed && fraction === 0) return undefined;
  if (kind === 'a') return undefined;
  if (afterAnd) return undefined;
  const value = sign * (total + group + fraction);
  return value === 0 ? 0 : value;
}

/**
 * Parses an ordinal from plain words: "first", "twenty first", "thirty-first" (as two words),
 * "5th", "22nd". Returns undefined for anything else.
 */
export function parseOrdinal(words: readonly string[]): number | undefined {
  if (words.length === 1) {
    const w = words[0]!;
    const m = /^(\d+)(st|nd|rd|th)$/.exec(w);
    if (m) return Number(m[1]);
    return ORDINAL_UNITS.get(w);
  }
  if (words.length === 2) {
    const tens = TENS.get(words[0]!);
    const unit = ORDINAL_UNITS.get(words[1]!);
    if (tens !== undefined && unit !== undefined && unit < 10) return tens + unit;
    const hundreds = parseCardinal([words[0]!]);
    if (words[1] === 'hundredth' && hundreds !== undefined && hundreds < 10) return hundreds * 100;
  }
  return undefined;
}

/**
 * Splits a run of number words into the longest well-formed cardinals from left to right and
 * concatenates their digits: "nineteen eighty four" → "1984", "one two three" → "123".
 */
export function chunkCardinals(words: readonly string[]): string | undefined {
  let out = '';
  let i = 0;
  while (i < words.length) {
    let found = 0;
    let value = 0;
    for (let j = words.length; j > i; j--) {
      const v = parseCardinal(words.slice(i, j));
      if (v !== undefined && Number.isInteger(v) && v >= 0) {
        found = j - i;
        value = v;
        break;
      }
    }
    if (found === 0) return undefined;
    out += String(value);
    i += found;
  }
  return out;
}
