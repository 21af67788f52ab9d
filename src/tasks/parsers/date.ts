import {
  addDays,
  addMonths,
  type CalendarDate,
  calendarDateIn,
  compareDates,
  daysInMonth,
  isoDate,
  MONTH_NAMES,
  MONTHS,
  parseIsoDate,
  WEEKDAY_NAMES,
  WEEKDAYS,
  weekdayOf,
} from './calendar.js';
import { holiday } from './holidays.js';
import { parseCardinal, parseOrdinal, TEENS, TENS } from './numerals.js';
import { approximately, invalid, match, nomatch, type ParseResult } from './result.js';
import { selfCorrected, unhedge } from './speech.js';
import { cleanTokens, normalize, plainWords } from './words.js';

/** The clock and conventions a spoken date is resolved against. */
export interface DateOptions {
  /** The current instant ("today" is the date of `now` in `timeZone`); never the real clock. */
  now: Date;
  /** IANA zone the caller lives in; defaults to "UTC". */
  timeZone?: string;
  /**
   * How to complete a date said without a year ("March 5"), a day without a month ("the 5th")
   * or a bare weekday: 'future' → the next such date on or after today, 'past' → the latest on
   * or before today. Without it, the current year / month is used and a bare weekday means the
   * next one on or after today.
   */
  prefer?: 'future' | 'past';
}

type Resolved = ParseResult<CalendarDate>;

const LEADING = new Set(['on', 'for', 'by', 'until', 'till']);
const UNIT_DAYS: ReadonlyMap<string, number> = new Map([
  ['day', 1],
  ['days', 1],
  ['week', 7],
  ['weeks', 7],
  ['fortnight', 14],
  ['fortnights', 14],
]);
const UNIT_MONTHS: ReadonlyMap<string, number> = new Map([
  ['month', 1],
  ['months', 1],
  ['year', 12],
  ['years', 12],
]);

function ordinalSuffix(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
}

function checkDay(y: number, m: number, d: number): Resolved {
  if (m < 1 || m > 12) return invalid(`There is no month ${m}.`);
  if (d < 1) return nomatch();
  const days = daysInMonth(y, m);
  if (d > days) {
    return invalid(
      `${MONTH_NAMES[m - 1]} ${y} has only ${days} days, so there's no ${d}${ordinalSuffix(d)}.`,
    );
  }
  return match({ y, m, d });
}

/** A day of the month from one or two words: "5", "5th", "fifth", "twenty first", "twenty one". */
function dayNumber(words: readonly string[]): number | undefined {
  const v = parseOrdinal(words) ?? parseCardinal(words);
  return v !== undefined && Number.isInteger(v) && v >= 1 && v <= 99 ? v : undefined;
}

/** A year: "2026", "two thousand twenty six", "twenty twenty six", "nineteen oh five". */
export function parseYear(words: readonly string[]): number | undefined {
  if (words.length === 0) return undefined;
  if (words.length === 1 && /^\d{4}$/.test(words[0]!)) return Number(words[0]);
  const cardinal = parseCardinal(words);
  if (
    cardinal !== undefined &&
    Number.isInteger(cardinal) &&
    cardinal >= 1000 &&
    cardinal <= 9999
  ) {
    return cardinal;
  }
  const century = TEENS.get(words[0]!) ?? TENS.get(words[0]!);
  if (century === undefined) return undefined;
  const rest = words.slice(1);
  if (rest.length === 1 && rest[0] === 'hundred') return century * 100;
  if (rest.length === 2 && ['oh', 'o', 'zero'].includes(rest[0]!)) {
    const unit = parseCardinal([rest[1]!]);
    if (unit !== undefined && unit >= 1 && unit <= 9) return century * 100 + unit;
    return undefined;
  }
  const yy = parseCardinal(rest);
  if (yy !== undefined && Number.isInteger(yy) && yy >= 10 && yy <= 99) return century * 100 + yy;
  return undefined;
}

