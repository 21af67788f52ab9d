import { TasklineError } from '../../core/errors.js';
import { parseCardinal, parseOrdinal } from './numerals.js';
import { invalid, match, nomatch, type ParseResult } from './result.js';
import { isQuestion, selfCorrected } from './speech.js';
import { cleanWords, plainWords } from './words.js';

/** One answer a caller may pick, by its label, a synonym, or its position. */
export interface ChoiceOption<V extends string = string> {
  /** What the task returns when this option is picked. */
  value: V;
  /** What the option is called when read out ("Checking account"). */
  label: string;
  /** Other ways a caller may name it ("checking", "current account"). */
  synonyms?: readonly string[];
}

/** How `choice` may recognise an option. */
export interface ChoiceParseOptions {
  /** Also accept positions ("the first one", "option 2"); on by default. */
  positional?: boolean;
  /**
   * Also accept a word that names only one option ("savings" for "savings account", "cancel"
   * for "cancel an appointment") and common words for an agent ("operator", "representative");
   * on by default.
   */
  partial?: boolean;
}

/** Words that, right before a mention, mean the caller is ruling that option out. */
const NEGATIONS = new Set(['not', 'no', "don't", 'dont', 'never', 'without', "doesn't", "isn't"]);
/** Words allowed between a negation and the option it negates ("I don't want to cancel"). */
const SKIPPABLE = new Set([
  'the',
  'a',
  'an',
  'that',
  'this',
  'my',
  'want',
  'need',
  'like',
  'to',
  'really',
  'go',
  'talk',
  'speak',
  'with',
  'for',
  'about',
  'do',
  'get',
]);
/** Words right before a mention that make it another thing ("extra large" is not "large"). */
const MODIFIERS = new Set([
  'extra',
  'super',
  'ultra',
  'mega',
  'mini',
  'jumbo',
  'double',
  'triple',
  'half',
  'semi',
  'non',
  'very',
  'too',
  'xl',
  'x',
  // degree adverbs: "extremely satisfied" is not the point labelled "satisfied"
  'extremely',
  'really',
  'so',
  'quite',
  'pretty',
  'fairly',
  'somewhat',
  'totally',
  'completely',
  'highly',
  'incredibly',
  'absolutely',
  'kinda',
  'sorta',
  'mostly',
  'mildly',
  'slightly',
  'bit',
  'little',
  'less',
  'more',
  'most',
  'least',
]);
/**
 * Words that may stand right before a mention without changing what it names: articles,
 * pronouns, verbs of wanting and asking, prepositions, politeness. Any other word there
 * ("iced coffee", "green tea") may make it another thing, so the mention is not taken.
 */
const NEUTRAL_LEFT = new Set([
  'a',
  'an',
  'the',
  'my',
  'your',
  'our',
  'some',
  'this',
  'that',
  'i',
  "i'd",
  "i'll",
  "i'm",
  'we',
  "we'd",
  "we'll",
  'me',
  'us',
  'it',
  "it's",
  'is',
  'was',
  'be',
  'been',
  'got',
  'get',
  'want',
  'wanted',
  'need',
  'like',
  'have',
  'take',
  'choose',
  'pick',
  'go',
  'do',
  'check',
  'speak',
  'talk',
  'reach',
  'for',
  'to',
  'with',
  'by',
  'via',
  'using',
  'pay',
  'about',
  'on',
  'in',
  'of',
  'please',
  'and',
  'just',
  'only',
  'then',
  'so',
  'well',
  'yes',
  'yeah',
  'ok',
  'okay',
  'sure',
  'actually',
  'maybe',
  'one',
]);
/** Words that turn a following cardinal into a position ("option two", "number 2"). */
const POSITION_PREFIXES = new Set(['option', 'number', 'choice', 'item', 'press']);
const POSITION_SUFFIXES = new Set(['one', 'option', 'choice']);
/** Words that carry no choice: a label word among these never picks an option by itself. */
const STOPWORDS = new Set([
  'a',
  'an',
  'the',
  'my',
  'your',
  'our',
  'their',
  'his',
  'her',
  'its',
  'to',
  'for',
  'of',
  'and',
  'or',
  'in',
  'on',
  'at',
  'with',
  'about',
  'from',
  'by',
  'i',
  'me',
  'we',
  'you',
  'it',
  'is',
  'be',
  'want',
  'need',
  'like',
  'please',
  'one',
  'option',
  'some',
]);
/** Leading determiners a label may carry that callers leave out ("an agent" → "agent"). */
const DETERMINERS = new Set(['a', 'an', 'the', 'my', 'your', 'our']);
/**
 * Common ways to ask for a person: if exactly one option is named by one of them, the others
 * name it too ("operator please" → "an agent").
 */
