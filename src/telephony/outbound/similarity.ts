/**
 * How alike two far-end prompts are, for loop detection: cosine similarity of their word and
 * word-pair counts (after normalising case and punctuation), 0 (nothing shared) to 1 (the
 * same words in the same order). A menu replayed after an invalid entry, or re-read by a
 * speech recogniser with a word or two changed, scores well above 0.8; two different menus
 * of one IVR share their frame ("press", "for") but not their options, and score lower.
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

/** Cosine similarity of two texts' word and word-pair counts, in [0, 1]. */
export function promptSimilarity(a: string, b: string): number {
  const x = terms(a);
  const y = terms(b);
  if (x.size === 0 || y.size === 0) return 0;
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (const [t, n] of x) {
    nx += n * n;
    dot += n * (y.get(t) ?? 0);
  }
  for (const n of y.values()) ny += n * n;
  return dot / Math.sqrt(nx * ny);
}