/** Completes a month/day said without a year according to `prefer`. */
function withoutYear(
  today: CalendarDate,
  m: number,
  d: number,
  prefer: DateOptions['prefer'],
): Resolved {
  let y = today.y;
  if (prefer !== undefined && d <= daysInMonth(y, m)) {
    const c = compareDates({ y, m, d }, today);
    if (prefer === 'future' && c < 0) y++;
    if (prefer === 'past' && c > 0) y--;
  }
  return checkDay(y, m, d);
}

/** "March 5th 2026", "March the fifth", "5 March", "the fifth of March twenty twenty six". */
function explicitDate(
  words: readonly string[],
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): Resolved | undefined {
  let w = [...words];
  if (w[0] === 'the') w = w.slice(1);
  const monthFirst = MONTHS.get(w[0] ?? '');
  let month: number | undefined;
  let rest: string[];
  let dayCandidates: { day: number; after: string[] }[] = [];
  if (monthFirst !== undefined) {
    month = monthFirst;
    rest = w.slice(1);
    if (rest[0] === 'the') rest = rest.slice(1);
    for (const n of [2, 1]) {
      if (rest.length < n) continue;
      const day = dayNumber(rest.slice(0, n));
      if (day !== undefined) dayCandidates.push({ day, after: rest.slice(n) });
    }
  } else {
    const ofAt = w.findIndex((x) => MONTHS.has(x));
    if (ofAt < 1) return undefined;
    month = MONTHS.get(w[ofAt]!)!;
    let dayWords = w.slice(0, ofAt);
    if (dayWords[dayWords.length - 1] === 'of') dayWords = dayWords.slice(0, -1);
    const day = dayNumber(dayWords);
    if (day === undefined || dayWords.length > 2) return undefined;
    dayCandidates = [{ day, after: w.slice(ofAt + 1) }];
  }
  for (const { day, after } of dayCandidates) {
    const yearWords = after[0] === 'of' || after[0] === 'in' ? after.slice(1) : after;
    if (yearWords.length === 0) return withoutYear(today, month, day, prefer);
    const year = parseYear(yearWords) ?? twoDigitYear(yearWords, today, prefer);
    if (year !== undefined) return checkDay(year, month, day);
  }
  return undefined;
}

/**
 * "eighty four" as a year: the latest such year up to now with prefer 'past' (a birthday), the
 * first from now with 'future'; without `prefer` the century would be a guess → undefined.
 */
function twoDigitYear(
  words: readonly string[],
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): number | undefined {
  if (prefer === undefined || words.length > 2) return undefined;
  const yy = parseCardinal(words);
  if (yy === undefined || !Number.isInteger(yy) || yy < 0 || yy > 99) return undefined;
  if (words.length === 1 && !/^\d{2}$/.test(words[0]!) && yy < 20) return undefined;
  const century = today.y - (today.y % 100);
  if (prefer === 'past') return century + yy <= today.y ? century + yy : century - 100 + yy;
  return century + yy >= today.y ? century + yy : century + 100 + yy;
}

/** "the first of next month", "the 5th of this month", "the tenth next month". */
function monthRelativeDay(words: readonly string[], today: CalendarDate): Resolved | undefined {
  let w = words[0] === 'the' ? words.slice(1) : [...words];
  if (w[w.length - 1] !== 'month' || w.length < 3) return undefined;
  const which = w[w.length - 2];
  const offset = which === 'next' || which === 'following' ? 1 : which === 'this' ? 0 : undefined;
  if (offset === undefined) return undefined;
  w = w.slice(0, -2);
  if (w[w.length - 1] === 'of') w = w.slice(0, -1);
  const day = w.length <= 2 ? parseOrdinal(w) : undefined;
  if (day === undefined) return undefined;
  const { y, m } = addMonths({ y: today.y, m: today.m, d: 1 }, offset);
  return checkDay(y, m, day);
}

