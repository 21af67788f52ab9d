/**
 * Corrections of a value the caller has just heard read back: "no, it's D O E" (a spelling
 * that patches one part), "no, the last four are 1 2 3 4" (digits that patch an end), and the
 * rejection words that lead them. A patch applies only when exactly one part fits; otherwise
 * the caller is asked again, never guessed for.
 */
import { spokenDigits } from './digits.js';
import { parseCardinal } from './numerals.js';
import { invalid, match, nomatch, type ParseResult } from './result.js';
import { normalize, plainWords } from './words.js';
import { yesNo } from './yes-no.js';

/** Levenshtein distance of two short strings. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The index of the one part a spelling corrects: same first letter and at most a third of its
 * letters different ("doh" ← "DOE", "Smith" ← "SMYTH"). Undefined when none or several fit.
 */
export function spelledTarget(parts: readonly string[], spelled: string): number | undefined {
  const s = spelled.toLowerCase();
  const fits = parts.flatMap((p, i) => {
    const lower = p.toLowerCase();
    if (lower.length === 0 || lower[0] !== s[0]) return [];
    const d = editDistance(lower, s);
    return d <= Math.max(1, Math.floor(s.length / 3)) ? [i] : [];
  });
  return fits.length === 1 ? fits[0] : undefined;
}

/**
 * Patches an email address with a spelled part: "jane.doh@example.com" + "DOE" →
 * "jane.doe@example.com". Only the name parts before the at sign and the domain labels before
 * the last one are candidates; undefined unless exactly one fits.
 */
export function patchEmail(address: string, spelled: string): string | undefined {
  const at = address.indexOf('@');
  if (at < 0) return undefined;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  const pieces = local.split(/([._+-])/u);
  const labels = domain.split('.');
  const parts = [...pieces, ...labels.slice(0, -1)];
  const target = spelledTarget(
    parts.map((p) => (/^[._+-]$/u.test(p) ? '' : p)),
    spelled,
  );
  if (target === undefined) return undefined;
  const lower = spelled.toLowerCase();
  if (target < pieces.length) {
    pieces[target] = lower;
    return `${pieces.join('')}@${domain}`;
  }
  labels[target - pieces.length] = lower;
  return `${local}@${labels.join('.')}`;
}

const ENDS: ReadonlyMap<string, 'first' | 'last'> = new Map([
  ['first', 'first'],
  ['last', 'last'],
  ['final', 'last'],
]);
const COUNT_NOUNS = new Set(['digits', 'digit', 'numbers', 'number', 'ones', 'one']);
const LINKS = new Set(['are', 'is', 'should', 'be', 'were', 'was', "it's", 'its', 'in', 'with']);

/**
 * Reads "the last four are 1 2 3 4", "the first three digits should be 5 5 5", "it ends in
 * 1234" and patches that end of `digits` (a digit string, or E.164 with its "+"). Without a
 * "first/last" phrase → nomatch; a count that does not fit what was said or the value →
 * invalid with a reason. A phone number's first digits are not patched (the country code
 * makes "the first three" unclear) unless `allowFirst`.
 */
export function patchDigitEnd(
  value: string,
  text: string,
  options: { allowFirst?: boolean } = {},
): ParseResult<string> {
  let w = plainWords(normalize(text));
  while (
    ['no', 'it', "it's", 'its', 'the', 'and', 'sorry', 'actually', 'but'].includes(w[0] ?? '')
  ) {
    w = w.slice(1);
  }
  let end: 'first' | 'last' | undefined;
  let count: number | undefined;
  if ((w[0] === 'ends' || w[0] === 'ending') && (w[1] === 'in' || w[1] === 'with')) {
    end = 'last';
    w = w.slice(2);
  } else if (ENDS.has(w[0] ?? '')) {
    end = ENDS.get(w[0]!)!;
    w = w.slice(1);
    const n = w[0] === undefined ? undefined : (parseCardinal([w[0]]) ?? undefined);
    if (n !== undefined && Number.isInteger(n) && n > 0 && n < 20) {
      count = n;
      w = w.slice(1);
    }
    if (COUNT_NOUNS.has(w[0] ?? '')) w = w.slice(1);
    while (LINKS.has(w[0] ?? '')) w = w.slice(1);
  }
  if (end === undefined || w.length === 0) return nomatch();
  const said = spokenDigits(w.join(' '));
  if (said === undefined || !/^\d+$/u.test(said)) return nomatch();
  if (count !== undefined && count !== said.length) {
    return invalid(`I heard ${said.length} digits for the ${end} ${count}.`);
  }
  const plus = value.startsWith('+') ? '+' : '';
  const body = value.slice(plus.length);
  if (said.length >= body.length) return invalid('That is as long as the whole number.');
  if (end === 'first' && plus !== '' && !options.allowFirst) return nomatch();
  const patched =
    end === 'last'
      ? body.slice(0, body.length - said.length) + said
      : said + body.slice(said.length);
  return match(plus + patched);
}

