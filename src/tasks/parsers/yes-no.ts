import { type Qualifier, qualifierOf, qualifiersIn } from './clauses.js';
import { isExplicitRefusal } from './refusal.js';
import { match, nomatch, type ParseResult } from './result.js';
import { type CorrectionSplit, DANGLING_MARKERS, lastCorrection } from './speech.js';
import { FILLERS, indexOfPhrase, plainWords } from './words.js';

const NO_PHRASES: readonly string[] = [
  "don't do it",
  "don't do that",
  'dont do it',
  'dont do that',
  'do not do it',
  'do not do that',
  'not at this time',
  'not this time',
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
  "don't",
  'dont',
  'do not',
  'nope',
  'nah',
  'no',
];

const YES_PHRASES: readonly string[] = [
  'sure thing',
  'right away',
  'all right',
  'i agree',
  'i approve',
  'approved',
  'approve',
  'agreed',
  'alright',
  'confirm',
  'speaking',
  "that's the one",
  'that is the one',
  "i'd love to",
  'i would love to',
  "i'd like that",
  'i would like that',
  'go for it',
  'do it',
  'you bet',
  'carry on',
  'by all means',
  'for sure',
  'i confirm',
  'confirmed',
  'proceed',
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

/**
 * Words that may surround a yes or a no without changing it ("yes please", "no thank you",
 * "yeah that's fine", "yes I do"): politeness, fillers, agreement and the pronouns and
 * auxiliaries of a tag answer. A yes said with any other word is not a clear yes.
 */
const NEUTRAL = new Set([
  'please',
  'thanks',
  'thank',
  'you',
  'cheers',
  'it',
  'is',
  "it's",
  'its',
  'that',
  "that's",
  'thats',
  'this',
  'i',
  "i'm",
  'im',
  'we',
  "we're",
  'they',
  "they're",
  'he',
  'she',
  "you're",
  'me',
  'to',
  'well',
  'so',
  'um',
  'umm',
  'uh',
  'er',
  'erm',
  'hmm',
  'mm',
  'ah',
  'sir',
  "ma'am",
  'maam',
  'mate',
  'go',
  'ahead',
  'on',
  'for',
  'and',
  'the',
  'all',
  'very',
  'much',
  'good',
  'fine',
  'great',
  'perfect',
  'lovely',
  'wonderful',
  'excellent',
  'brilliant',
  'awesome',
  'cool',
  'actually',
  'do',
  'does',
  'did',
  'am',
  'are',
  'was',
  'were',
  'have',
  'has',
  'had',
  'will',
  'would',
  'can',
  'could',
  'shall',
  'should',
  'may',
  "let's",
  'lets',
  'be',
  'just',
  'then',
  'by',
  'with',
  'happy',
  'glad',
  'bye',
  'goodbye',
  "that'd",
  "it'd",
  "that'll",
  "it'll",
  "i'd",
  "i'll",
  "we'd",
  "we'll",
]);

/** Phrases meaning the caller doesn't know: never a yes or a no ("not sure" contains "sure"). */
const UNSURE: readonly (readonly string[])[] = [
  ['not', 'sure'],
  ['unsure'],
  ["don't", 'know'],
  ['dont', 'know'],
  ['no', 'idea'],
  // "I don't know" as a recogniser may write it ("know" heard as "no")
  ["don't", 'no'],
  ['dont', 'no'],
  ['i', 'no'],
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

/** Most words outside the answer a no may carry ("no, not for me", "nah I'm good"). */
const MAX_EXTRA_WORDS = 2;

/** Qualifiers that make a no unclear too ("no, hold on", "no unless it's free", "no but…"). */
const UNSETTLING_NO: ReadonlySet<Qualifier> = new Set([
  'hold',
  'condition',
  'contrast',
  'question',
]);

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
 * "I'd rather not"). A yes must be clear: said alone or with polite, agreeing words ("yes
 * please", "yeah go ahead", "yes I do"). A yes with a clause that takes it back or qualifies
 * it ("yes, cancel that", "yes, hold on", "yes if it is free", "yes, don't"), with any other
 * words ("yes, it's 5 5 6"), or after a no ("no wait yes") → nomatch: the task asks again or
 * lets the model decide; it is never read as a no either. A no may carry a few words ("no,
 * not for me") but not a hold, a condition or a question. A self-correction to no counts
 * ("yes… wait, no" → no). Both at once ("yes no"), a polarity idiom ("no problem"), a refusal
 * to answer ("I'd rather not say") or a yes/no buried in a longer sentence → nomatch.
 */
export function yesNo(text: string): ParseResult<boolean> {
  return readYesNo(text).result;
}

/** A yes/no reading with the words a no carried that are not part of it ("send it to checking"). */
export interface YesNoReading {
  result: ParseResult<boolean>;
  /** Words of a no that neither answer, thank, fill nor retract (at most two, else nomatch). */
  extra: readonly string[];
}

const NONE: readonly string[] = [];
const unclear = (): YesNoReading => ({ result: nomatch(), extra: NONE });
const answered = (value: boolean, extra: readonly string[] = NONE): YesNoReading => ({
  result: match(value),
  extra,
});

/**
 * {@link yesNo}, with the extra words a no carried: a caller that acts on a no (an approval)
 * can tell "no thanks" from "no, send it to checking", which asks for something else.
 */
export function readYesNo(text: string): YesNoReading {
  if (text.includes('?')) return unclear();
  const split = lastCorrection(text);
  return split === undefined ? yesNoOnce(text) : corrected(text, split);
}

/** Words a correction's head may hold and still leave its tail the whole answer. */
function isFiller(word: string): boolean {
  return FILLERS.has(word) || word === 'well' || word === 'so' || word === 'i';
}

/** A self-corrected reply ("yes, I mean no"; "no wait yes"; "yes… wait, no"). */
function corrected(text: string, split: CorrectionSplit): YesNoReading {
  const head = plainWords(split.head);
  if (split.tail.trim() === '') {
    if (head.length === 0) return yesNoOnce(text);
    // "yes... wait, no": the marker's own "no" is the answer.
    if (split.marker.endsWith(' no')) return answered(false);
    return DANGLING_MARKERS.has(split.marker) ? unclear() : yesNoOnce(text);
  }
  const answer = yesNoOnce(split.tail);
  if (answer.result.kind !== 'match' || !answer.result.value) return answer;
  // A yes after anything but a yes ("no wait yes", "oh wait yes", "the blue one, I mean
  // yes") contradicts or replaces it: not a clear yes.
  const markerWords = split.marker.split(' ');
  if (markerWords.includes('no') || markerWords.includes('oh')) return unclear();
  if (head.every(isFiller)) return answer;
  const before = yesNo(split.head);
  return before.kind === 'match' && before.value ? answer : unclear();
}

function yesNoOnce(text: string): YesNoReading {
  if (isExplicitRefusal(text)) return unclear();
  const plain = plainWords(text);
  if (UNSURE.some((phrase) => indexOfPhrase(plain, phrase) >= 0)) return unclear();
  if (POLARITY.some((phrase) => indexOfPhrase(plain, phrase) >= 0)) return unclear();
  const words: (string | null)[] = [...plain];
  let yes = 0;
  let no = 0;
  for (const phrase of PHRASES) {
    const n = takeAll(words, phrase.words);
    if (phrase.yes) yes += n;
    else no += n;
  }
  if (yes > 0 === no > 0) return unclear();
  const rest = words.filter((w): w is string => w !== null);
  const found = qualifiersIn(rest);
  if (yes > 0) {
    // A clear yes: nothing that qualifies it, no word that is not polite or agreeing, and no
    // "oh" after its first word (a recogniser writes a spoken "no" as "oh").
    if (found.size > 0) return unclear();
    if (plain.slice(1).includes('oh')) return unclear();
    const opening = plain[0] === 'oh' ? rest.slice(1) : rest;
    if (opening.some((w) => !NEUTRAL.has(w) && !FILLERS.has(w))) return unclear();
    return answered(true);
  }
  if ([...found].some((q) => UNSETTLING_NO.has(q))) return unclear();
  // "no, cancel it", "no, not now": a retraction or a negation agrees with a no.
  const agrees = (w: string) => {
    const q = qualifierOf(w);
    return q === 'retract' || q === 'negation';
  };
  const extra = rest.filter((w) => !NEUTRAL.has(w) && !FILLERS.has(w) && w !== 'oh' && !agrees(w));
  if (extra.length > MAX_EXTRA_WORDS) return unclear();
  return answered(false, extra);
}
