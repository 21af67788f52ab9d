/**
 * Holidays a caller may name instead of a date ("Christmas day", "New Year's Eve"): only
 * those whose date is the same everywhere they are kept, so none is a guess about where the
 * caller lives.
 */
import type { CalendarDate } from './calendar.js';

const FIXED: ReadonlyMap<string, { m: number; d: number }> = new Map([
  ['christmas', { m: 12, d: 25 }],
  ['christmas day', { m: 12, d: 25 }],
  ['xmas', { m: 12, d: 25 }],
  ['christmas eve', { m: 12, d: 24 }],
  ['boxing day', { m: 12, d: 26 }],
  ["new year's day", { m: 1, d: 1 }],
  ['new years day', { m: 1, d: 1 }],
  ['new year day', { m: 1, d: 1 }],
  ["new year's eve", { m: 12, d: 31 }],
  ['new years eve', { m: 12, d: 31 }],
  ['halloween', { m: 10, d: 31 }],
  ["valentine's day", { m: 2, d: 14 }],
  ['valentines day', { m: 2, d: 14 }],
  ["saint patrick's day", { m: 3, d: 17 }],
  ["st patrick's day", { m: 3, d: 17 }],
  ['st patricks day', { m: 3, d: 17 }],
]);

/** Western Easter Sunday (anonymous Gregorian computus). */
function easter(y: number): { m: number; d: number } {
  const a = y % 19;
  const b = Math.floor(y / 100);
  const c = y % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  return { m: month, d: ((h + l - 7 * m + 114) % 31) + 1 };
}

/**
 * The month and day of a named holiday in year `y` ("christmas day", "easter sunday"), or
 * undefined when the words are not a holiday this parser knows.
 */
export function holiday(words: readonly string[], y: number): { m: number; d: number } | undefined {
  const phrase = words.join(' ');
  const fixed = FIXED.get(phrase);
  if (fixed !== undefined) return fixed;
  if (phrase === 'easter' || phrase === 'easter sunday' || phrase === 'easter day')
    return easter(y);
  return undefined;
}

/** Compares month/day pairs within a year. */
export function beforeInYear(a: { m: number; d: number }, b: CalendarDate): boolean {
  return a.m < b.m || (a.m === b.m && a.d < b.d);
}
