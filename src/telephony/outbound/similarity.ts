/**
 * How alike two far-end prompts are, for loop detection: cosine similarity of their word and
 * word-pair counts (after normalising case and punctuation), 0 (nothing shared) to 1 (the
 * same words in the same order), or the share of the shorter one found in the longer one. A
 * menu replayed after an invalid entry, or re-read by a speech recogniser with a word or two
 * changed, scores well above 0.8; two different menus of one IVR share their frame ("press",
 * "for") but not their options, and score lower.
 */

function terms(text: string): Map<string, number> {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(' ')
    .filter(Boolean);
  const counts = new Map<string, number>();
  const add = (t: string) => counts.set(t, (counts.get(t) ?? 0) + 1);
  for (let i = 0; i < words.length; i++) {
    add(words[i]!);
    if (i > 0) add(`${words[i - 1]} ${words[i]}`);
  }
  return counts;
}

/** Fewest words a prompt needs for "contained in the other" to count as the same prompt. */
const CONTAINED_MIN_WORDS = 5;

/**
 * How alike two prompts are, in [0, 1]: the cosine similarity of their word and word-pair
 * counts, or — when one prompt of at least five words comes back inside a longer one ("Sorry,
 * that is not a valid option. Main menu. For billing…") — the share of it found in the other.
 */
export function promptSimilarity(a: string, b: string): number {
  const x = terms(a);
  const y = terms(b);
  if (x.size === 0 || y.size === 0) return 0;
  let dot = 0;
  let nx = 0;
  let ny = 0;
  let common = 0;
  let totalX = 0;
  let totalY = 0;
  for (const [t, n] of x) {
    nx += n * n;
    totalX += n;
    const m = y.get(t) ?? 0;
    dot += n * m;
    common += Math.min(n, m);
  }
  for (const n of y.values()) {
    ny += n * n;
    totalY += n;
  }
  const cosine = dot / Math.sqrt(nx * ny);
  const smaller = Math.min(totalX, totalY);
  // Terms are words plus word pairs: n words make 2n - 1 terms.
  const containment = smaller >= 2 * CONTAINED_MIN_WORDS - 1 ? common / smaller : 0;
  return Math.max(cosine, containment);
}