const AGENT_WORDS: readonly (readonly string[])[] = [
  ['agent'],
  ['representative'],
  ['rep'],
  ['operator'],
  ['human'],
  ['advisor'],
  ['adviser'],
  ['real', 'person'],
  ['live', 'person'],
  ['actual', 'person'],
];

interface Mention {
  index: number;
  start: number;
  end: number;
  /** Found by position ("the second one"), not by a word of the option. */
  position?: boolean;
}

function isNegated(words: readonly string[], start: number): boolean {
  for (let k = start - 1, seen = 0; k >= 0 && seen < 5; k--, seen++) {
    const w = words[k]!;
    if (NEGATIONS.has(w)) return true;
    if (!SKIPPABLE.has(w)) return false;
  }
  return false;
}

function findPhrase(words: readonly (string | null)[], phrase: readonly string[]): number[] {
  const at: number[] = [];
  for (let i = 0; i + phrase.length <= words.length; i++) {
    if (phrase.every((t, j) => words[i + j] === t)) at.push(i);
  }
  return at;
}

/** Each option's terms as words: label and synonyms, and each without a leading determiner. */
function optionTerms(options: readonly ChoiceOption[], partial: boolean): string[][][] {
  return options.map((o) => {
    const terms: string[][] = [];
    for (const term of [o.label, ...(o.synonyms ?? [])]) {
      const tw = plainWords(term);
      if (tw.length === 0) continue;
      terms.push(tw);
      if (partial && tw.length > 1 && DETERMINERS.has(tw[0]!)) terms.push(tw.slice(1));
    }
    return terms;
  });
}

/** Finds label and synonym mentions, longest terms first so "gift card" beats "card". */
function termMentions(words: (string | null)[], terms: readonly string[][][]): Mention[] {
  const all = terms.flatMap((ts, index) => ts.map((t) => ({ index, words: t })));
  all.sort((a, b) => b.words.length - a.words.length);
  const found: Mention[] = [];
  for (const term of all) {
    for (const i of findPhrase(words, term.words)) {
      if (term.words.some((_, j) => words[i + j] === null)) continue;
      found.push({ index: term.index, start: i, end: i + term.words.length });
      for (let j = 0; j < term.words.length; j++) words[i + j] = null;
    }
  }
  return found;
}

/** Words of the options' terms that name exactly one option ("savings", "cancel"). */
function distinguishingWords(terms: readonly string[][][]): Map<string, number> {
  const owners = new Map<string, Set<number>>();
  terms.forEach((ts, index) => {
    for (const t of ts) {
      for (const w of t) {
        if (STOPWORDS.has(w) || w.length < 3 || /^\d+$/.test(w)) continue;
        if (!owners.has(w)) owners.set(w, new Set());
        owners.get(w)!.add(index);
      }
    }
  });
  const out = new Map<string, number>();
  for (const [w, set] of owners) if (set.size === 1) out.set(w, [...set][0]!);
  return out;
}

function partialMentions(words: (string | null)[], terms: readonly string[][][]): Mention[] {
  const unique = distinguishingWords(terms);
  const found: Mention[] = [];
  words.forEach((w, i) => {
    if (w === null) return;
    const index = unique.get(w);
    if (index !== undefined) found.push({ index, start: i, end: i + 1 });
  });
  return found;
}

/** "operator", "a real person" → the one option whose terms use any of these words. */
function agentMentions(words: (string | null)[], terms: readonly string[][][]): Mention[] {
  const owners = terms.flatMap((ts, index) =>
    ts.some((t) => AGENT_WORDS.some((a) => findPhrase(t, a).length > 0)) ? [index] : [],
  );
  if (owners.length !== 1) return [];
  const found: Mention[] = [];
  for (const a of AGENT_WORDS) {
    for (const i of findPhrase(words, a))
      found.push({ index: owners[0]!, start: i, end: i + a.length });
  }
  return found;
}

