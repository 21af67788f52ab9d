/**
 * Text normalisation shared by the deterministic parsers: lower-casing, punctuation, filler
 * words ("um", "uh") and lead-ins ("it's", "my email is") that carry no answer.
 */

/** Filler words an STT transcript may contain that never carry an answer. */
export const FILLERS: ReadonlySet<string> = new Set([
  'um',
  'umm',
  'uh',
  'uhh',
  'uhm',
  'er',
  'erm',
  'hmm',
  'hm',
  'mm',
  'ah',
  'eh',
]);

const LEADING_PHRASES: readonly (readonly string[])[] = [
  ['put', 'me', 'down', 'for'],
  ["let's", 'go', 'with'],
  ["let's", 'make', 'it'],
  ["let's", 'do'],
  ['can', 'we', 'do'],
  ["i'll", 'go', 'with'],
  ["i'd", 'go', 'with'],
  ['i', 'would', 'go', 'with'],
  ["i'll", 'take'],
  ['i', 'would', 'like'],
  ["i'd", 'like'],
  ['go', 'with'],
  ['it', 'would', 'be'],
  ['that', 'would', 'be'],
  ['it', 'should', 'be'],
  ['i', 'would', 'say'],
  ['i', 'think', 'it', 'is'],
  ['i', 'think', 'it', "it's"],
  ['i', 'think', "it's"],
  ['i', 'think'],
  ['i', 'guess'],
  ['i', 'believe'],
  ["i'd", 'say'],
  ["let's", 'say'],
  ['let', 'me', 'see'],
  ['i', 'said'],
  ['it', 'is'],
  ['that', 'is'],
  ["it'd", 'be'],
  ['it', 'was'],
  ["it's"],
  ['its'],
  ["that's"],
  ['thats'],
  ['okay'],
  ['ok'],
  ['yeah'],
  ['yes'],
  ['sure'],
];

const TRAILING_PHRASES: readonly (readonly string[])[] = [
  ['thank', 'you'],
  ['thanks'],
  ['please'],
  ['i', 'think'],
  ['i', 'guess'],
];

/** Strips characters at the edges of a token that are sentence punctuation, not content. */
const EDGE_PUNCTUATION = /^[\s"'“”‘’,.!?;:()[\]{}…]+|[\s"'“”‘’,.!?;:()[\]{}…]+$/gu;

/**
 * Lower-cases, applies Unicode compatibility normalisation, unifies quotes and dashes and
 * collapses whitespace; keeps every symbol so parsers can still see "3.5" or "a@b.com".
 */
export function normalize(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[‘’ʼ`]/gu, "'")
    .replace(/[“”]/gu, '"')
    .replace(/[−–—]/gu, '-')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** Whitespace-separated tokens with edge punctuation removed; inner symbols ("3.5", "-2") kept. */
export function splitTokens(text: string): string[] {
  const out: string[] = [];
  for (const raw of normalize(text).split(' ')) {
    // A leading minus or plus is part of a number, not punctuation.
    const token = raw.replace(EDGE_PUNCTUATION, '');
    if (token.length > 0) out.push(token);
  }
  return out;
}

/** Plain words: every symbol except an in-word apostrophe becomes a word break ("forty-two"). */
export function plainWords(text: string): string[] {
  return normalize(text)
    .replace(/[^\p{L}\p{N}'\s]/gu, ' ')
    .split(' ')
    .map((w) => w.replace(/^'+|'+$/gu, ''))
    .filter((w) => w.length > 0);
}

/** A token reduced to letters, digits and apostrophes, for comparing against keyword lists. */
export function bare(token: string): string {
  return token.replace(/[^\p{L}\p{N}']/gu, '');
}

/** Drops filler words ("um", "uh") wherever they occur. */
export function removeFillers(tokens: readonly string[]): string[] {
  return tokens.filter((t) => !FILLERS.has(bare(t)));
}

function startsWith(tokens: readonly string[], phrase: readonly string[], at: number): boolean {
  if (at + phrase.length > tokens.length) return false;
  return phrase.every((p, i) => bare(tokens[at + i] ?? '') === p);
}

/** How many leading tokens form "my/the/our <up to 3 words> is|are|was" or "my name's". */
function possessiveLeadIn(tokens: readonly string[]): number {
  const first = bare(tokens[0] ?? '');
  if (first !== 'my' && first !== 'the' && first !== 'our') return 0;
  for (let i = 1; i <= 4 && i < tokens.length; i++) {
    const w = bare(tokens[i] ?? '');
    if ((w === 'is' || w === 'are' || w === 'was') && i >= 2) return i + 1;
    if (w.endsWith("'s") && w.length > 2) return i + 1;
  }
  return 0;
}

/**
 * Removes lead-ins and trailing politeness that carry no answer ("it's", "I think", "my phone
 * number is", "…please"), repeatedly. Never strips the utterance down to nothing: if stripping
 * would leave no tokens, the input comes back unchanged (so "yes" stays "yes").
 */
export function stripLeadIns(tokens: readonly string[]): string[] {
  let out = [...tokens];
  let changed = true;
  while (changed && out.length > 0) {
    changed = false;
    const possessive = possessiveLeadIn(out);
    if (possessive > 0 && possessive < out.length) {
      out = out.slice(possessive);
      changed = true;
      continue;
    }
    for (const phrase of LEADING_PHRASES) {
      if (phrase.length < out.length && startsWith(out, phrase, 0)) {
        out = out.slice(phrase.length);
        changed = true;
        break;
      }
    }
    if (changed) continue;
    for (const phrase of TRAILING_PHRASES) {
      const at = out.length - phrase.length;
      if (at > 0 && startsWith(out, phrase, at)) {
        out = out.slice(0, at);
        changed = true;
        break;
      }
    }
  }
  return out.length > 0 ? out : [...tokens];
}

/** Plain words of an utterance without fillers or lead-ins: the usual input of a word parser. */
export function cleanWords(text: string): string[] {
  return stripLeadIns(removeFillers(plainWords(text)));
}

/** Symbol-preserving tokens of an utterance without fillers or lead-ins ("-2", "3.5", "a@b.c"). */
export function cleanTokens(text: string): string[] {
  return stripLeadIns(removeFillers(splitTokens(text)));
}

/** Finds `phrase` (a word sequence) in `words` at or after `from`; -1 when absent. */
export function indexOfPhrase(
  words: readonly string[],
  phrase: readonly string[],
  from = 0,
): number {
  if (phrase.length === 0) return -1;
  for (let i = from; i + phrase.length <= words.length; i++) {
    if (phrase.every((p, j) => words[i + j] === p)) return i;
  }
  return -1;
}
