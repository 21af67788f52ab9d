/**
 * What callers do around an answer, shared by the parsers: self-corrections ("four, no wait,
 * five"), hedges that make a value approximate ("about six") or a bound rather than a value
 * ("more than six"), alternatives ("seven or eight"), and questions back ("what?"). Each helper
 * only finds the phenomenon; the parser decides what it means for its kind of answer.
 */
import { isNumberWord } from './numerals.js';
import type { ParseResult } from './result.js';
import { normalize } from './words.js';

/** An utterance split into words, each with its bare lower-case form for matching. */
interface Word {
  raw: string;
  bare: string;
}

function words(text: string): Word[] {
  return text
    .split(/\s+/u)
    .filter((w) => w.length > 0)
    .map((raw) => ({
      raw,
      bare: normalize(raw).replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}']+$/gu, ''),
    }));
}

const join = (ws: readonly Word[]): string => ws.map((w) => w.raw).join(' ');

/**
 * Phrases that retract what came before ("four, no wait, five"). Longest first, so "no wait"
 * wins over "wait". A bare "no" between two answers is handled separately (it needs both sides
 * to be answers).
 */
const CORRECTION_MARKERS: readonly (readonly string[])[] = [
  ['let', 'me', 'correct', 'that'],
  ['scratch', 'that'],
  ['make', 'that'],
  ['or', 'rather'],
  ['no', 'wait'],
  ['wait', 'no'],
  ['oh', 'wait'],
  ['no', 'sorry'],
  ['sorry', 'no'],
  ['actually', 'no'],
  ['no', 'actually'],
  ['i', 'mean'],
  ['i', 'meant'],
  ['my', 'mistake'],
  ['my', 'bad'],
  ['correction'],
  ['actually'],
  ['sorry'],
  ['wait'],
  ['oops'],
];

/** Markers that, with nothing after them, mean the caller was cut off mid-correction. */
export const DANGLING_MARKERS: ReadonlySet<string> = new Set([
  'no wait',
  'wait no',
  'wait',
  'oh wait',
  'i mean',
  'or rather',
  'make that',
  'actually no',
  'no actually',
  'scratch that',
  'let me correct that',
]);

function markerAt(ws: readonly Word[], i: number): number {
  for (const m of CORRECTION_MARKERS) {
    if (m.every((p, j) => ws[i + j]?.bare === p)) return m.length;
  }
  return 0;
}

/** Where an utterance corrects itself: the words before and after its last marker. */
export interface CorrectionSplit {
  head: string;
  tail: string;
  /** The marker as said ("no wait", "sorry"). */
  marker: string;
}

/**
 * Finds the last self-correction marker ("no wait", "sorry", "I mean", "actually") and splits
 * the utterance there; undefined when there is none. The tail may be empty ("five, no wait").
 */
export function lastCorrection(text: string): CorrectionSplit | undefined {
  const ws = words(text);
  for (let i = ws.length - 1; i >= 0; i--) {
    const len = markerAt(ws, i);
    if (len === 0) continue;
    // Only the last marker counts; a longer marker may start one word earlier ("no wait").
    const longer = i > 0 ? markerAt(ws, i - 1) : 0;
    if (longer > len) continue;
    return {
      head: join(ws.slice(0, i)),
      tail: ws
        .slice(i + len)
        .filter((w) => w.bare !== '' || /\w/u.test(w.raw))
        .map((w) => w.raw)
        .join(' '),
      marker: ws
        .slice(i, i + len)
        .map((w) => w.bare)
        .join(' '),
    };
  }
  return undefined;
}

/**
 * Applies the caller's self-correction, if any: the answer is what follows the last
 * correction marker ("billing, no wait, technical support" → parse "technical support"). A
 * bare "no" between two answers counts only when both sides parse ("five, no, six pm"). A
 * marker with nothing after it ("five, no wait") → nomatch: the caller was cut off. Returns
 * undefined when the utterance has no correction, so the parser reads it as a whole.
 */
export function selfCorrected<T>(
  text: string,
  parse: (text: string) => ParseResult<T>,
  options: { bareNo?: boolean } = {},
): ParseResult<T> | undefined {
  const split = lastCorrection(text);
  if (split !== undefined) {
    if (split.tail.trim() === '') {
      if (split.head.trim() === '') return undefined;
      // "yes... wait, no": the marker's own "no" is the corrected answer.
      if (split.marker.endsWith(' no')) {
        const no = parse('no');
        return no.kind === 'nomatch' ? { kind: 'nomatch' } : no;
      }
      return DANGLING_MARKERS.has(split.marker) ? { kind: 'nomatch' } : undefined;
    }
    const result = parse(split.tail);
    return result.kind === 'nomatch' ? { kind: 'nomatch' } : result;
  }
  if (options.bareNo === false) return undefined;
  const ws = words(text);
  for (let i = ws.length - 2; i >= 1; i--) {
    if (ws[i]!.bare !== 'no') continue;
    const head = parse(join(ws.slice(0, i)));
    const tail = parse(join(ws.slice(i + 1)));
    if (head.kind !== 'nomatch' && tail.kind !== 'nomatch') return tail;
  }
  return undefined;
}

