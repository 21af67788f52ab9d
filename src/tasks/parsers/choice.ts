import { parseCardinal, parseOrdinal } from './numerals.js';
import { invalid, match, nomatch, type ParseResult } from './result.js';
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

/** Words that, right before a mention, mean the caller is ruling that option out. */
const NEGATIONS = new Set(['not', 'no', "don't", 'dont', 'never', 'without']);
/** Words allowed between a negation and the option it negates ("not the first one"). */
const SKIPPABLE = new Set(['the', 'a', 'an', 'that', 'this', 'want', 'need', 'like']);
/** Words that turn a following cardinal into a position ("option two", "number 2"). */
const POSITION_PREFIXES = new Set(['option', 'number', 'choice', 'item', 'press']);
const POSITION_SUFFIXES = new Set(['one', 'option', 'choice']);

/** How `choice` may recognise an option. */
export interface ChoiceParseOptions {
  /** Also accept positions ("the first one", "option 2"); on by default. */
  positional?: boolean;
}

interface Mention {
  index: number;
  start: number;
  end: number;
}

function isNegated(words: readonly string[], start: number): boolean {
  for (let k = start - 1, seen = 0; k >= 0 && seen < 3; k--, seen++) {
    const w = words[k]!;
    if (NEGATIONS.has(w)) return true;
    if (!SKIPPABLE.has(w)) return false;
  }
  return false;
}

/** Finds label and synonym mentions, longest terms first so "gift card" beats "card". */
function termMentions(words: (string | null)[], options: readonly ChoiceOption[]): Mention[] {
  const terms: { index: number; words: string[] }[] = [];
  options.forEach((o, index) => {
    for (const term of [o.label, ...(o.synonyms ?? [])]) {
      const tw = plainWords(term);
      if (tw.length > 0) terms.push({ index, words: tw });
    }
  });
  terms.sort((a, b) => b.words.length - a.words.length);
  const found: Mention[] = [];
  for (const term of terms) {
    for (let i = 0; i + term.words.length <= words.length; i++) {
      if (term.words.every((t, j) => words[i + j] === t)) {
        found.push({ index: term.index, start: i, end: i + term.words.length });
        for (let j = 0; j < term.words.length; j++) words[i + j] = null;
      }
    }
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
    mentions.push({ index: position - 1, start: i, end });
    i = end - 1;
  }
  return outOfRange === undefined ? { mentions } : { mentions, outOfRange };
}

/**
 * Picks one option by label or synonym (case-insensitive, whole words, longest first) or by
 * position ("the first one", "option two", "2", "the last one"). A mention preceded by "not"
 * is ruled out. Two different options mentioned → nomatch (ambiguous); a position beyond the
 * list → invalid.
 */
export function choice<V extends string>(
  text: string,
  options: readonly ChoiceOption<V>[],
  parse: ChoiceParseOptions = {},
): ParseResult<V> {
  if (options.length === 0) return nomatch();
  const original = cleanWords(text);
  const words: (string | null)[] = [...original];
  const terms = termMentions(words, options);
  const { mentions: positions, outOfRange } =
    parse.positional === false
      ? { mentions: [], outOfRange: undefined }
      : positionMentions(words, options.length);
  const chosen = new Set<number>();
  for (const m of [...terms, ...positions]) {
    if (!isNegated(original, m.start)) chosen.add(m.index);
  }
  if (chosen.size === 1) {
    const [index] = chosen;
    return match(options[index!]!.value);
  }
  if (chosen.size === 0 && outOfRange !== undefined && terms.length === 0) {
    return invalid(
      `There ${options.length === 1 ? 'is' : 'are'} only ${options.length} option${
        options.length === 1 ? '' : 's'
      }.`,
    );
  }
  return nomatch();
}
