import type { CountryCode } from 'libphonenumber-js';
import { MONTH_NAMES, parseIsoDate, WEEKDAY_NAMES, weekdayOf } from './calendar.js';
import type { PersonName } from './name.js';
import { phoneLib } from './phone-lib.js';

/** How symbols are said when a value is spelled back. */
const SYMBOL_NAMES: Readonly<Record<string, string>> = {
  '.': 'dot',
  '@': 'at',
  _: 'underscore',
  '-': 'dash',
  '+': 'plus',
  ' ': 'space',
  '/': 'slash',
  "'": 'apostrophe',
  '#': 'pound',
  '*': 'star',
  ',': 'comma',
  '&': 'and',
  ':': 'colon',
};

/**
 * Spells a value character by character for a confirmation read-back:
 * "john.smith@example.com" → "j, o, h, n, dot, s, m, i, t, h, at, e, x, a, m, p, l, e, dot,
 * c, o, m". Letters keep their case; symbols are named.
 */
export function spellLetters(value: string): string {
  return [...value].map((c) => SYMBOL_NAMES[c] ?? c).join(', ');
}

/** Group sizes for `n` digits: threes, ending in a four where needed (7 → 3-4, 10 → 3-3-4). */
function defaultGroups(n: number): number[] {
  if (n <= 4) return [n];
  if (n === 5) return [3, 2];
  const groups: number[] = [];
  let left = n;
  const tail = n % 3 === 1 ? [4] : n % 3 === 2 ? [4, 4] : [];
  left -= tail.reduce((a, b) => a + b, 0);
  while (left > 0) {
    groups.push(3);
    left -= 3;
  }
  return [...groups, ...tail];
}

/**
 * Reads digits back in groups, each digit on its own: "4155551234" → "4 1 5, 5 5 5, 1 2 3 4".
 * Non-digits are ignored except a leading "+" ("plus"). Pass `groups` for explicit sizes.
 */
export function groupDigits(digits: string, groups?: readonly number[]): string {
  const plus = digits.trim().startsWith('+');
  const only = digits.replace(/[^0-9]/g, '');
  const sizes = groups ?? defaultGroups(only.length);
  const parts: string[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= only.length) break;
    parts.push([...only.slice(at, at + size)].join(' '));
    at += size;
  }
  if (at < only.length) parts.push([...only.slice(at)].join(' '));
  return (plus ? 'plus ' : '') + parts.join(', ');
}

/** The value type each read-back kind takes. */
export interface ReadBackValues {
  email: string;
  letters: string;
  phone: string;
  digits: string;
  name: PersonName;
  date: string;
  time: string;
  number: number;
  likert: number;
  yesNo: boolean;
  choice: string;
  text: string;
}

/** A kind of value `readBack` knows how to say. */
export type ReadBackKind = keyof ReadBackValues;

/** Context for read-backs that depend on where the caller is. */
export interface ReadBackOptions {
  /** Phone numbers in this region are read in national form, others with "plus" (default US). */
  defaultRegion?: CountryCode;
}

function readPhone(value: string, options: ReadBackOptions): string {
  const parsed = phoneLib().parsePhoneNumberFromString(value, options.defaultRegion ?? 'US');
  if (parsed === undefined) return groupDigits(value);
  const national =
    parsed.country !== undefined && parsed.country === (options.defaultRegion ?? 'US');
  const formatted = national ? parsed.formatNational() : parsed.formatInternational();
  const groups = formatted.match(/\d+/g) ?? [];
  return (national ? '' : 'plus ') + groups.map((g) => [...g].join(' ')).join(', ');
}

function readName(value: PersonName): string {
  const parts = [value.first, value.last].filter((p): p is string => p !== undefined && p !== '');
  const spelled = parts.map((p) => spellLetters(p.toUpperCase())).join(', then ');
  return `${parts.join(' ')}, spelled ${spelled}`;
}

function readDate(value: string): string {
  const d = parseIsoDate(value);
  if (d === undefined) return value;
  return `${WEEKDAY_NAMES[weekdayOf(d)]}, ${MONTH_NAMES[d.m - 1]} ${d.d}, ${d.y}`;
}

function readTime(value: string): string {
  const m = /^(\d{2}):(\d{2})$/.exec(value);
  if (!m) return value;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (min === 0 && h === 12) return 'noon';
  if (min === 0 && h === 0) return 'midnight';
  const h12 = h % 12 === 0 ? 12 : h % 12;
  return `${h12}:${m[2]} ${h < 12 ? 'AM' : 'PM'}`;
}

const READERS: {
  [K in ReadBackKind]: (value: ReadBackValues[K], options: ReadBackOptions) => string;
} = {
  email: (v) => spellLetters(v),
  letters: (v) => spellLetters(v),
  phone: readPhone,
  digits: (v) => groupDigits(v),
  name: readName,
  date: readDate,
  time: readTime,
  number: (v) => (v < 0 ? `minus ${String(-v)}` : String(v)),
  likert: (v) => String(v),
  yesNo: (v) => (v ? 'yes' : 'no'),
  choice: (v) => v,
  text: (v) => v,
};

/**
 * Says a captured value back for confirmation in its most checkable form: emails spelled
 * letter by letter, phone numbers and digit strings in digit groups, names spelled, dates with
 * the weekday ("Thursday, March 5, 2026"), times on a 12-hour clock ("3:30 PM").
 */
export function readBack<K extends ReadBackKind>(
  kind: K,
  value: ReadBackValues[K],
  options: ReadBackOptions = {},
): string {
  return READERS[kind](value, options);
}