/** Words before a value that make it an estimate ("about six", "maybe 20"). */
const APPROX_BEFORE: readonly (readonly string[])[] = [
  ['somewhere', 'around'],
  ['something', 'like'],
  ['give', 'or', 'take'],
  ['approximately'],
  ['roughly'],
  ['around'],
  ['about'],
  ['maybe'],
  ['probably'],
  ['perhaps'],
  ['possibly'],
  ['like'],
  ['circa'],
];

/** Words after a value that make it an estimate ("six or so", "twenty-ish"). */
const APPROX_AFTER: readonly (readonly string[])[] = [
  ['give', 'or', 'take'],
  ['more', 'or', 'less'],
  ['or', 'so'],
  ['ish'],
  ['roughly'],
  ['approximately'],
  ['maybe'],
  ['probably'],
];

/** Words that turn a value into a bound ("more than six"): never the value itself. */
const BOUNDS = new Set([
  'more',
  'less',
  'fewer',
  'over',
  'under',
  'above',
  'below',
  'least',
  'most',
  'nearly',
  'almost',
  'upwards',
  'plus',
  'between',
  'than',
  'max',
  'maximum',
  'minimum',
  'min',
  'beyond',
  'within',
  'tops',
  'limit',
]);

/** A value's words with the hedges around it taken off. */
export interface Hedged {
  /** The words that remain. */
  words: string[];
  /** An estimate was signalled ("about", "or so", "-ish"). */
  approximate: boolean;
}

function stripPhrase(ws: string[], phrase: readonly string[], atEnd: boolean): boolean {
  if (phrase.length >= ws.length) return false;
  const at = atEnd ? ws.length - phrase.length : 0;
  if (!phrase.every((p, j) => ws[at + j] === p)) return false;
  ws.splice(at, phrase.length);
  return true;
}

/**
 * Takes hedges off plain words: "about six" → ["six"], approximate. Undefined when a bound
 * word is present ("more than six", "at least 5", "under ten"): a bound is not a value.
 */
export function unhedge(input: readonly string[]): Hedged | undefined {
  if (input.some((w, i) => BOUNDS.has(w) || (w === 'up' && input[i + 1] === 'to'))) {
    return undefined;
  }
  const ws: string[] = [];
  let approximate = false;
  for (const w of input) {
    // "sixish", "20ish": the number, estimated.
    const stem = /^(.+?)-?ish$/u.exec(w)?.[1];
    if (stem !== undefined && (isNumberWord(stem) || /^\d+$/u.test(stem))) {
      ws.push(stem);
      approximate = true;
    } else {
      ws.push(w);
    }
  }
  let changed = true;
  while (changed) {
    changed = false;
    for (const p of APPROX_BEFORE) {
      if (stripPhrase(ws, p, false)) {
        approximate = true;
        changed = true;
      }
    }
    for (const p of APPROX_AFTER) {
      if (stripPhrase(ws, p, true)) {
        approximate = true;
        changed = true;
      }
    }
  }
  return { words: ws.filter((w) => w.length > 0), approximate };
}

/**
 * Splits "seven or eight", "a solid eight, maybe seven", "seven to eight" into the offered
 * alternatives (as plain-word lists); undefined when the words are not two alternatives.
 */
export function splitAlternatives(ws: readonly string[]): [string[], string[]] | undefined {
  for (let i = 1; i < ws.length - 1; i++) {
    const w = ws[i]!;
    if (w === 'or' || w === 'to' || (w === 'maybe' && i > 0)) {
      let right = ws.slice(i + 1);
      if (w === 'or' && right[0] === 'maybe') right = right.slice(1);
      if (right.length === 0) return undefined;
      return [ws.slice(0, i), right];
    }
  }
  return undefined;
}

/** Opening words of a question back ("what is that?", "which one is cheaper?"). */
const QUESTION_OPENERS = new Set([
  'what',
  "what's",
  'whats',
  'which',
  'why',
  'how',
  'where',
  'when',
  'who',
  'is',
  'are',
  'does',
  'do',
  'did',
  'should',
  'isn’t',
  "isn't",
  'huh',
  'pardon',
]);

/**
 * True when the caller asks something back instead of answering ("what?", "which one is
 * cheaper?", "is that the savings one?"). Requests phrased as questions ("can I have the
 * large?") are not questions here.
 */
export function isQuestion(text: string): boolean {
  // Any clause may be the question: "savings? what's the rate".
  return text.split(/[?.!,;]+/u).some((clause) => {
    const ws = words(clause).map((w) => w.bare);
    const first = ws.find(
      (w) =>
        !['um', 'uh', 'er', 'so', 'and', 'but', 'wait', 'sorry', 'oh', 'okay', 'ok'].includes(w),
    );
    // "who's asking", "where's that": a question word with a contraction.
    return first !== undefined && QUESTION_OPENERS.has(first.replace(/'(?:s|re|d|ll)$/u, ''));
  });
}
