/**
 * What a caller's reply means while a typed task waits on a read-back ("I have jane dot doh at
 * example dot com. Is that right?", "Is that a six?") or on a choice between alternatives the
 * caller offered ("Was that seven or eight?"). Pure decisions, no session: the typed task acts
 * on them. A pending value is only ever confirmed by a yes to its own read-back.
 */
import { type ReadableStream, TransformStream } from 'node:stream/web';
import { afterRejection, afterYes } from './parsers/correct.js';
import type { ParseResult } from './parsers/result.js';
import { yesNo } from './parsers/yes-no.js';

/** Why a value is being read back. */
export type ReadBackReason = 'policy' | 'approximate';

/** What the task waits on besides a fresh answer. */
export type ReadBackState<T> =
  | { kind: 'confirm'; value: T; reason: ReadBackReason }
  | { kind: 'choose'; candidates: readonly T[] };

/** The caller's reply to a read-back or a "which one?" question. */
export type ReadBackReply<T> =
  /** Yes to the pending value. */
  | { kind: 'yes' }
  /** A plain no: drop the value and ask again. */
  | { kind: 'no' }
  /** Drop the pending value (counted as rejected when `rejected`) and take this answer instead. */
  | { kind: 'replace'; value: T; rejected: boolean; approximate?: boolean }
  /** The caller picked one of the offered alternatives. */
  | { kind: 'pick'; value: T }
  /** A rejection whose correction could not be applied; say `reason` (if any) and ask again. */
  | { kind: 'retry'; reason?: string }
  /** A clear rejection with words no parser could apply ("no, it's the other one"). */
  | { kind: 'rejectUnclear' }
  /** Not understood as a reply. */
  | { kind: 'unclear' };

/** How the task reads answers, for the decisions below. */
export interface ReplyReaders<T> {
  /** The task's parser (its answer to the question). */
  parse?: (text: string) => ParseResult<T>;
  /** Patches the pending value with a partial correction ("it's D O E", "the last four are…"). */
  correct?: (pending: T, text: string) => ParseResult<T>;
}

/** Structural equality for values a schema produced (JSON-like). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** Reads `text` as a correction of `pending`: a patch first, then a whole new answer. */
function correction<T>(
  pending: T,
  text: string,
  readers: ReplyReaders<T>,
): ParseResult<T> | undefined {
  const patched = readers.correct?.(pending, text);
  if (patched !== undefined && patched.kind !== 'nomatch') return patched;
  const parsed = readers.parse?.(text);
  return parsed !== undefined && parsed.kind !== 'nomatch' ? parsed : undefined;
}

function confirmReply<T>(text: string, pending: T, readers: ReplyReaders<T>): ReadBackReply<T> {
  // A parser that reads "yes" as an answer (yes/no, free text) cannot tell a reply to the
  // read-back from a new answer: only a leading rejection brings a new value then.
  const open = readers.parse?.('yes').kind === 'match';
  const answer = yesNo(text);
  if (answer.kind === 'match' && answer.value) {
    // "yes, eight" at "Is that a seven?" names another value: neither is confirmed.
    const parsed = open ? undefined : readers.parse?.(text);
    if (parsed?.kind === 'match' && !sameValue(parsed.value, pending)) return { kind: 'unclear' };
    return { kind: 'yes' };
  }
  // "yes, but it's 5 5 6": a correction, not a yes.
  const said = afterYes(text);
  if (said?.contrast) {
    const fixed = correction(pending, said.rest, readers);
    if (fixed?.kind === 'match' && !sameValue(fixed.value, pending)) {
      return {
        kind: 'replace',
        value: fixed.value,
        rejected: true,
        approximate: fixed.approximate,
      };
    }
    if (fixed?.kind === 'invalid') return { kind: 'retry', reason: fixed.reason };
    return { kind: 'unclear' };
  }
  const rest = afterRejection(text);
  if (rest !== undefined) {
    const fixed = correction(pending, rest, readers);
    if (fixed?.kind === 'match') {
      return sameValue(fixed.value, pending)
        ? { kind: 'unclear' }
        : { kind: 'replace', value: fixed.value, rejected: true, approximate: fixed.approximate };
    }
    if (fixed?.kind === 'invalid') return { kind: 'retry', reason: fixed.reason };
    // "no, no, that's right": a rejection word that is not one.
    const restAnswer = yesNo(rest);
    if (restAnswer.kind === 'match') return restAnswer.value ? { kind: 'unclear' } : { kind: 'no' };
    return { kind: 'rejectUnclear' };
  }
  if (answer.kind === 'match') return { kind: 'no' };
  if (open) return { kind: 'unclear' };
  // No yes or no: the caller may say the value again, or a corrected one ("it's D O E").
  const fixed = correction(pending, text, readers);
  if (fixed?.kind === 'match') {
    if (fixed.approximate) return { kind: 'unclear' };
    if (sameValue(fixed.value, pending)) return { kind: 'yes' };
    // "yes, eight" at "Is that a seven?" names another value: neither is confirmed.
    return said !== undefined
      ? { kind: 'unclear' }
      : { kind: 'replace', value: fixed.value, rejected: true };
  }
  return { kind: 'unclear' };
}

