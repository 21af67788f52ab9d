import { parseCardinal } from './numerals.js';
import { approximately, invalid, match, nomatch, type ParseResult } from './result.js';
import { selfCorrected, unhedge } from './speech.js';
import { cleanTokens, normalize, plainWords } from './words.js';

/** How to read a clock time said without am/pm. */
export interface TimeOptions {
  /**
   * The half of the day a 12-hour time without am/pm ("three thirty") means. Without it such a
   * time is ambiguous and the parser returns invalid, asking the caller for am or pm.
   */
  defaultPeriod?: 'am' | 'pm';
}

type Period = 'am' | 'pm';

/** A time before am/pm is applied: `fixed` when the words already pin the hour (15:30, noon). */
interface ClockReading {
  h: number;
  m: number;
  fixed: boolean;
  /** Noon and midnight (and times relative to them): am/pm said alongside changes nothing. */
  absolute?: boolean;
}

const PERIOD_SUFFIXES: readonly { words: readonly string[]; period: Period }[] = [
  { words: ['in', 'the', 'morning'], period: 'am' },
  { words: ['in', 'the', 'afternoon'], period: 'pm' },
  { words: ['in', 'the', 'evening'], period: 'pm' },
  { words: ['at', 'night'], period: 'pm' },
  { words: ['this', 'morning'], period: 'am' },
  { words: ['this', 'afternoon'], period: 'pm' },
  { words: ['this', 'evening'], period: 'pm' },
  { words: ['tonight'], period: 'pm' },
  { words: ['morning'], period: 'am' },
  { words: ['afternoon'], period: 'pm' },
  { words: ['evening'], period: 'pm' },
  { words: ['am'], period: 'am' },
  { words: ['pm'], period: 'pm' },
];

const LEADING = new Set(['at', 'for', 'by', 'say']);
/** Parts of the day said before the time ("tonight at 8", "this morning at nine"). */
const PERIOD_PREFIXES = PERIOD_SUFFIXES.filter(
  (p) => !['in', 'at', 'am', 'pm'].includes(p.words[0]!),
);

/** A day said with the time ("3 pm tomorrow", "on Friday at noon"): not part of the time. */
const DAY =
  '(?:on |this |next |this coming )?(?:today|tomorrow|the day after tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const DAY_BEFORE = new RegExp(`^${DAY}[,\\s]+(?:at\\s+)?`, 'u');
const DAY_AFTER = new RegExp(`[,\\s]+${DAY}[.!?]*$`, 'u');
const RELATIONS: ReadonlyMap<string, 1 | -1> = new Map([
  ['past', 1],
  ['after', 1],
  ['to', -1],
  ['before', -1],
  ['till', -1],
  ['til', -1],
  ['of', -1],
]);

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Spoken or numeric minutes: "thirty", "oh five", "fifteen", "45", "oclock", "hundred". */
function minutesOf(words: readonly string[]): { m: number; fixed: boolean } | undefined {
  if (words.length === 0 || (words.length === 1 && words[0] === 'oclock')) {
    return { m: 0, fixed: false };
  }
  if (words[0] === 'hundred') {
    return words.length === 1 || (words.length === 2 && words[1] === 'hours')
      ? { m: 0, fixed: true }
      : undefined;
  }
  if (['oh', 'o', 'zero'].includes(words[0]!) && words.length === 2) {
    const unit = parseCardinal([words[1]!]);
    return unit !== undefined && unit >= 0 && unit <= 9 ? { m: unit, fixed: false } : undefined;
  }
  if (words.length === 1 && /^\d{2}$/.test(words[0]!)) return { m: Number(words[0]), fixed: false };
  const m = parseCardinal(words);
  return m !== undefined && Number.isInteger(m) && m >= 10 ? { m, fixed: false } : undefined;
}

