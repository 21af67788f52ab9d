/**
 * Spelled-out letters as STT writes them: single letters ("j"), letter names ("jay", "double
 * u"), "double t", and "s as in sam" — shared by the email and name parsers.
 */

/** Letter names a transcript may contain instead of the letter. */
export const LETTER_NAMES: ReadonlyMap<string, string> = new Map([
  ['aye', 'a'],
  ['bee', 'b'],
  ['be', 'b'],
  ['cee', 'c'],
  ['see', 'c'],
  ['sea', 'c'],
  ['dee', 'd'],
  ['ee', 'e'],
  ['ef', 'f'],
  ['eff', 'f'],
  ['gee', 'g'],
  ['aitch', 'h'],
  ['eye', 'i'],
  ['jay', 'j'],
  ['kay', 'k'],
  ['el', 'l'],
  ['ell', 'l'],
  ['em', 'm'],
  ['en', 'n'],
  ['oh', 'o'],
  ['pee', 'p'],
  ['cue', 'q'],
  ['queue', 'q'],
  ['are', 'r'],
  ['ar', 'r'],
  ['ess', 's'],
  ['tee', 't'],
  ['tea', 't'],
  ['you', 'u'],
  ['vee', 'v'],
  ['ex', 'x'],
  ['why', 'y'],
  ['zee', 'z'],
  ['zed', 'z'],
]);

/** True for a single letter token ("j"), in any script. */
export function isLetter(token: string): boolean {
  return /^\p{L}$/u.test(token);
}

/**
 * Reads one spelled letter starting at `i`: "j", "jay", "double t" (→ "tt"), "double u" /
 * "double you" (→ "w"), "s as in sam", "s for sugar". Returns the letters and how many tokens
 * were used, or undefined when the tokens there are not a spelled letter.
 */
export function readSpelledLetter(
  tokens: readonly string[],
  i: number,
  allowNames: boolean,
): { letters: string; used: number } | undefined {
  const t = tokens[i];
  if (t === undefined) return undefined;
  const letterAt = (k: number): string | undefined => {
    const w = tokens[k];
    if (w === undefined) return undefined;
    if (isLetter(w)) return w;
    return allowNames ? LETTER_NAMES.get(w) : undefined;
  };
  if ((t === 'double' || t === 'triple') && tokens[i + 1] !== undefined) {
    const next = tokens[i + 1]!;
    if (t === 'double' && (next === 'u' || next === 'you')) return { letters: 'w', used: 2 };
    const l = letterAt(i + 1);
    if (l !== undefined) return withExample(tokens, i + 2, l.repeat(t === 'double' ? 2 : 3), 2);
    return undefined;
  }
  const l = letterAt(i);
  if (l === undefined) return undefined;
  return withExample(tokens, i + 1, l, 1);
}

/** Swallows "as in sam" / "for sugar" after a letter when the example starts with that letter. */
function withExample(
  tokens: readonly string[],
  at: number,
  letters: string,
  used: number,
): { letters: string; used: number } {
  const first = letters[0]!;
  if (tokens[at] === 'as' && tokens[at + 1] === 'in' && tokens[at + 2]?.startsWith(first)) {
    return { letters, used: used + 3 };
  }
  if ((tokens[at] === 'for' || tokens[at] === 'like') && tokens[at + 1]?.startsWith(first)) {
    return { letters, used: used + 2 };
  }
  return { letters, used };
}

function spellable(token: string | undefined): boolean {
  return token !== undefined && (isLetter(token) || LETTER_NAMES.has(token) || token === 'double');
}

/**
 * True when the token at `i` sits in a spelling: next to a single letter ("j oh h n"), or in a
 * run of three or more letters / letter names ("jay oh aitch en"). Only then are letter names
 * such as "jay" or "you" read as letters rather than words.
 */
export function inSpelling(tokens: readonly string[], i: number): boolean {
  if (isLetter(tokens[i - 1] ?? '') || isLetter(tokens[i + 1] ?? '')) return true;
  if (!spellable(tokens[i])) return false;
  let start = i;
  while (spellable(tokens[start - 1])) start--;
  let end = i;
  while (spellable(tokens[end + 1])) end++;
  return end - start + 1 >= 3;
}