function chooseReply<T>(
  text: string,
  candidates: readonly T[],
  readers: ReplyReaders<T>,
): ReadBackReply<T> {
  const parsed = readers.parse?.(text);
  if (parsed?.kind === 'match' && !parsed.approximate) {
    const picked = candidates.find((c) => sameValue(c, parsed.value));
    return picked !== undefined
      ? { kind: 'pick', value: picked }
      : { kind: 'replace', value: parsed.value, rejected: false };
  }
  const position = ordinalPick(text, candidates.length);
  if (position !== undefined) return { kind: 'pick', value: candidates[position]! };
  return { kind: 'unclear' };
}

const POSITIONS = new Map<string, (n: number) => number>([
  ['first', () => 0],
  ['former', () => 0],
  ['second', () => 1],
  ['latter', (n) => n - 1],
  ['last', (n) => n - 1],
]);

/** "the first one", "the latter": a position among the offered alternatives. */
function ordinalPick(text: string, count: number): number | undefined {
  const words = text
    .toLowerCase()
    .replace(/[^\p{L}\s]/gu, ' ')
    .split(/\s+/u)
    .filter((w) => w && !['the', 'one', 'um', 'uh', 'please', 'i', 'guess', 'say'].includes(w));
  if (words.length !== 1) return undefined;
  const at = POSITIONS.get(words[0]!)?.(count);
  return at !== undefined && at < count ? at : undefined;
}

/** Decides what a reply means in the current read-back state. */
export function readBackReply<T>(
  text: string,
  state: ReadBackState<T>,
  readers: ReplyReaders<T>,
): ReadBackReply<T> {
  return state.kind === 'confirm'
    ? confirmReply(text, state.value, readers)
    : chooseReply(text, state.candidates, readers);
}

/** "Is that a six?" for an estimate; "I have X. Is that right?" for a policy read-back. */
export function confirmQuestion(spoken: string, reason: ReadBackReason): string {
  if (reason === 'approximate') return `Is that ${withArticle(spoken)}?`;
  return `I have ${spoken}. Is that right?`;
}

/** "Was that 7 or 8?" */
export function chooseQuestion(spoken: readonly string[]): string {
  return `Was that ${spoken.slice(0, -1).join(', ')} or ${spoken.at(-1)}?`;
}

/** "a six", "an eight": numbers read back as a rating or a count are said with an article. */
function withArticle(spoken: string): string {
  if (!/^(?:minus )?\d+(?:\.\d+)?$/u.test(spoken)) return spoken;
  const whole = spoken.replace(/\..*$/u, '');
  const vowel = /^8/u.test(whole) || whole === '11' || whole === '18';
  return `${vowel ? 'an' : 'a'} ${spoken}`;
}

/**
 * Passes a model reply through and calls `onFreeSpeech` at its end when the model spoke
 * without calling any of `decisions` (confirm, submit…): it asked something other than the
 * pending read-back, so a later "yes" must not confirm that value.
 */
export function watchReply<C>(
  stream: ReadableStream<C>,
  decisions: readonly string[],
  onFreeSpeech: () => void,
): ReadableStream<C> {
  let spoke = false;
  let decided = false;
  return stream.pipeThrough(
    new TransformStream<C, C>({
      transform(chunk, controller) {
        if (typeof chunk === 'string') {
          if (chunk.trim() !== '') spoke = true;
        } else if (chunk !== null && typeof chunk === 'object' && 'delta' in chunk) {
          const delta = (chunk as { delta?: { content?: string; toolCalls?: { name: string }[] } })
            .delta;
          if (delta?.content?.trim()) spoke = true;
          if (delta?.toolCalls?.some((c) => decisions.includes(c.name))) decided = true;
        }
        controller.enqueue(chunk);
      },
      flush() {
        if (spoke && !decided) onFreeSpeech();
      },
    }),
  );
}