/** Words that reject a read-back when they open the reply ("no, it's D O E"). */
const REJECTIONS: readonly (readonly string[])[] = [
  ["that's", 'not', 'right'],
  ['that', 'is', 'not', 'right'],
  ["that's", 'not', 'correct'],
  ['that', 'is', 'not', 'correct'],
  ["that's", 'wrong'],
  ['that', 'is', 'wrong'],
  ["it's", 'wrong'],
  ['not', 'quite'],
  ['not', 'exactly'],
  ['not', 'right'],
  ['no', 'no'],
  ['wrong'],
  ['incorrect'],
  ['nope'],
  ['nah'],
  ['no'],
];

/**
 * The words after a leading rejection ("no, it's D O E" → "it's D O E"), from the original
 * text; undefined when the reply does not open with one or nothing follows it.
 */
export function afterRejection(text: string): string | undefined {
  const raw = text.trim().split(/\s+/u);
  const bare = raw.map((t) => normalize(t).replace(/^[^\p{L}\p{N}']+|[^\p{L}\p{N}']+$/gu, ''));
  let i = 0;
  while (['um', 'uh', 'er', 'oh', 'well', 'sorry'].includes(bare[i] ?? '')) i++;
  let found = false;
  for (;;) {
    const r = REJECTIONS.find((p) => p.every((w, j) => bare[i + j] === w));
    if (r === undefined) break;
    i += r.length;
    found = true;
    while (['sorry', 'um', 'uh', 'wait', 'actually'].includes(bare[i] ?? '')) i++;
  }
  if (!found) return undefined;
  const rest = raw
    .slice(i)
    .join(' ')
    .replace(/^[\s,.;:!-]+/u, '');
  return /[\p{L}\p{N}]/u.test(rest) ? rest : undefined;
}

/** Words after an opening yes that turn what follows into a correction ("yes, but…"). */
const CONTRASTS = new Set(['but', 'except', 'although', 'though', 'however', 'only', 'just']);

/** What follows an opening yes: the words, and whether a contrast ("but") led them. */
export interface AfterYes {
  rest: string;
  /** "yes, but it's 5 5 6": the words correct the value rather than confirm it. */
  contrast: boolean;
}

/**
 * The words after an opening yes ("yes, but it's 5 5 6" → "it's 5 5 6", a contrast; "yes,
 * eight" → "eight"), from the original text; undefined when the reply does not open with a
 * yes or nothing follows it.
 */
export function afterYes(text: string): AfterYes | undefined {
  const raw = text.trim().split(/\s+/u);
  const bare = raw.map((t) => normalize(t).replace(/^[^\p{L}\p{N}']+|[^\p{L}\p{N}']+$/gu, ''));
  let i = 0;
  while (['um', 'uh', 'er', 'oh', 'well'].includes(bare[i] ?? '')) i++;
  let end = -1;
  for (let k = i + 1; k <= Math.min(raw.length, i + 4); k++) {
    const answer = yesNo(raw.slice(i, k).join(' '));
    if (answer.kind === 'match' && answer.value) end = k;
  }
  if (end < 0) return undefined;
  const contrast = CONTRASTS.has(bare[end] ?? '');
  const rest = raw
    .slice(contrast ? end + 1 : end)
    .join(' ')
    .replace(/^[\s,.;:!-]+/u, '');
  return /[\p{L}\p{N}]/u.test(rest) ? { rest, contrast } : undefined;
}