/** Finds positional mentions in the words no term claimed: "the first one", "option 2", "last". */
function positionMentions(
  words: (string | null)[],
  count: number,
): { mentions: Mention[]; outOfRange?: number } {
  const mentions: Mention[] = [];
  let outOfRange: number | undefined;
  const unclaimed = words.filter((w) => w !== null).length;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === null || w === undefined) continue;
    let position: number | undefined;
    let end = i + 1;
    if (w === 'last') {
      position = count;
    } else {
      const two = words[i + 1];
      const ordinal2 = two ? parseOrdinal([w, two]) : undefined;
      if (ordinal2 !== undefined) {
        position = ordinal2;
        end = i + 2;
      } else {
        position = parseOrdinal([w]);
      }
      if (position === undefined) {
        const prev = i > 0 ? words[i - 1] : undefined;
        const cardinal = parseCardinal([w]);
        const alone = unclaimed === 1;
        const prefixed = prev !== null && prev !== undefined && POSITION_PREFIXES.has(prev);
        if (cardinal !== undefined && Number.isInteger(cardinal) && (alone || prefixed)) {
          position = cardinal;
        }
      }
    }
    if (position === undefined) continue;
    if (position < 1 || position > count) {
      outOfRange = position;
      continue;
    }
    if (POSITION_SUFFIXES.has(words[end] ?? '')) end++;
    mentions.push({ index: position - 1, start: i, end, position: true });
    i = end - 1;
  }
  return outOfRange === undefined ? { mentions } : { mentions, outOfRange };
}

function choiceOnce<V extends string>(
  text: string,
  options: readonly ChoiceOption<V>[],
  parse: ChoiceParseOptions,
): ParseResult<V> {
  if (isQuestion(text)) return nomatch();
  const partial = parse.partial !== false;
  const original = cleanWords(text);
  const words: (string | null)[] = [...original];
  const terms = optionTerms(options, partial);
  const named = termMentions(words, terms);
  const { mentions: positions, outOfRange } =
    parse.positional === false
      ? { mentions: [], outOfRange: undefined }
      : positionMentions(words, options.length);
  const partials = partial ? partialMentions(words, terms) : [];
  const pick = (mentions: readonly Mention[]): Set<number> | undefined => {
    const chosen = new Set<number>();
    for (const m of mentions) {
      if (isNegated(original, m.start)) continue;
      // "extra large" is not "large": a mention with a modifier is not that option.
      const left = m.start > 0 ? original[m.start - 1]! : undefined;
      // A word of another mention before it is a list ("not cancel, reschedule"), not a modifier.
      const listed = covered.has(m.start - 1);
      if (
        left !== undefined &&
        !listed &&
        (MODIFIERS.has(left) || (!m.position && !NEUTRAL_LEFT.has(left)))
      ) {
        return undefined;
      }
      chosen.add(m.index);
    }
    return chosen;
  };
  const all = [...named, ...positions, ...partials];
  const covered = new Set(
    all.flatMap((m) => Array.from({ length: m.end - m.start }, (_, k) => m.start + k)),
  );
  let chosen = pick(all);
  if (chosen === undefined) return nomatch();
  if (chosen.size === 0 && partial && named.length + partials.length === 0) {
    chosen = pick(agentMentions(words, terms)) ?? new Set();
  }
  if (chosen.size === 1) {
    const [index] = chosen;
    return match(options[index!]!.value);
  }
  if (chosen.size === 0 && outOfRange !== undefined && named.length === 0) {
    return invalid(
      `There ${options.length === 1 ? 'is' : 'are'} only ${options.length} option${
        options.length === 1 ? '' : 's'
      }.`,
    );
  }
  return nomatch();
}

/**
 * Picks one option by label or synonym (case-insensitive, whole words, longest first; a
 * leading "a"/"the"/"your" may be left out), by a word only one option uses ("savings"), by a
 * common word for an agent ("operator"), or by position ("the first one", "option two", "the
 * last one"). A mention preceded by "not" / "I don't want to" is ruled out; a modified mention
 * ("extra large") or a question back ("which one is cheaper?") → nomatch; two different options
 * → nomatch (never a guess); a self-correction counts its last option ("billing, no wait,
 * support"); a position beyond the list → invalid. Throws `invalid_argument` when `options`
 * is not an array of options (a programming error).
 */
export function choice<V extends string>(
  text: string,
  options: readonly ChoiceOption<V>[],
  parse: ChoiceParseOptions = {},
): ParseResult<V> {
  if (!Array.isArray(options) || options.some((o) => typeof o?.label !== 'string')) {
    throw new TasklineError(
      'invalid_argument',
      'choice needs its options: an array of { value, label, synonyms? }. Pass them as the second argument.',
    );
  }
  if (options.length === 0) return nomatch();
  return (
    selfCorrected(text, (t) => choiceOnce(t, options, parse)) ?? choiceOnce(text, options, parse)
  );
}
