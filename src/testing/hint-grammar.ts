/**
 * Hints per question for a grammar-based recogniser: the expected phrases become a JSGF
 * grammar (any sequence of them), and the grammar's answer is trusted only where a free
 * decode of the same audio agrees with it phone by phone — so a caller who says something
 * the question did not expect is never forced into one of its answers.
 */
import { createHash } from 'node:crypto';
import type { AnswerKind } from '../core/expectation.js';
import type { RecognitionHints } from './recognizer.js';

/**
 * Answers made of a closed set of words, where a grammar of the expected phrases helps.
 * Open answers (free text, names, emails, addresses) keep the free language model: a grammar
 * of a few example phrases would only force other words into them.
 */
const CLOSED: ReadonlySet<AnswerKind> = new Set([
  'digits',
  'number',
  'yesNo',
  'choice',
  'phone',
  'date',
  'time',
]);

const DIGIT_WORDS = [
  'zero',
  'oh',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
];
const ONES = DIGIT_WORDS.filter((w) => w !== 'oh');
const TEENS = [
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
/** Phrases capped per grammar (a menu's options and synonyms fit many times over). */
const MAX_PHRASES = 200;

/** `n` (0–9999) in words, as a caller says it: 42 → "forty two". */
export function numberWords(n: number): string {
  if (n < 10) return ONES[n]!;
  if (n < 20) return TEENS[n - 10]!;
  if (n < 100) return [TENS[Math.floor(n / 10)]!, n % 10 ? ONES[n % 10]! : ''].join(' ').trim();
  if (n < 1000) {
    const rest = n % 100;
    return `${ONES[Math.floor(n / 100)]} hundred${rest ? ` ${numberWords(rest)}` : ''}`;
  }
  const rest = n % 1000;
  return `${numberWords(Math.floor(n / 1000))} thousand${rest ? ` ${numberWords(rest)}` : ''}`;
}

/** A phrase as recogniser words: lower case, numerals spelled out, punctuation dropped. */
export function phraseWords(phrase: string): string[] {
  return phrase
    .toLowerCase()
    .replace(/\d+/g, (digits) => {
      const n = Number(digits);
      // Long digit strings are read digit by digit, as callers say account numbers.
      return digits.length <= 4 && !digits.startsWith('0')
        ? ` ${numberWords(n)} `
        : ` ${[...digits].map((d) => ONES[Number(d)]).join(' ')} `;
    })
    .replace(/[^a-z' ]+/g, ' ')
    .split(/\s+/)
    .filter((w) => w && w !== "'");
}

/** Whether hints for `kind` call for a grammar (closed answers with words to build it from). */
export function wantsGrammar(hints: RecognitionHints | undefined): boolean {
  return hints?.kind !== undefined && CLOSED.has(hints.kind) && grammarPhrases(hints).length > 0;
}

/**
 * The phrases of `hints` as word lists a grammar can hold: spelled out, de-duplicated, and
 * for digit-like answers completed with every digit word (a hint list naming "1" and "2"
 * does not stop a caller saying "seven").
 */
export function grammarPhrases(hints: RecognitionHints): string[][] {
  const seen = new Set<string>();
  const out: string[][] = [];
  const add = (words: string[]) => {
    const key = words.join(' ');
    if (!words.length || seen.has(key) || out.length >= MAX_PHRASES) return;
    seen.add(key);
    out.push(words);
  };
  for (const p of hints.phrases) add(phraseWords(p));
  if (hints.kind === 'digits' || hints.kind === 'phone' || hints.kind === 'number') {
    for (const w of DIGIT_WORDS) add([w]);
  }
  return out;
}

/** A JSGF grammar accepting any sequence of `phrases`, named by its content. */
export function jsgfOf(phrases: readonly string[][]): { name: string; jsgf: string } {
  const body = phrases.map((p) => p.join(' ')).join(' | ');
  const jsgf = `#JSGF V1.0;\ngrammar hints;\npublic <answer> = ( ${body} )+ ;\n`;
  const name = `g${createHash('sha1').update(jsgf).digest('hex').slice(0, 12)}`;
  return { name, jsgf };
}

/** One decoded word with its pronunciation (dictionary phones). */
export interface PhonedWord {
  word: string;
  phones: readonly string[];
}

/** How well a grammar decode agrees with a free decode of the same audio. */
export interface Agreement {
  /** 1 − phone edit distance / longer phone string: 1 is the same sounds. */
  score: number;
  /** Grammar words whose sounds the free decode did not hear (at least half unmatched). */
  unheard: string[];
}

/** Broad phone classes (CMU dictionary phones): a swap within a class costs half. */
const PHONE_CLASS: Record<string, string> = Object.fromEntries(
  Object.entries({
    vowel: 'AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW',
    stop: 'B D G K P T',
    fricative: 'DH F HH S SH TH V Z ZH CH JH',
    nasal: 'M N NG',
    glide: 'L R W Y',
  }).flatMap(([cls, phones]) => phones.split(' ').map((p) => [p, cls])),
);

function swapCost(a: string, b: string): number {
  if (a === b) return 0;
  return PHONE_CLASS[a] !== undefined && PHONE_CLASS[a] === PHONE_CLASS[b] ? 0.5 : 1;
}

/**
 * Compares the grammar's words with the free decode's, phone by phone (a Levenshtein
 * alignment where a swap within a broad class — vowel for vowel — costs half; a grammar word
 * counts as heard when at least half its phones were heard exactly): "no thanks" vs "oh
 * thanks" agrees, "five" vs "fight" agrees, "four" vs "five" does not (only F was heard: on a
 * noisy line the grammar picked the wrong digit), "eight four" vs "four" does not ("eight"
 * was not heard: the grammar inserted it), "no no yes" vs "i lost my wallet" does not.
 */
export function agreement(grammar: readonly PhonedWord[], free: readonly PhonedWord[]): Agreement {
  const g = grammar.flatMap((w, i) => w.phones.map((p) => ({ p, word: i })));
  const f = free.flatMap((w) => w.phones);
  const rows = g.length + 1;
  const cols = f.length + 1;
  const cost = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) cost[i * cols] = i;
  for (let j = 0; j < cols; j++) cost[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      cost[i * cols + j] = Math.min(
        cost[(i - 1) * cols + j]! + 1,
        cost[i * cols + j - 1]! + 1,
        cost[(i - 1) * cols + j - 1]! + swapCost(g[i - 1]!.p, f[j - 1]!),
      );
    }
  }
  // Walk back the alignment: how many of each grammar word's phones were heard exactly (a
  // swap within a class lowers the score but is not counted as heard: "four" vs "five").
  const heard = new Array<number>(grammar.length).fill(0);
  let i = g.length;
  let j = f.length;
  while (i > 0 && j > 0) {
    const here = cost[i * cols + j]!;
    const swap = swapCost(g[i - 1]!.p, f[j - 1]!);
    if (here === cost[(i - 1) * cols + j - 1]! + swap) {
      if (swap === 0) heard[g[i - 1]!.word]! += 1;
      i--;
      j--;
    } else if (here === cost[(i - 1) * cols + j]! + 1) i--;
    else j--;
  }
  const distance = cost[rows * cols - 1]!;
  const longer = Math.max(g.length, f.length);
  const unheard = grammar
    .filter((w, k) => w.phones.length > 0 && heard[k]! * 2 < w.phones.length)
    .map((w) => w.word);
  return { score: longer ? 1 - distance / longer : 1, unheard };
}

/** The least agreement at which a grammar's answer is taken over the free decode's. */
export const MIN_AGREEMENT = 0.5;

/** True when the grammar decode may be trusted: close overall, and no word it made up. */
export function trustGrammar(a: Agreement): boolean {
  return a.score >= MIN_AGREEMENT && a.unheard.length === 0;
}
