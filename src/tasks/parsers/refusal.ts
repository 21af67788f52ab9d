/**
 * Refusals: a caller declining to give an answer ("I'd rather not say", "no comment"), kept
 * apart from a "no" that answers a yes/no question.
 */
import { normalize } from './words.js';

/** Verbs of telling: "rather not" + one of these refuses the question, not the proposal. */
const TELL = '(?:say|tell|answer|give|share|disclose|discuss|talk about|go into|get into|provide)';

/** Refuses to answer, whatever was asked. */
const EXPLICIT = new RegExp(
  [
    `\\b(?:rather|prefer) not (?:to )?${TELL}`,
    `\\b(?:do not|don't|dont) (?:want|wish|care) to ${TELL}`,
    `\\b(?:won't|will not|wouldn't|would not|can't|cannot) ${TELL}`,
    `\\bnot (?:going|gonna) (?:to )?${TELL}`,
    '\\bno comment\\b',
    '\\bnone of your (?:business|concern)\\b',
    '\\bnot telling(?: you)?\\b',
    '\\bskip (?:this|that|it|the question)\\b',
    '\\bpass on (?:this|that|it|the question)\\b',
    '\\bi (?:decline|refuse) to\\b',
    "\\b(?:that's|that is|it's|it is) (?:private|personal|confidential)\\b",
    '\\bkeep (?:that|it) (?:private|to myself)\\b',
  ].join('|'),
  'u',
);

/** Declines what was offered; at a yes/no question it is a plain "no". */
const SOFT = new RegExp(
  [
    "^(?:(?:i'd|i would|id) )?(?:rather|prefer) not(?: to)?(?: thanks| thank you)?$",
    "^(?:(?:i'm|i am|im) )?not interested(?: thanks| thank you)?$",
    '^no(?:,)? thanks?(?: you)?$',
    '^no thank you$',
    "^i'll pass$",
  ].join('|'),
  'u',
);

function clean(text: string): string {
  return normalize(text)
    .replace(/[.,!?;:…"]+/gu, ' ')
    .replace(/\b(?:um+|uh+|er+|erm|hmm+|well|oh|sorry)\b/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** True for a refusal to answer whatever was asked ("I'd rather not say", "no comment"). */
export function isExplicitRefusal(text: string): boolean {
  return EXPLICIT.test(clean(text));
}

/**
 * How an utterance declines: 'explicit' refuses to answer ("I'd rather not say", "no
 * comment", "none of your business"); 'soft' declines what was offered ("I'd rather not",
 * "not interested", "no thanks"), which answers a yes/no question with no and declines any
 * other; undefined when it is not a refusal.
 */
export function refusal(text: string): 'explicit' | 'soft' | undefined {
  const t = clean(text);
  if (EXPLICIT.test(t)) return 'explicit';
  if (SOFT.test(t)) return 'soft';
  return undefined;
}

/** Replies that give nothing: the caller has nothing (more) to say ("nope, that's all"). */
const NOTHING: readonly (readonly string[])[] = [
  ['i', 'have', 'nothing', 'to', 'add'],
  ["i've", 'got', 'nothing'],
  ['i', 'got', 'nothing'],
  ['i', "don't", 'have', 'anything'],
  ["can't", 'think', 'of', 'anything'],
  ['i', "can't", 'think', 'of', 'anything'],
  ['nothing', 'i', 'can', 'think', 'of'],
  ['not', 'that', 'i', 'can', 'think', 'of'],
  ['nothing', 'to', 'add'],
  ['nothing', 'to', 'say'],
  ['nothing', 'else'],
  ['nothing', 'more'],
  ['nothing', 'further'],
  ['nothing', 'really'],
  ['nothing'],
  ['none'],
  ['no', 'comment'],
  ['not', 'really'],
  ['not', 'applicable'],
  ['n', 'a'],
  ['skip', 'the', 'question'],
  ['skip', 'this', 'one'],
  ['skip', 'it'],
  ['skip', 'this'],
  ['skip', 'that'],
  ['skip'],
  ["i'll", 'pass'],
  ['i', 'pass'],
  ['pass'],
  ["that's", 'all'],
  ['that', 'is', 'all'],
  ["that's", 'it'],
  ['that', 'is', 'it'],
  ["that's", 'everything'],
  ['all', 'good'],
  ["i'm", 'all', 'set'],
  ['all', 'set'],
  ["i'm", 'good'],
  ['i', 'am', 'good'],
  ["i'm", 'fine'],
  ["i'm", 'okay'],
  ['no'],
  ['nope'],
  ['nah'],
];

/** Words that go with a "nothing" reply without changing it ("no, thanks", "nothing really, sorry"). */
const POLITE: readonly (readonly string[])[] = [
  ['thank', 'you'],
  ['thanks'],
  ['sorry'],
  ['okay'],
  ['ok'],
  ['well'],
  ['really'],
  ['actually'],
  ['for', 'now'],
  ['right', 'now'],
  ['at', 'the', 'moment'],
  ['i', 'think'],
  ['i', 'guess'],
  ['yeah'],
  ['oh'],
  ['so'],
  ['just'],
];

/**
 * True when the whole reply says the caller has nothing (more) to say — "no", "nothing",
 * "skip", "nope, that's all", "no, I'm good" — with nothing else in it: "no, the driver was
 * rude" is an answer. For optional questions, where such a reply declines.
 */
export function nothingToSay(text: string): boolean {
  const words = clean(text).replace(/\//gu, ' ').split(' ').filter(Boolean);
  let i = 0;
  let said = false;
  while (i < words.length) {
    const at = (list: readonly (readonly string[])[]) =>
      list.find((p) => p.every((w, j) => words[i + j] === w));
    const nothing = at(NOTHING);
    const polite = nothing ? undefined : at(POLITE);
    const phrase = nothing ?? polite;
    if (!phrase) return false;
    said ||= nothing !== undefined;
    i += phrase.length;
  }
  return said;
}
