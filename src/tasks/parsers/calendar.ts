import { TasklineError } from '../../core/errors.js';

/** A calendar date without a time or zone; `m` is 1–12. */
export interface CalendarDate {
  y: number;
  m: number;
  d: number;
}

/** Month names and common abbreviations, January = 1. */
export const MONTHS: ReadonlyMap<string, number> = new Map([
  ['january', 1],
  ['jan', 1],
  ['february', 2],
  ['feb', 2],
  ['march', 3],
  ['mar', 3],
  ['april', 4],
  ['apr', 4],
  ['may', 5],
  ['june', 6],
  ['jun', 6],
  ['july', 7],
  ['jul', 7],
  ['august', 8],
  ['aug', 8],
  ['september', 9],
  ['sep', 9],
  ['sept', 9],
  ['october', 10],
  ['oct', 10],
  ['november', 11],
  ['nov', 11],
  ['december', 12],
  ['dec', 12],
]);

/** Weekday names and abbreviations, Sunday = 0 as in `Date.getUTCDay`. */
export const WEEKDAYS: ReadonlyMap<string, number> = new Map([
  ['sunday', 0],
  ['sun', 0],
  ['monday', 1],
  ['mon', 1],
  ['tuesday', 2],
  ['tue', 2],
  ['tues', 2],
  ['wednesday', 3],
  ['wed', 3],
  ['thursday', 4],
  ['thu', 4],
  ['thur', 4],
  ['thurs', 4],
  ['friday', 5],
  ['fri', 5],
  ['saturday', 6],
  ['sat', 6],
]);

/** English month names for sentences a caller hears. */
export const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** English weekday names, Sunday first. */
export const WEEKDAY_NAMES = [
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
] as const;

/** The calendar date `now` falls on in `timeZone` (an IANA name such as "America/New_York"). */
export function calendarDateIn(now: Date, timeZone: string): CalendarDate {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    }).formatToParts(now);
  } catch {
    throw new TasklineError(
      'invalid_argument',
      `Unknown time zone "${timeZone}". Pass an IANA name such as "America/New_York".`,
    );
  }
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  return { y: get('year'), m: get('month'), d: get('day') };
}

/** Days in month `m` (1–12) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function toUtc(date: CalendarDate): number {
  const ms = new Date(0);
  ms.setUTCFullYear(date.y, date.m - 1, date.d);
  return ms.getTime();
}

function fromUtc(ms: number): CalendarDate {
  const d = new Date(ms);
  return { y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate() };
}

/** `date` moved by `days` (negative for the past). */
export function addDays(date: CalendarDate, days: number): CalendarDate {
  return fromUtc(toUtc(date) + days * 86_400_000);
}

/** `date` moved by whole months, clamped to the month's last day (Jan 31 + 1 month → Feb 28). */
export function addMonths(date: CalendarDate, months: number): CalendarDate {
  const index = date.y * 12 + (date.m - 1) + months;
  const y = Math.floor(index / 12);
  const m = (index % 12) + 1;
  return { y, m, d: Math.min(date.d, daysInMonth(y, m)) };
}

/** Day of the week, Sunday = 0. */
export function weekdayOf(date: CalendarDate): number {
  return new Date(toUtc(date)).getUTCDay();
}

/** Negative, zero or positive as `a` is before, the same as, or after `b`. */
export function compareDates(a: CalendarDate, b: CalendarDate): number {
  return a.y - b.y || a.m - b.m || a.d - b.d;
}

/** ISO 8601 calendar date, YYYY-MM-DD. */
export function isoDate(date: CalendarDate): string {
  const pad = (n: number, w: number): string => String(n).padStart(w, '0');
  return `${pad(date.y, 4)}-${pad(date.m, 2)}-${pad(date.d, 2)}`;
}

/** Parses a strict YYYY-MM-DD string, or undefined. */
export function parseIsoDate(value: string): CalendarDate | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return undefined;
  const date = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
  if (date.m < 1 || date.m > 12 || date.d < 1 || date.d > daysInMonth(date.y, date.m)) {
    return undefined;
  }
  return date;
}
