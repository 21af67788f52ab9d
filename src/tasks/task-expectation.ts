/**
 * What a capture listens for, as the call's {@link Expectation}: the kind of answer, the words a
 * recogniser should favour, and a judge of whether the caller's words so far are a whole answer,
 * built from the task's own parser. While a read-back is pending the expectation is a yes/no
 * (with the task's parser for a correction); while the task asks which of two values, a choice.
 */
import type { Expectation, TurnJudgement } from '../core/expectation.js';
import { type ReadBackState, readBackReply } from './confirm.js';
import { spokenDigits } from './parsers/digits.js';
import { refusal } from './parsers/refusal.js';
import type { ParseResult } from './parsers/result.js';
import { plainWords } from './parsers/words.js';
import type { ExpectationSpec, TaskSpec } from './typed-task-spec.js';

/** Words a recogniser should favour at a yes/no question or a read-back. */
export const YES_NO_PHRASES: readonly string[] = [
  'yes',
  'no',
  'yeah',
  'yep',
  'nope',
  'correct',
  "that's right",
  "that's wrong",
];

/** Digit words, for digit answers. */
export const DIGIT_PHRASES: readonly string[] = [
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
  'double',
  'triple',
];

/**
 * Words after which nobody stops: a lead-in with nothing after it ("my number is", "it's"), a
 * connector ("and", "dot", "at"), a hesitation ("um"). An utterance ending in one is a prefix.
 */
const UNFINISHED = new Set([
  'is',
  'are',
  'was',
  "it's",
  'its',
  "that's",
  'my',
  'the',
  'a',
  'an',
  'and',
  'or',
  'at',
  'dot',
  'to',
  'for',
  'of',
  'with',
  'um',
  'umm',
  'uh',
  'uhh',
  'er',
  'erm',
  'hmm',
]);

/** True when the words so far stop where nobody stops (see {@link UNFINISHED}). */
export function soundsUnfinished(text: string): boolean {
  const words = plainWords(text);
  return words.length === 0 || UNFINISHED.has(words.at(-1)!);
}

/** The task's parser as the judge needs it: one utterance in, its result out. */
export type Reader<T> = (text: string) => ParseResult<T>;

/**
 * Judges an utterance from a parser: a whole valid answer (or a refusal) is `complete`; a
 * prefix (too few digits, "my number is") is `incomplete`; anything else `unknown`. Never
 * throws: a parser that does is `unknown`.
 */
export function judgeWith<T>(
  read: Reader<T> | undefined,
  expects: ExpectationSpec = {},
): (text: string) => TurnJudgement {
  return (text) => {
    try {
      if (expects.judge) return expects.judge(text);
      if (expects.digits) {
        const n = (spokenDigits(text) ?? '').replace(/[^0-9]/g, '').length;
        if (n > 0 && n < expects.digits.min) return 'incomplete';
        if (n >= expects.digits.min && n < expects.digits.max) return 'unknown';
      }
      const parsed = read?.(text);
      if (parsed?.kind === 'declined') return 'complete';
      if (parsed?.kind === 'match') return expects.mayGrow?.(text) ? 'unknown' : 'complete';
      if (refusal(text) === 'explicit') return 'complete';
      if (soundsUnfinished(text)) return 'incomplete';
      return 'unknown';
    } catch {
      return 'unknown';
    }
  };
}

/** The expectation of a task that is asking its question. */
export function askingExpectation<T>(spec: TaskSpec<T>, read: Reader<T> | undefined): Expectation {
  const expects = spec.expects ?? {};
  return {
    task: spec.name,
    kind: expects.kind ?? 'custom',
    phrases: expects.phrases ?? [],
    judge: judgeWith(read, expects),
  };
}

/**
 * The expectation while a read-back ("I have X. Is that right?") or a "which one?" question is
 * pending: judged by the same decision the task will take on the reply, so a yes, a no, a
 * correction its parser reads, or a pick is `complete`.
 */
export function readBackExpectation<T>(
  spec: TaskSpec<T>,
  state: ReadBackState<T>,
  read: Reader<T> | undefined,
  spoken: readonly string[],
): Expectation {
  const correct = spec.correct;
  return {
    task: spec.name,
    kind: state.kind === 'confirm' ? 'yesNo' : 'choice',
    phrases: state.kind === 'confirm' ? YES_NO_PHRASES : spoken,
    readingBack: true,
    judge: (text) => {
      try {
        const reply = readBackReply(text, state, { parse: read, correct });
        if (reply.kind !== 'unclear' && reply.kind !== 'rejectUnclear') return 'complete';
        return soundsUnfinished(text) ? 'incomplete' : 'unknown';
      } catch {
        return 'unknown';
      }
    },
  };
}

/** What a task listens for in its current phase: its question, or a pending read-back. */
export function taskExpectation<T>(
  spec: TaskSpec<T>,
  readBack: { readonly state: ReadBackState<T> | undefined; spokenCandidates(): string[] },
  read: Reader<T> | undefined,
): Expectation {
  const state = readBack.state;
  return state
    ? readBackExpectation(spec, state, read, readBack.spokenCandidates())
    : askingExpectation(spec, read);
}

const LAST_WORD = (text: string) => plainWords(text).at(-1) ?? '';
const GROWING_NUMBER = new Set([
  'twenty',
  'thirty',
  'forty',
  'fifty',
  'sixty',
  'seventy',
  'eighty',
  'ninety',
  'hundred',
  'thousand',
  'million',
  'point',
  'minus',
  'negative',
]);

/** A number that may go on ("twenty" → "twenty five", "one hundred" → "one hundred and ten"). */
export function numberMayGrow(text: string): boolean {
  return GROWING_NUMBER.has(LAST_WORD(text));
}

const YEAR =
  /\b(?:1[5-9]|20)\d{2}\b|\b(?:nineteen|twenty)\s+(?:hundred|oh|o|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b|\btwo\s+thousand\b/iu;
const RELATIVE_DAY =
  /\b(?:today|tomorrow|yesterday|tonight|next|last|this|ago|from now|weekend|week|month|year)\b/iu;

/** A date with no year or relative word may still get one ("March third" → "… 1980"). */
export function dateMayGrow(text: string): boolean {
  return !YEAR.test(text) && !RELATIVE_DAY.test(text);
}

const HOUR_ONLY = new Set([
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'twenty',
  'thirty',
  'forty',
  'fifty',
]);

/** A time ending in a bare number may go on ("three" → "three thirty pm"). */
export function timeMayGrow(text: string): boolean {
  const last = LAST_WORD(text);
  return HOUR_ONLY.has(last) || /^\d{1,2}$/u.test(last);
}
