/**
 * Clauses that take back or qualify an answer said with them: "yes, cancel that" (a
 * retraction), "yes, hold on" (a hold), "yes if it is free" (a condition), "yes, don't"
 * (a negation), "yes, but…" (a contrast), "yes? what's that?" (a question back). A yes said
 * with any of them is not a yes; the parsers and the approval read them from here, so every
 * caller of a yes/no hears the same rules.
 */
import { indexOfPhrase, plainWords } from './words.js';

/** What a clause does to the answer it comes with. */
export type Qualifier = 'retract' | 'hold' | 'condition' | 'negation' | 'contrast' | 'question';

/** Single words, by what they do to an answer beside them. */
const WORDS: ReadonlyMap<string, Qualifier> = new Map<string, Qualifier>([
  // retractions: the caller takes the action back
  ...[
    'cancel',
    'cancelled',
    'canceled',
    'stop',
    'abort',
    'scrap',
    'scratch',
    'forget',
    'nevermind',
    'undo',
    'quit',
    'halt',
    'belay',
    'withdraw',
    'revoke',
    'rescind',
    'retract',
    'reverse',
    'void',
    'drop',
    'skip',
    'ignore',
    'erase',
    'delete',
    'remove',
    'cease',
    'refuse',
    'decline',
    'instead',
    'mind',
  ].map((w) => [w, 'retract'] as const),
  // holds: not now, not yet
  ...[
    'wait',
    'hold',
    'hang',
    'moment',
    'minute',
    'min',
    'sec',
    'second',
    'seconds',
    'tick',
    'pause',
    'later',
    'yet',
    'tomorrow',
    'soon',
    'first',
    'before',
    'after',
    'until',
    'till',
    'til',
    'check',
    'think',
    'ask',
  ].map((w) => [w, 'hold'] as const),
  // conditions: a yes that only holds if something else does
  ...[
    'if',
    'unless',
    'provided',
    'providing',
    'assuming',
    'presuming',
    'suppose',
    'supposing',
    'long',
    'only',
    'when',
    'whenever',
    'once',
    'depends',
    'depending',
    'whether',
    'otherwise',
    'condition',
    'except',
    'excepting',
  ].map((w) => [w, 'condition'] as const),
  // negations
  ...[
    'not',
    'no',
    'never',
    'nothing',
    'none',
    'nor',
    'neither',
    'nobody',
    'nope',
    'nah',
    'without',
    'cannot',
  ].map((w) => [w, 'negation'] as const),
  // contrasts and hedges: the answer is about to be qualified
  ...[
    'but',
    'though',
    'although',
    'however',
    'maybe',
    'perhaps',
    'probably',
    'possibly',
    'guess',
    'kind',
    'sort',
    'almost',
    'nearly',
    'partly',
    'mostly',
    'apart',
  ].map((w) => [w, 'contrast'] as const),
  // questions back
  ...['what', 'why', 'how', 'which', 'who', 'where', 'huh', 'pardon'].map(
    (w) => [w, 'question'] as const,
  ),
]);

/** Phrases whose words mean nothing alone ("never mind", "hang on", "as long as"). */
const PHRASES: readonly { words: readonly string[]; does: Qualifier }[] = [
  { words: ['never', 'mind'], does: 'retract' },
  { words: ['call', 'it', 'off'], does: 'retract' },
  { words: ['take', 'it', 'back'], does: 'retract' },
  { words: ['back', 'out'], does: 'retract' },
  { words: ['leave', 'it'], does: 'retract' },
  { words: ['changed', 'my', 'mind'], does: 'retract' },
  { words: ['change', 'my', 'mind'], does: 'retract' },
  { words: ['hold', 'on'], does: 'hold' },
  { words: ['hang', 'on'], does: 'hold' },
  { words: ['let', 'me'], does: 'hold' },
  { words: ['give', 'me'], does: 'hold' },
  { words: ['just', 'a'], does: 'hold' },
  { words: ['one', 'sec'], does: 'hold' },
  { words: ['in', 'a', 'bit'], does: 'hold' },
  { words: ['as', 'long', 'as'], does: 'condition' },
  { words: ['so', 'long', 'as'], does: 'condition' },
  { words: ['as', 'soon', 'as'], does: 'condition' },
  { words: ['in', 'case'], does: 'condition' },
];

/** Words whose contraction ends in n't (or its apostrophe-less transcript form). */
const NOT_CONTRACTION = /^(?:\w+n't|\w+nt)$/u;
const CONTRACTIONS = new Set([
  'dont',
  'doesnt',
  'didnt',
  'wont',
  'wouldnt',
  'cant',
  'couldnt',
  'shouldnt',
  'isnt',
  'arent',
  'wasnt',
  'werent',
  'havent',
  'hasnt',
  'hadnt',
  'mustnt',
  'neednt',
  'aint',
]);

/** True for a word that negates ("not", "never", "don't", "wont"). */
export function isNegation(word: string): boolean {
  if (WORDS.get(word) === 'negation') return true;
  if (word.includes("'")) return NOT_CONTRACTION.test(word);
  return CONTRACTIONS.has(word);
}

/** What one word does to an answer beside it, if anything ("cancel" → retract). */
export function qualifierOf(word: string): Qualifier | undefined {
  return WORDS.get(word) ?? (isNegation(word) ? 'negation' : undefined);
}

/**
 * What the given words do to an answer said with them: every qualifier found ("yes, cancel
 * that" → retract; "yes if it is free" → condition). Empty when the words only agree, thank
 * or fill ("yes please", "yeah go ahead").
 */
export function qualifiersIn(words: readonly string[]): Set<Qualifier> {
  const found = new Set<Qualifier>();
  for (const phrase of PHRASES) {
    if (indexOfPhrase(words, phrase.words) >= 0) found.add(phrase.does);
  }
  for (const w of words) {
    const does = WORDS.get(w);
    if (does !== undefined) found.add(does);
    else if (isNegation(w)) found.add('negation');
  }
  return found;
}

/** {@link qualifiersIn} for an utterance (a question mark counts as a question back). */
export function qualifiers(text: string): Set<Qualifier> {
  const found = qualifiersIn(plainWords(text));
  if (text.includes('?')) found.add('question');
  return found;
}