/** "three", "three thirty", "fifteen hundred", "oh nine hundred", "3 o'clock", "twenty three fifteen". */
function wordsClock(input: readonly string[]): ClockReading | undefined {
  let words = [...input];
  let fixed = false;
  if (words[words.length - 1] === 'hours') {
    fixed = true;
    words = words.slice(0, -1);
  }
  if ((words[0] === 'oh' || words[0] === 'zero') && words.length > 1) {
    fixed = true;
    words = words.slice(1);
  }
  for (const n of [2, 1]) {
    if (words.length < n) continue;
    const h = parseCardinal(words.slice(0, n));
    if (h === undefined || !Number.isInteger(h) || h < 0 || h > 24) continue;
    const minutes = minutesOf(words.slice(n));
    if (minutes === undefined) continue;
    return { h, m: minutes.m, fixed: fixed || minutes.fixed || h === 0 || h > 12 };
  }
  return undefined;
}

/** "half past three", "quarter to five", "ten past noon", "twenty five minutes to six". */
function relativeClock(words: readonly string[]): ClockReading | undefined {
  const at = words.findIndex((w) => RELATIONS.has(w));
  if (at < 1) return undefined;
  let left = words.slice(0, at);
  if (left[left.length - 1] === 'minutes' || left[left.length - 1] === 'minute') {
    left = left.slice(0, -1);
  }
  let minutes: number | undefined;
  const phrase = left.join(' ');
  if (phrase === 'quarter' || phrase === 'a quarter') minutes = 15;
  else if (phrase === 'half') minutes = 30;
  else minutes = parseCardinal(left);
  if (minutes === undefined || !Number.isInteger(minutes) || minutes < 1 || minutes > 59) {
    return undefined;
  }
  const right = words.slice(at + 1).filter((w) => w !== 'oclock');
  let hour: ClockReading | undefined;
  if (right.join(' ') === 'noon') hour = { h: 12, m: 0, fixed: true, absolute: true };
  else if (right.join(' ') === 'midnight') hour = { h: 0, m: 0, fixed: true, absolute: true };
  else {
    const h = parseCardinal(right);
    if (h === undefined || !Number.isInteger(h) || h < 0 || h > 23) return undefined;
    hour = { h, m: 0, fixed: h === 0 || h > 12 };
  }
  const sign = RELATIONS.get(words[at]!)!;
  let total = hour.h * 60 + sign * minutes;
  // "quarter to one" is 12:45, not 0:45, on a 12-hour clock.
  if (!hour.fixed && total < 60) total += 12 * 60;
  total = (total + 24 * 60) % (24 * 60);
  const reading = { h: Math.floor(total / 60), m: total % 60, fixed: hour.fixed };
  return hour.absolute ? { ...reading, absolute: true } : reading;
}

/** "15:30", "3:30", "09:00", "1530", "330", "3". */
function numericClock(token: string): ClockReading | undefined {
  const colon = /^(\d{1,2})[:.h](\d{2})$/.exec(token);
  if (colon) {
    const h = Number(colon[1]);
    return { h, m: Number(colon[2]), fixed: h === 0 || h > 12 || colon[1]!.startsWith('0') };
  }
  const packed = /^(\d{1,2})(\d{2})$/.exec(token);
  if (packed) {
    const h = Number(packed[1]);
    return { h, m: Number(packed[2]), fixed: h === 0 || h > 12 || packed[1]!.startsWith('0') };
  }
  if (/^\d{1,2}$/.test(token)) {
    const h = Number(token);
    return { h, m: 0, fixed: h === 0 || h > 12 };
  }
  return undefined;
}

function read(words: readonly string[], tokens: readonly string[]): ClockReading | undefined {
  const phrase = words.join(' ');
  if (['noon', 'midday', 'twelve noon', '12 noon'].includes(phrase)) {
    return { h: 12, m: 0, fixed: true, absolute: true };
  }
  if (['midnight', 'twelve midnight', '12 midnight'].includes(phrase)) {
    return { h: 0, m: 0, fixed: true, absolute: true };
  }
  if (tokens.length === 1) {
    const numeric = numericClock(tokens[0]!);
    if (numeric) return numeric;
  }
  return relativeClock(words) ?? wordsClock(words);
}