/** "Christmas day", "New Year's Eve", "Easter": completed like a date without a year. */
function holidayDate(
  words: readonly string[],
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): Resolved | undefined {
  const w = words[0] === 'on' || words[0] === 'for' ? words.slice(1) : words;
  const named = holiday(w, today.y);
  if (named === undefined) return undefined;
  let y = today.y;
  const c = compareDates({ y, ...named }, today);
  if (prefer === 'future' && c < 0) y++;
  if (prefer === 'past' && c > 0) y--;
  const inYear = holiday(w, y)!;
  return checkDay(y, inYear.m, inYear.d);
}

/** "the 5th": a day of the current month (or the next / previous one, per `prefer`). */
function dayOfMonth(
  words: readonly string[],
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): Resolved | undefined {
  if (words[0] !== 'the' || words.length > 3) return undefined;
  const day = parseOrdinal(words.slice(1));
  if (day === undefined) return undefined;
  let { y, m } = today;
  if (prefer === 'future' && day < today.d) ({ y, m } = addMonths({ y, m, d: 1 }, 1));
  if (prefer === 'past' && day > today.d) ({ y, m } = addMonths({ y, m, d: 1 }, -1));
  return checkDay(y, m, day);
}

/** "today", "tomorrow", "the day after tomorrow", "yesterday", "the day before yesterday". */
function namedDay(words: readonly string[], today: CalendarDate): CalendarDate | undefined {
  const phrase = (words[0] === 'the' ? words.slice(1) : words).join(' ');
  const offsets: Record<string, number> = {
    today: 0,
    tonight: 0,
    now: 0,
    tomorrow: 1,
    'tomorrow morning': 1,
    'tomorrow night': 1,
    'tomorrow afternoon': 1,
    'tomorrow evening': 1,
    'day after tomorrow': 2,
    yesterday: -1,
    'day before yesterday': -2,
  };
  const offset = offsets[phrase];
  return offset === undefined ? undefined : addDays(today, offset);
}

/** Moves `base` by "N days / weeks / months / years"; undefined when the words are not that. */
function shift(
  base: CalendarDate,
  amountWords: readonly string[],
  unit: string,
  sign: 1 | -1,
): CalendarDate | undefined {
  const amount =
    amountWords.length === 1 && ['a', 'an'].includes(amountWords[0]!)
      ? 1
      : parseCardinal(amountWords);
  if (amount === undefined || !Number.isInteger(amount) || amount < 0) return undefined;
  const days = UNIT_DAYS.get(unit);
  if (days !== undefined) return addDays(base, sign * amount * days);
  const months = UNIT_MONTHS.get(unit);
  if (months !== undefined) return addMonths(base, sign * amount * months);
  return undefined;
}

/** "in 3 days", "in a week", "two weeks from today", "3 days ago", "a month from tomorrow". */
function relativeOffset(words: readonly string[], today: CalendarDate): CalendarDate | undefined {
  if (words[0] === 'in' && words.length >= 3) {
    let w = words.slice(1);
    // "in a week's time", "in two weeks time"
    if (w[w.length - 1] === 'time' && w.length >= 3) {
      w = w.slice(0, -1);
      w[w.length - 1] = w[w.length - 1]!.replace(/'s$|s'$/u, '');
    }
    return shift(today, w.slice(0, -1), w[w.length - 1]!, 1);
  }
  if (words[words.length - 1] === 'ago' && words.length >= 3) {
    return shift(today, words.slice(0, -2), words[words.length - 2]!, -1);
  }
  const from = words.indexOf('from');
  if (from >= 2 && from === words.length - 2) {
    const base = namedDay([words[from + 1]!], today);
    if (base === undefined) return undefined;
    return shift(base, words.slice(0, from - 1), words[from - 1]!, 1);
  }
  const later = words[words.length - 1];
  if ((later === 'later' || later === 'hence') && words.length >= 3) {
    return shift(today, words.slice(0, -2), words[words.length - 2]!, 1);
  }
  return undefined;
}

