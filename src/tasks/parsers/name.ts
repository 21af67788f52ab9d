import { inSpelling, isLetter, readSpelledLetter } from './letters.js';
import { match, nomatch, type ParseResult } from './result.js';
import { isQuestion, selfCorrected } from './speech.js';
import { FILLERS, normalize, stripLeadIns } from './words.js';

/** A person's name as a capture task returns it. */
export interface PersonName {
  /** Given name(s), title-cased ("Mary Ann"). */
  first: string;
  /** Family name, title-cased, with particles kept ("de la Cruz"); absent if only one was said. */
  last?: string;
}

const NAME_LEAD_INS: readonly (readonly string[])[] = [
  ['you', 'can', 'call', 'me'],
  ['call', 'me'],
  ['this', 'is'],
  ["i'm"],
  ['im'],
  ['i', 'am'],
  ["name's"],
  ['name', 'is'],
  ['hi'],
  ['hello'],
  ['hey'],
];
const NAME_TRAILERS = new Set(['speaking', 'here', 'calling']);
const HONORIFICS = new Set([
  'mr',
  'mrs',
  'ms',
  'miss',
  'mx',
  'dr',
  'mister',
  'missus',
  'doctor',
  'prof',
  'professor',
  'sir',
  'dame',
  'rev',
  'reverend',
]);
/** Generational and academic suffixes: part of how a person is addressed, not a name part. */
const SUFFIXES = new Set([
  'jr',
  'junior',
  'sr',
  'senior',
  'ii',
  'iii',
  'iv',
  'phd',
  'md',
  'esq',
  'dds',
  'cpa',
]);
const PARTICLES = new Set([
  'de',
  'la',
  'del',
  'della',
  'di',
  'da',
  'van',
  'von',
  'der',
  'den',
  'le',
  'du',
  'dos',
  'das',
  'bin',
  'al',
  'st',
  'los',
  'las',
  'ter',
  'ten',
  'ibn',
  'y',
]);
const SEPARATOR_WORDS = new Set(['space', 'then', 'spelled', 'spelt', "that's"]);
/** Words after a name that start something else ("Tom from Acme", "Tom calling about…"). */
const NAME_ENDS = new Set([
  'from',
  'with',
  'at',
  'calling',
  'regarding',
  'about',
  'representing',
  'on',
  'here',
  'speaking',
]);
/** Words that mean the utterance is not a name at all ("I don't know", "what?"). */
const NOT_NAMES = new Set([
  'yes',
  'no',
  'not',
  "don't",
  'dont',
  'know',
  'what',
  'why',
  'how',
  'who',
  'sorry',
  'please',
  'the',
  'is',
  'are',
  'an',
  'to',
  'you',
  'your',
  'my',
  'me',
  'it',
  "it's",
  'that',
  'this',
  'sure',
  'okay',
  'ok',
  'repeat',
  'again',
  'name',
  'number',
  'email',
  'wait',
  'hold',
  'can',
  'could',
  'would',
  'will',
  'want',
  'need',
  'have',
  'do',
  'did',
  'say',
  'said',
  'tell',
  'rather',
  'prefer',
  'nobody',
  'none',
  'thanks',
  'thank',
  'hello',
  'hi',
  'of',
  'and',
  'or',
  'for',
  'with',
  'again',
  'pardon',
  'huh',
  // confirmation words: "yes that is right" is not a person called Right
  'right',
  'correct',
  'wrong',
  'incorrect',
  'exactly',
  'yeah',
  'yep',
  'yup',
  'nope',
  'nah',
  'fine',
  'good',
  'great',
  'perfect',
  'absolutely',
  'definitely',
]);
const LABELS: readonly { words: readonly string[]; part: 'first' | 'last' }[] = [
  { words: ['first', 'name'], part: 'first' },
  { words: ['given', 'name'], part: 'first' },
  { words: ['last', 'name'], part: 'last' },
  { words: ['family', 'name'], part: 'last' },
  { words: ['surname'], part: 'last' },
];