/** Applies am/pm (said or defaulted) and range checks, giving HH:MM or a reason. */
function finish(
  reading: ClockReading,
  period: Period | undefined,
  options: TimeOptions,
): ParseResult<string> {
  const { h, m } = reading;
  if (m > 59) return invalid('Minutes only go up to 59.');
  if (h > 24 || (h === 24 && m > 0)) return invalid('Hours only go up to 23.');
  if (h === 24) return match('00:00');
  if (reading.absolute) return match(`${pad(h)}:${pad(m)}`);
  if (period !== undefined) {
    if (h > 12) {
      return period === 'am'
        ? invalid(`${h}:${pad(m)} can't be in the morning.`)
        : match(`${pad(h)}:${pad(m)}`);
    }
    const h24 = period === 'am' ? h % 12 : (h % 12) + 12;
    return match(`${pad(h24)}:${pad(m)}`);
  }
  if (reading.fixed) return match(`${pad(h)}:${pad(m)}`);
  if (options.defaultPeriod !== undefined) return finish(reading, options.defaultPeriod, {});
  return invalid('Is that in the morning or the afternoon? Please say am or pm.');
}

/**
 * Reads a clock time and returns it as 24-hour "HH:MM": "3pm", "3:30 p.m.", "15:30", "noon",
 * "midnight", "half past three", "quarter to five", "ten past noon", "three thirty in the
 * afternoon", "fifteen hundred hours". A 12-hour time without am/pm ("three thirty") is
 * ambiguous: it resolves with `defaultPeriod` when given, and is invalid (asking for am or pm)
 * otherwise. Times written in 24-hour form (13–23 h, a leading zero, "hundred hours") need no
 * am/pm. Impossible times ("25:00", "3:75") → invalid.
 */
export function time(text: string, options: TimeOptions = {}): ParseResult<string> {
  return selfCorrected(text, (t) => timeOnce(t, options)) ?? timeOnce(text, options);
}

function timeOnce(text: string, options: TimeOptions): ParseResult<string> {
  const prepared = normalize(text)
    .replace(DAY_AFTER, '')
    .replace(DAY_BEFORE, '')
    .replace(/(\d)\s*([ap])\.?\s?m\b\.?/gu, '$1 $2m')
    .replace(/\b([ap])\.\s?m\b\.?/gu, '$1m')
    .replace(/\bo'?\s?clock\b/gu, 'oclock');
  let tokens = cleanTokens(prepared);
  let period: Period | undefined;
  // "tonight at 8", "this morning at nine": the part of the day said first.
  for (const prefix of PERIOD_PREFIXES) {
    if (tokens.length > prefix.words.length && prefix.words.every((w, i) => tokens[i] === w)) {
      period = prefix.period;
      tokens = tokens.slice(prefix.words.length);
      break;
    }
  }
  for (const suffix of period === undefined ? PERIOD_SUFFIXES : []) {
    const at = tokens.length - suffix.words.length;
    if (at >= 1 && suffix.words.every((w, i) => tokens[at + i] === w)) {
      period = suffix.period;
      tokens = tokens.slice(0, at);
      break;
    }
  }
  while (tokens.length > 1 && LEADING.has(tokens[0]!)) tokens = tokens.slice(1);
  const hedged = unhedge(tokens);
  if (hedged === undefined) return nomatch();
  tokens = hedged.words;
  while (tokens.length > 1 && LEADING.has(tokens[0]!)) tokens = tokens.slice(1);
  const words = tokens.flatMap((t) => plainWords(t));
  const reading = read(words, tokens);
  if (reading === undefined) return nomatch();
  const result = finish(reading, period, options);
  return result.kind === 'match' && hedged.approximate ? approximately(result.value) : result;
}