/** "Monday", "this Friday", "next Monday", "last Tuesday", "on Wednesday". */
function weekdayPhrase(
  words: readonly string[],
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): CalendarDate | undefined {
  let w = [...words];
  let mode: 'bare' | 'this' | 'next' | 'last' = 'bare';
  const lead = w[0] === 'this' && w[1] === 'coming' ? 'this coming' : w[0];
  if (lead === 'this coming' || lead === 'this' || lead === 'coming') mode = 'this';
  else if (lead === 'next') mode = 'next';
  else if (lead === 'last' || lead === 'past') mode = 'last';
  if (mode !== 'bare') w = w.slice(lead === 'this coming' ? 2 : 1);
  if (w.length !== 1) return undefined;
  const target = WEEKDAYS.get(w[0]!);
  if (target === undefined) return undefined;
  const weekday = weekdayOf(today);
  const delta = (target - weekday + 7) % 7;
  if (mode === 'next' || mode === 'last') {
    // "next Friday" on a Wednesday may be the coming Friday or the one of next week: take it
    // only when both readings (with weeks starting Sunday or Monday) agree.
    const sign = mode === 'next' ? 1 : -1;
    const nearest = mode === 'next' ? (delta === 0 ? 7 : delta) : delta === 0 ? -7 : delta - 7;
    const ofWeek = (start: number) => {
      const offset = (target - start + 7) % 7;
      const weekStart = -((weekday - start + 7) % 7);
      return weekStart + sign * 7 + offset;
    };
    if (ofWeek(0) !== nearest || ofWeek(1) !== nearest) return undefined;
    return addDays(today, nearest);
  }
  if (mode === 'bare' && prefer === 'past') return addDays(today, delta === 0 ? 0 : delta - 7);
  return addDays(today, delta);
}

/** "4/15": month and day without a year, only when the day is unambiguous (over 12, or = month). */
function numericMonthDay(
  token: string,
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): Resolved | undefined {
  const md = /^(\d{1,2})\/(\d{1,2})$/.exec(token);
  if (!md) return undefined;
  const a = Number(md[1]);
  const b = Number(md[2]);
  if (a === b || (a <= 12 && b > 12)) return withoutYear(today, a, b, prefer);
  if (a > 12 && b <= 12) return withoutYear(today, b, a, prefer);
  return undefined;
}

/** "2026-03-05", "2026/3/5"; "5/3/2026" only when the day is unambiguous (over 12, or = month). */
function numericDate(token: string): Resolved | undefined {
  const ymd = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(token);
  if (ymd) return checkDay(Number(ymd[1]), Number(ymd[2]), Number(ymd[3]));
  const dmy = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$/.exec(token);
  if (!dmy) return undefined;
  const a = Number(dmy[1]);
  const b = Number(dmy[2]);
  const y = Number(dmy[3]);
  if (a === b || (a <= 12 && b > 12)) return checkDay(y, a, b);
  if (a > 12 && b <= 12) return checkDay(y, b, a);
  return undefined;
}

function resolve(
  words: readonly string[],
  today: CalendarDate,
  prefer: DateOptions['prefer'],
): Resolved | undefined {
  const named =
    namedDay(words, today) ?? relativeOffset(words, today) ?? weekdayPhrase(words, today, prefer);
  if (named !== undefined) return match(named);
  return (
    explicitDate(words, today, prefer) ??
    monthRelativeDay(words, today) ??
    dayOfMonth(words, today, prefer) ??
    holidayDate(words, today, prefer)
  );
}

/** Parts of a day or a clock time said with a date ("tomorrow at 3 pm", "Friday morning"). */
const TIME_OF_DAY =
  /\s+(?:(?:in the |this )?(?:morning|afternoon|evening|night)|at (?:\d{1,2}(?::\d{2})?|[a-z]+)(?: [a-z0-9]+)?(?: ?[ap]\.?m\.?)?|around (?:noon|midday|\d{1,2}(?::\d{2})? ?[ap]\.?m\.?))\s*$/u;

