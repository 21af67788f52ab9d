import { isExplicitRefusal } from './refusal.js';
import { match, nomatch, type ParseResult } from './result.js';
import { selfCorrected } from './speech.js';
import { indexOfPhrase, plainWords } from './words.js';

const NO_PHRASES: readonly string[] = [
  "that's not right",
  'that is not right',
  "that's not correct",
  'that is not correct',
  "that's wrong",
  'that is wrong',
  "it's wrong",
  "that isn't right",
  "isn't right",
  "isn't correct",
  'not right',
  'not correct',
  'not exactly',
  'not yet',
  'not okay',
  'not ok',
  'not really',
  'not quite',
  'no way',
  "i don't think so",
  "don't think so",
  'not interested',
  "i'm not interested",
  'rather not',
  'prefer not',
  "i'll pass",
  'not now',
  'not right now',
  'not today',
  'not at the moment',
  "don't have time",
  "don't have the time",
  "i'm not",
  'i am not',
  "i don't",
  'i do not',
  "i won't",
  "i wouldn't",
  "i haven't",
  "i can't",
  'definitely not',
  'of course not',
  'absolutely not',
  'certainly not',
  'wrong',
  'incorrect',
  'negative',
  'nope',
  'nah',
  'no',
];

const YES_PHRASES: readonly string[] = [
  "that's right",
  'that is right',
  "that's correct",
  'that is correct',
  "that's it",
  'that is it',
  "you're right",
  "you've got it",
  'you got it',
  'sounds good',
  'why not',
  'go ahead',
  'please do',
  'that works',
  'i do',
  'i am',
  "i'm in",
  'i would',
  'i will',
  'of course',
  'uh huh',
  'mm hmm',
  'mhm',
  'right',
  'correct',
  'exactly',
  'yes',
  'yeah',
  'yep',
  'yup',
  'ya',
  'yea',
  'sure',
  'affirmative',
  'absolutely',
  'definitely',
  'certainly',
  'indeed',
  'okay',
  'ok',
];

/** Words that may surround a yes/no without changing it ("yes please", "no thank you"). */
const NEUTRAL = new Set([
  'please',
  'thanks',
  'thank',
  'you',
  'it',
  'is',
  "it's",
  'its',
  'that',
  "that's",
  'i',
  'oh',
  'well',
  'so',
  'um',
  'uh',
  'er',
  'erm',
  'hmm',
  'sir',
  "ma'am",
  'go',
  'ahead',
  'and',
  'the',
  'one',
  'all',
  'good',
  'fine',
  'great',
  'perfect',
  'thats',
]);

/** Phrases meaning the caller doesn't know: never a yes or a no ("not sure" contains "sure"). */
const UNSURE: readonly (readonly string[])[] = [
  ['not', 'sure'],
  ['unsure'],
  ["don't", 'know'],
  ['dont', 'know'],
  ['no', 'idea'],
  ['not', 'certain'],
  ["can't", 'remember'],
  ["can't", 'say'],
  // "no one", "nobody", "none": an answer to "who?" or "how many?", not a no
  ['no', 'one'],
  ['nobody'],
  ['nothing'],
  ['none'],
  ['no', 'matter'],
  ['no', 'clue'],
  ['no', 'preference'],
];

/**
 * Agreement idioms whose boolean depends on how the question was put: "no problem" answers
 * "can I?" with yes but "is there a problem?" with no. Never read as either.
 */
const POLARITY: readonly (readonly string[])[] = [
  ['no', 'problem'],
  ['no', 'worries'],
  ['not', 'at', 'all'],
  ["don't", 'mind'],
  ['dont', 'mind'],
  ['do', 'not', 'mind'],
  ['no', 'objection'],
  ['no', 'objections'],
];

/** Words that signal the caller is qualifying or correcting, so a bare yes/no would mislead. */
const HEDGES = new Set([
  'but',
  'except',
  'although',
  'though',
  'however',
  'maybe',
  'perhaps',
  'wait',
  'probably',
  'later',
  'what',
  'why',
  'how',
  'huh',
  'pardon',
]);

const MAX_EXTRA_WORDS = 2;

/** Words that negate what follows them. */
const NEGATORS = new Set(['not', 'never', "don't", 'dont', "isn't", "wasn't", "won't", 'no']);

/** Every phrase as words, tagged yes/no, longest first so "not right" wins over "right". */
const PHRASES: readonly { words: readonly string[]; yes: boolean }[] = [
  ...NO_PHRASES.map((p) => ({ words: p.split(' '), yes: false })),
  ...YES_PHRASES.map((p) => ({ words: p.split(' '), yes: true })),
].sort((a, b) => b.words.length - a.words.length);

/** Removes every occurrence of `phrase` from `words` (in place) and says how many there were. */
function takeAll(words: (string | null)[], phrase: readonly string[]): number {
  let count = 0;
  const probe = words.map((w) => w ?? '\u0000');
  let at = indexOfPhrase(probe, phrase);
  while (at >= 0) {
    for (let j = 0; j < phrase.length; j++) {
      words[at + j] = null;
      probe[at + j] = '\u0000';
    }
    count++;
    at = indexOfPhrase(probe, phrase, at + phrase.length);
  }
  return count;
}

/**
 * Reads a yes or a no ("yeah", "that's right", "nope", "that's not correct", "not interested",
 * "I'd rather not"). A self-correction counts its last answer ("yes… wait, no" → no). Both at
 * once ("yes no"), a qualified answer ("yes but…"), a polarity idiom ("no problem"), a refusal
 * to answer ("I'd rather not say") or a yes/no buried in a longer sentence → nomatch, so the
 * task can ask again or let the model decide.
 */
export function yesNo(text: string): ParseResult<boolean> {
  return selfCorrected(text, yesNoOnce, { bareNo: false }) ?? yesNoOnce(text);
}

function yesNoOnce(text: string): ParseResult<boolean> {
  if (isExplicitRefusal(text)) return nomatch();
  const plain = plainWords(text);
  if (UNSURE.some((phrase) => indexOfPhrase(plain, phrase) >= 0)) return nomatch();
  if (POLARITY.some((phrase) => indexOfPhrase(plain, phrase) >= 0)) return nomatch();
  const words: (string | null)[] = [...plain];
  let yes = 0;
  let no = 0;
  for (const phrase of PHRASES) {
    const n = takeAll(words, phrase.words);
    if (phrase.yes) yes += n;
    else no += n;
  }
  if (yes > 0 === no > 0) return nomatch();
  const rest = words.filter((w): w is string => w !== null);
  if (rest.some((w) => HEDGES.has(w))) return nomatch();
  // A negation left over next to a yes ("not exactly", "never okay") may negate it.
  if (yes > 0 && rest.some((w) => NEGATORS.has(w))) return nomatch();
  const extra = rest.filter((w) => !NEUTRAL.has(w));
  if (extra.length > MAX_EXTRA_WORDS) return nomatch();
  return match(yes > 0);
}