interface Token {
  raw: string;
  lower: string;
}

interface NameWord {
  text: string;
  spelled: boolean;
}

const SEP: Token = { raw: '|', lower: '|' };

function tokenize(text: string): Token[] {
  const cleaned = text
    .normalize('NFKC')
    .replace(/[‘’ʼ`]/gu, "'")
    .replace(/[,;:]/gu, ' | ')
    // "Bond. James Bond.": a full stop after a word (not after "Dr.") ends a group.
    .replace(/(\p{L}{3,})\.(?=\s)/gu, '$1 | ');
  const out: Token[] = [];
  for (const piece of cleaned.split(/\s+/u)) {
    if (piece === '|') {
      out.push(SEP);
      continue;
    }
    const raw = piece.replace(/^[^\p{L}]+|[^\p{L}]+$/gu, '');
    if (raw.length > 0) out.push({ raw, lower: normalize(raw) });
  }
  return out;
}

function startsWithPhrase(
  tokens: readonly Token[],
  phrase: readonly string[],
  at: number,
): boolean {
  return phrase.every((p, i) => tokens[at + i]?.lower === p);
}

/** Removes lead-ins ("my name is", "this is", "I'm"), honorifics and "…speaking". */
function stripNameLeadIns(tokens: readonly Token[]): { tokens: Token[]; titled: boolean } {
  let out = tokens.filter((t) => t === SEP || !FILLERS.has(t.lower));
  let changed = true;
  while (changed) {
    changed = false;
    while (out[0] === SEP) out = out.slice(1);
    const lowers = out.map((t) => t.lower);
    const generic = stripLeadIns(lowers);
    const start = lowers.findIndex((_, k) => generic.every((g, j) => lowers[k + j] === g));
    if (generic.length < lowers.length && start >= 0) {
      out = out.slice(start, start + generic.length);
      changed = true;
    }
    for (const phrase of NAME_LEAD_INS) {
      if (phrase.length < out.length && startsWithPhrase(out, phrase, 0)) {
        out = out.slice(phrase.length);
        changed = true;
      }
    }
    const last = out[out.length - 1];
    const bareLast = last?.lower.replace(/\.$/u, '') ?? '';
    if (out.length > 1 && (NAME_TRAILERS.has(bareLast) || SUFFIXES.has(bareLast))) {
      out = out.slice(0, -1);
      changed = true;
    }
    while (out[out.length - 1] === SEP) out = out.slice(0, -1);
  }
  // "Tom from Acme", "Tom, calling about my order": the name ends where the rest begins.
  const endAt = out.findIndex((t, k) => k > 0 && NAME_ENDS.has(t.lower));
  if (endAt > 0) out = out.slice(0, endAt);
  while (out[out.length - 1] === SEP) out = out.slice(0, -1);
  const title = (t: Token) => HONORIFICS.has(t.lower.replace(/\.$/u, ''));
  // A leading "Sr." is a title (Sister, Señor), not a suffix.
  const lead = out[0] !== undefined && SUFFIXES.has(out[0].lower.replace(/\.$/u, ''));
  const titled = lead || out.some(title);
  return { tokens: out.filter((t, k) => !title(t) && !(lead && k === 0)), titled };
}

function titleCase(word: string): string {
  if (/\p{Lu}/u.test(word) && /\p{Ll}/u.test(word)) return word; // "McDonald" as typed
  return word
    .toLowerCase()
    .replace(/(^|[-'])(\p{L})/gu, (_, sep: string, c: string) => sep + c.toUpperCase());
}

/** Groups tokens into words: spoken words, and runs of spelled letters ("J O H N", "J-O-H-N"). */
function toWords(tokens: readonly Token[]): NameWord[] | undefined {
  const words: NameWord[] = [];
  const lowers = tokens.map((t) => t.lower);
  let run = '';
  let runLength = 0;
  const flush = (): void => {
    if (runLength > 1) words.push({ text: titleCase(run), spelled: true });
    else if (runLength === 1) words.push({ text: run.toUpperCase(), spelled: false });
    run = '';
    runLength = 0;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === SEP || SEPARATOR_WORDS.has(t.lower)) {
      flush();
      continue;
    }
    if (/^(?:\p{L}[-.])+\p{L}$/u.test(t.lower)) {
      flush();
      words.push({ text: titleCase(t.lower.replace(/[-.]/gu, '')), spelled: true });
      continue;
    }
    const context = runLength > 0 || inSpelling(lowers, i);
    const spelled = readSpelledLetter(lowers, i, context);
    if (spelled !== undefined && (isLetter(t.lower) || context || spelled.used > 1)) {
      run += spelled.letters;
      runLength += spelled.used;
      i += spelled.used - 1;
      continue;
    }
    flush();
    if (!/^\p{L}[\p{L}'.-]*$/u.test(t.raw) || NOT_NAMES.has(t.lower)) return undefined;
    words.push({ text: titleCase(t.raw), spelled: false });
  }
  flush();
  return words;
}

/** Spelled words override the spoken ones they spell ("John Smith, S M Y T H" → Smyth). */
function merge(words: readonly NameWord[]): string[] | undefined {
  const spoken = words.filter((w) => !w.spelled).map((w) => w.text);
  const spelled = words.filter((w) => w.spelled).map((w) => w.text);
  if (spelled.length === 0) return spoken;
  if (spoken.length <= spelled.length) return spelled;
  const out = [...spoken];
  const used = new Set<number>();
  for (const s of spelled) {
    const lower = s.toLowerCase();
    let at = out.findIndex((w, k) => !used.has(k) && w.toLowerCase() === lower);
    if (at < 0) {
      for (let k = out.length - 1; k >= 0; k--) {
        if (!used.has(k) && out[k]!.toLowerCase()[0] === lower[0]) {
          at = k;
          break;
        }
      }
    }
    if (at < 0) return undefined;
    out[at] = s;
    used.add(at);
  }
  return out;
}

function split(words: readonly string[]): PersonName | undefined {
  if (words.length === 0 || words.length > 5) return undefined;
  if (words.length === 1) return { first: words[0]! };
  let lastStart = words.length - 1;
  while (lastStart > 1 && PARTICLES.has(words[lastStart - 1]!.toLowerCase())) lastStart--;
  const family = words.slice(lastStart);
  const last = family.map((w, k) => (k < family.length - 1 ? w.toLowerCase() : w)).join(' ');
  return { first: words.slice(0, lastStart).join(' '), last };
}

function parsePart(tokens: readonly Token[]): string[] | undefined {
  const words = toWords(tokens);
  return words === undefined ? undefined : merge(words);
}

/** "first name John, last name Smith" → each part read on its own. */
function labelled(tokens: readonly Token[]): PersonName | undefined {
  const marks: { at: number; len: number; part: 'first' | 'last' }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    for (const label of LABELS) {
      if (startsWithPhrase(tokens, label.words, i)) {
        let len = label.words.length;
        if (tokens[i + len]?.lower === 'is') len++;
        marks.push({ at: i, len, part: label.part });
        i += len - 1;
        break;
      }
    }
  }
  if (marks.length === 0) return undefined;
  const parts: Partial<Record<'first' | 'last', string>> = {};
  const segments = marks.map((m, k) => ({
    part: m.part,
    tokens: tokens.slice(m.at + m.len, marks[k + 1]?.at ?? tokens.length),
  }));
  // "John, and my last name is Smith": what precedes the only label is the given name.
  const first = marks[0]!;
  if (first.part === 'last' && first.at > 0)
    segments.unshift({ part: 'first', tokens: tokens.slice(0, first.at) });
  for (const segment of segments) {
    const words = parsePart(trimConnectives(segment.tokens));
    if (words === undefined || words.length === 0) return undefined;
    parts[segment.part] = words.join(' ');
  }
  if (parts.first === undefined) return undefined;
  return parts.last === undefined
    ? { first: parts.first }
    : { first: parts.first, last: parts.last };
}

/** Drops "and", "my", "the" and separators around a labelled segment. */
function trimConnectives(tokens: readonly Token[]): Token[] {
  const connective = (t: Token | undefined): boolean =>
    t !== undefined && ['and', 'my', 'the', 'is', '|'].includes(t.lower);
  let out = [...tokens];
  while (connective(out[0])) out = out.slice(1);
  while (connective(out[out.length - 1])) out = out.slice(0, -1);
  return out;
}

/**
 * Reads a person's name: "my name is John Smith", "this is Maria", "Dr. Emily Chen", "Robert
 * Brown Jr." (titles and suffixes dropped), spelled letters ("J O H N",
 * "J-O-H-N", "jay oh aitch en" next to letters), a spoken name followed by its spelling ("John
 * Smyth, S M Y T H" → the spelling wins), "first name … last name …". Returns `{ first, last? }`
 * title-cased (mixed case as typed is kept; "de", "van" … stay lower case in a family name).
 * The last word (with its particles) is the family name; everything before it is the given
 * name. A self-correction counts its last name ("Mary, sorry, Marie"). Sentences that are not a
 * name ("I don't know", "why do you need it?") or a title with one name ("Mr. Smith") → nomatch.
 */
export function name(text: string): ParseResult<PersonName> {
  return selfCorrected(text, nameOnce) ?? nameOnce(text);
}

/** "my wife's name is Lisa": someone else's name; only the model knows whose is asked. */
const OTHER_PERSON = /\b(?:my|our|his|her|their|your)\s+\p{L}+'s\s+name\b/iu;

function nameOnce(text: string): ParseResult<PersonName> {
  if (isQuestion(text) || OTHER_PERSON.test(text.replace(/[‘’ʼ`]/gu, "'"))) return nomatch();
  const { tokens, titled } = stripNameLeadIns(tokenize(text));
  if (tokens.filter((t) => t !== SEP).length === 0) return nomatch();
  const fromLabels = labelled(tokens);
  if (fromLabels !== undefined) return match(fromLabels);
  if (spokenGroups(tokens) > 1) return nomatch();
  const words = parsePart(tokens);
  // "Mr. Smith": a title with one name is the family name, and no given name was said.
  if (titled && words?.length === 1) return nomatch();
  const result = words === undefined ? undefined : split(words);
  return result === undefined ? nomatch() : match(result);
}