/** "tomorrow, no, the day after": a correction relative to the date just said. */
const ELLIPTIC =
  /^(.*?)[\s,.]+(?:no|no wait|wait|sorry|no sorry|i mean|actually|make that|or rather)[\s,.]+(?:make it |make that )?(the day after|the day before|the next day|the following day|the day after that|the day before that|a day later|a day earlier)[\s.!?]*$/u;

/**
 * Reads a calendar date and returns it as ISO "YYYY-MM-DD", resolved against `options.now` in
 * `options.timeZone` (UTC by default): ISO and unambiguous numeric dates, "March 5th 2026",
 * "5 March", "the fifth of March", spoken years ("twenty twenty six"), "today", "tomorrow",
 * "yesterday", "the day after tomorrow", "in 3 days", "two weeks from today", "3 days ago",
 * weekdays ("Friday", "next Monday" = the first Monday after today, "last Tuesday"), and "the
 * 5th". A day the month doesn't have, or a weekday that contradicts the date → invalid.
 * Ambiguous forms ("next week", "3/4/2026") → nomatch.
 */
export function date(text: string, options: DateOptions): ParseResult<string> {
  const elliptic = ELLIPTIC.exec(normalize(text));
  if (elliptic) {
    const head = dateOnce(elliptic[1]!, options);
    if (head.kind !== 'match') return nomatch();
    const back = /before|earlier/u.test(elliptic[2]!);
    const base = parseIsoDate(head.value)!;
    return match(isoDate(addDays(base, back ? -1 : 1)));
  }
  return selfCorrected(text, (t) => dateOnce(t, options)) ?? dateOnce(text, options);
}

function dateOnce(text: string, options: DateOptions): ParseResult<string> {
  const today = calendarDateIn(options.now, options.timeZone ?? 'UTC');
  let tokens = cleanTokens(normalize(text).replace(TIME_OF_DAY, ''));
  while (tokens.length > 1 && LEADING.has(tokens[0]!)) tokens = tokens.slice(1);
  if (tokens.length === 1) {
    const numeric = numericDate(tokens[0]!) ?? numericMonthDay(tokens[0]!, today, options.prefer);
    if (numeric !== undefined)
      return numeric.kind === 'match' ? match(isoDate(numeric.value)) : nomatchOr(numeric);
  }
  const hedged = unhedge(tokens.flatMap((t) => plainWords(t)));
  if (hedged === undefined) return nomatch();
  let words = hedged.words;
  while (words.length > 1 && LEADING.has(words[0]!)) words = words.slice(1);
  let weekday: number | undefined;
  const first = WEEKDAYS.get(words[0] ?? '');
  if (first !== undefined && words.length > 1) {
    const rest = words.slice(1);
    if (rest[0] === 'the' || MONTHS.has(rest[0]!) || dayNumber([rest[0]!]) !== undefined) {
      weekday = first;
      words = rest;
    }
  }
  const result = resolve(words, today, options.prefer);
  if (result === undefined) return nomatch();
  if (result.kind !== 'match') return nomatchOr(result);
  const resolved = result.value;
  if (weekday !== undefined && weekdayOf(resolved) !== weekday) {
    // "Tuesday the 21st" may mean another month's 21st: only a said month makes it a mistake.
    if (!words.some((w) => MONTHS.has(w))) return nomatch();
    const said = `${MONTH_NAMES[resolved.m - 1]} ${resolved.d}, ${resolved.y}`;
    return invalid(
      `${said} is a ${WEEKDAY_NAMES[weekdayOf(resolved)]}, not a ${WEEKDAY_NAMES[weekday]}.`,
    );
  }
  return hedged.approximate ? approximately(isoDate(resolved)) : match(isoDate(resolved));
}

/** A resolved date that is not a match as a result of the string-valued parser. */
function nomatchOr(result: Resolved): ParseResult<string> {
  return result.kind === 'invalid' ? result : nomatch();
}
