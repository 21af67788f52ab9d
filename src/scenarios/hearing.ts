/**
 * What a scenario's caller was heard as, in figures: word accuracy (the scripted words
 * against what the agent's recogniser heard) and captures — each value the scenario says the
 * caller `meant`, against what the call captured: right, wrong, or unanswered (nothing
 * captured, e.g. the bot re-asked or transferred). A wrong value is the failure that matters.
 */
import { isDeepStrictEqual } from 'node:util';
import { phraseWords } from '../testing/hint-grammar.js';
import type { TranscriptLine } from '../testing/simulated-caller.js';
import { textMatcher } from './match.js';

/** Scripted words against heard words over a call (audio mode). */
export interface WordScore {
  /** Words the caller was scripted to say (where the recogniser's answer is known). */
  words: number;
  /** Substitutions + deletions + insertions in what was heard. */
  errors: number;
}

/** The verdict on one meant value. */
export interface CaptureCheck {
  /** Where in the result, e.g. `answers.score`. */
  path: string;
  meant: unknown;
  /** What the call captured (undefined: nothing). */
  got: unknown;
  verdict: 'right' | 'wrong' | 'unanswered';
}

/** Right / wrong / unanswered counts. */
export interface CaptureCount {
  right: number;
  wrong: number;
  unanswered: number;
}

/** Word accuracy, 0–1 (1 − errors / words), or undefined with no words. */
export function wordAccuracy(score: WordScore): number | undefined {
  return score.words ? Math.max(0, 1 - score.errors / score.words) : undefined;
}

/** Edit distance between two word lists. */
function wordErrors(said: readonly string[], heard: readonly string[]): number {
  let prev = Array.from({ length: heard.length + 1 }, (_, j) => j);
  for (let i = 1; i <= said.length; i++) {
    const row = [i];
    for (let j = 1; j <= heard.length; j++) {
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (said[i - 1] === heard[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[heard.length]!;
}

/**
 * Word errors over the caller's speech lines whose heard words are known (masked answers
 * excluded). Words compare as a recogniser writes them: lower case, no punctuation, numerals
 * spelled out.
 */
export function wordScore(transcript: readonly TranscriptLine[]): WordScore {
  let words = 0;
  let errors = 0;
  for (const line of transcript) {
    if (line.role !== 'caller' || line.via !== 'speech' || line.heard === undefined) continue;
    if (line.text === '****' || line.heard === '****') continue;
    const said = line.text === '(no speech)' ? [] : phraseWords(line.text);
    const heard = phraseWords(line.heard);
    words += said.length;
    errors += wordErrors(said, heard);
  }
  return { words, errors };
}

/**
 * Each leaf of `meant` (a partial shape of the call's result, as `outcome:` is written)
 * against `result`: equal is right, missing (undefined or null) is unanswered, anything else
 * is wrong. A string written /like this/ matches as a regular expression.
 */
export function checkCaptures(result: unknown, meant: unknown, path = ''): CaptureCheck[] {
  if (Array.isArray(meant)) {
    const got = Array.isArray(result) ? result : [];
    return meant.flatMap((m, i) => checkCaptures(got[i], m, `${path}[${i}]`));
  }
  if (typeof meant === 'object' && meant !== null) {
    const got =
      typeof result === 'object' && result !== null && !Array.isArray(result)
        ? (result as Record<string, unknown>)
        : {};
    return Object.entries(meant).flatMap(([k, m]) =>
      checkCaptures(got[k], m, path ? `${path}.${k}` : k),
    );
  }
  const verdict: CaptureCheck['verdict'] =
    result === undefined || result === null
      ? 'unanswered'
      : same(result, meant)
        ? 'right'
        : 'wrong';
  return [{ path: path || '(the result)', meant, got: result, verdict }];
}

function same(got: unknown, meant: unknown): boolean {
  if (typeof meant === 'string' && typeof got === 'string' && /^\/.+\/[a-z]*$/s.test(meant)) {
    return textMatcher(meant).test(got);
  }
  return isDeepStrictEqual(got, meant);
}

/** Counts verdicts. */
export function countCaptures(checks: readonly CaptureCheck[]): CaptureCount {
  const n = (v: CaptureCheck['verdict']) => checks.filter((c) => c.verdict === v).length;
  return { right: n('right'), wrong: n('wrong'), unanswered: n('unanswered') };
}