/**
 * How many comma-separated groups hold spoken words not followed by their spelling: "Smith,
 * John Smith" or "Chen, Emily" (2) could be in either order; "John, J O H N, Smith" (1 each
 * pair) is a name and its spelling.
 */
function spokenGroups(tokens: readonly Token[]): number {
  const groups: Token[][] = [[]];
  for (const t of tokens) {
    if (t === SEP) groups.push([]);
    else groups[groups.length - 1]!.push(t);
  }
  const kinds = groups
    .filter((g) => g.length > 0)
    .map((g) => {
      const ws = toWords(g);
      if (ws === undefined) return 'other';
      return ws.every((w) => w.spelled) ? 'spelled' : 'spoken';
    });
  return kinds.filter((k, i) => k === 'spoken' && kinds[i + 1] !== 'spelled').length;
}

/**
 * The one word an utterance spells ("S M Y T H", "it's D O E", "that's J-O-H-N"), title-cased,
 * or undefined when it is anything else: the input of a spelled correction at a read-back.
 */
export function spelledWord(text: string): string | undefined {
  const lead = text.replace(
    /^\W*(?:(?:it's|it is|that's|that is|spelled|spelt|spelling)\b[\s,:]*)+/iu,
    '',
  );
  const { tokens } = stripNameLeadIns(tokenize(lead));
  const words = toWords(tokens);
  if (words === undefined || words.length !== 1 || !words[0]!.spelled) return undefined;
  return words[0]!.text;
}
