/**
 * Repair requests: what a caller says to steer the call rather than answer the question —
 * correct an earlier answer ("actually my date of birth is March 3rd 1980", "sorry, my zip
 * code is 94110 not 94101"), hear the question again ("can you say that again?", "what?"),
 * skip it ("skip", "next question"), end the call ("stop", "I want to hang up") or reach a
 * person ("agent", "can I talk to a pharmacist"). Whole utterances only, and only clear ones:
 * a request buried in a longer answer ("the agent was rude") is not one. Whether a request
 * beats an answer the question's own parser reads is the caller of this parser's decision
 * (a flow's repairs: the answer wins, except a correction that names another question).
 *
 * Over 500 lines: mostly phrase tables; the reading rules themselves are short.
 */
import { match, nomatch, type ParseResult } from './result.js';
import { FILLERS } from './words.js';

/** The repair patterns, after Rasa CALM's conversation repair. */
export const REPAIR_KINDS = ['correct', 'repeat', 'skip', 'cancel', 'human'] as const;

/** One repair pattern. */
export type RepairKind = (typeof REPAIR_KINDS)[number];

/** What the caller asked for. */
export type RepairRequest =
  | { kind: 'repeat' }
  | { kind: 'skip' }
  | { kind: 'cancel' }
  | { kind: 'human' }
  /**
   * Change the answer of `step`: to the words in `answer` (as said, for that step's own
   * parser), or, without `answer`, by being asked again ("can I change my score?").
   */
  | { kind: 'correct'; step: string; answer?: string };

/** What {@link repair} listens for besides the fixed phrases. */
export interface RepairParseOptions {
  /**
   * More words for "a person" in this call ("pharmacist", "a nurse"), heard alone or in a
   * request ("can I talk to the pharmacist"). The defaults (agent, representative, operator,
   * a person, a human, customer service…) always count.
   */
  humanWords?: readonly string[];
  /**
   * The answers the caller may correct, each with the names a caller calls it by ("zip",
   * "zip code"). A name two steps share is ambiguous: no correction is read from it.
   */
  steps?: readonly { id: string; names: readonly string[] }[];
  /**
   * The question takes any words as its answer (free text): only words clearly addressed to
   * the call count. A bare noun ("the pharmacist", "an agent") or a bare "next" / "pass"
   * could be the answer itself, so they are not read as requests.
   */
  openAnswer?: boolean;
}

/** A word as said (for the value of a correction) and as compared. */
interface Token {
  raw: string;
  bare: string;
}

const MAX_WORDS = 40;
const MAX_VALUE_WORDS = 30;

/**
 * Reads a repair request from a whole utterance; nomatch when it is not one (or not clearly
 * one). Deterministic and model-free.
 */
export function repair(text: string, options: RepairParseOptions = {}): ParseResult<RepairRequest> {
  const tokens = tokenize(text);
  if (tokens.length === 0 || tokens.length > MAX_WORDS) return nomatch();
  const corrected = correction(tokens, options.steps ?? []);
  if (corrected) return match(corrected);
  const asked = text.includes('?');
  const words = tokens.map((t) => t.bare).filter((w) => !FILLERS.has(w));
  const whole = words.join(' ');
  if (asked && BARE_QUESTION.test(whole)) return match({ kind: 'repeat' });
  const core = trimPolite(words).join(' ');
  if (core === '') return nomatch();
  if (REPEAT.some((r) => r.test(core))) return match({ kind: 'repeat' });
  const open = options.openAnswer === true;
  if (SKIP.some((r) => r.test(core)) && !(open && BARE_SKIP.test(core))) {
    return match({ kind: 'skip' });
  }
  if (CANCEL.some((r) => r.test(core))) return match({ kind: 'cancel' });
  if (isHumanRequest(core, options.humanWords ?? [], open)) return match({ kind: 'human' });
  return nomatch();
}

// ---------- words ----------

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  // As said (cased) for a correction's value; compared lower-cased.
  const said = text
    .normalize('NFKC')
    .replace(/[‘’ʼ`]/gu, "'")
    .replace(/\s+/gu, ' ')
    .trim();
  for (const raw of said.split(' ')) {
    const bare = raw
      .toLowerCase()
      .replace(/[^\p{L}\p{N}'@.-]/gu, '')
      .replace(/^[.'-]+|[.'-]+$/gu, '');
    if (bare !== '') out.push({ raw, bare });
  }
  return out;
}

/** Openers that carry no request ("oh", "okay", "excuse me", "sorry"). */
const OPENERS: readonly (readonly string[])[] = [
  ['excuse', 'me'],
  ['hey'],
  ['hi'],
  ['hello'],
  ['oh'],
  ['ok'],
  ['okay'],
  ['so'],
  ['well'],
  ['um'],
  ['listen'],
  ['look'],
  ['sorry'],
  ['actually'],
  ['please'],
  ['just'],
  ['yeah'],
  ['yes'],
  ['ah'],
];

/** Closers that carry no request ("please", "thanks", "now"). */
const CLOSERS: readonly (readonly string[])[] = [
  ['thank', 'you'],
  ['thanks'],
  ['please'],
  ['now'],
  ['right', 'now'],
  ['again'],
  ['then'],
  ['sorry'],
];

function startsWith(words: readonly string[], phrase: readonly string[], at = 0): boolean {
  return at + phrase.length <= words.length && phrase.every((p, i) => words[at + i] === p);
}

/** The words without openers and closers; never strips "again" off "say it again" alone. */
function trimPolite(input: readonly string[]): string[] {
  let words = [...input];
  let changed = true;
  while (changed && words.length > 1) {
    changed = false;
    const opener = OPENERS.find((p) => p.length < words.length && startsWith(words, p));
    if (opener) {
      words = words.slice(opener.length);
      changed = true;
      continue;
    }
    const closer = CLOSERS.find(
      (p) => p.length < words.length && startsWith(words, p, words.length - p.length),
    );
    // "again" stays when it is what the request says ("say that again", "again").
    if (closer && !(closer[0] === 'again' && REPEAT.some((r) => r.test(words.join(' '))))) {
      words = words.slice(0, words.length - closer.length);
      changed = true;
    }
  }
  return words;
}

// ---------- repeat, skip, cancel ----------

/** A bare question back ("what?", "sorry?", "pardon?"): asks for the question again. */
const BARE_QUESTION = /^(?:(?:oh |sorry |um )?(?:what|sorry|pardon|huh|come again|excuse me|eh))$/u;

const THAT =
  '(?:that|it|this|the question|the last question|the last part|the options|what you said|yourself)';

const REPEAT: readonly RegExp[] = [
  /^(?:what|huh|pardon|pardon me|come again|say again|again|repeat|repeat please|one more time|once more|once again)$/u,
  /^(?:what was that|what's that|whats that|what did you say|what did you just say|what was the question|what's the question|whats the question|what were the options|what are the options|what was it|what were you saying)$/u,
  new RegExp(
    `^(?:can|could|would|will) you (?:please )?(?:repeat|say|read) ${THAT}(?: again| one more time| once more)?$`,
    'u',
  ),
  /^(?:can|could|would|will) you (?:please )?repeat(?: again| one more time| once more)?$/u,
  new RegExp(`^(?:please )?(?:repeat|say|read) ${THAT}(?: again| one more time| once more)?$`, 'u'),
  /^(?:please )?(?:repeat|say|read) (?:that|it|the question) (?:back|over)$/u,
  new RegExp(
    `^(?:i )?(?:didn't|did not|couldn't|could not|can't|cannot) (?:catch|hear|get|understand) ${THAT}$`,
    'u',
  ),
  new RegExp(`^(?:i )?(?:missed|didn't catch|did not catch) ${THAT}$`, 'u'),
  new RegExp(`^(?:can|could|may) (?:i|we) hear ${THAT} again$`, 'u'),
  /^(?:i )?(?:didn't|did not|couldn't|could not) (?:hear|understand) (?:you|the question)$/u,
];

/** Skips that could be an answer to an open question ("next", "pass", "move on"). */
const BARE_SKIP = /^(?:next|pass|move on|next one)$/u;

const THIS = '(?:this|that|it|this one|that one|this question|that question|the question)';

const SKIP: readonly RegExp[] = [
  new RegExp(`^skip(?: ${THIS})?$`, 'u'),
  /^(?:next|next question|next one|the next question|move on|let's move on|lets move on|pass)$/u,
  /^(?:go|move|skip) (?:on )?to the next (?:question|one)$/u,
  /^(?:can|could|may) (?:i|we) (?:please )?(?:move on|go on|go to the next question)$/u,
  new RegExp(`^(?:can|could|may) (?:i|we) (?:please )?(?:skip|pass on)(?: ${THIS})?$`, 'u'),
  new RegExp(
    `^(?:i'd|i would|i|id)? ?(?:like|want|wanna|prefer|rather|would like|'d like) (?:to )?skip(?: ${THIS})?$`,
    'u',
  ),
  new RegExp(`^(?:let's|lets|let me) skip(?: ${THIS})?$`, 'u'),
];

const CALL = '(?:the call|this call|the survey|this survey|everything|all this|this)';

const CANCEL: readonly RegExp[] = [
  /^(?:stop|stop it|stop this|stop the call|stop this call|stop calling|stop calling me|stop asking|stop asking me)$/u,
  new RegExp(`^cancel(?: ${CALL})?$`, 'u'),
  /^(?:end the call|end this call|hang up|goodbye|good bye|bye|bye bye|quit|exit)$/u,
  new RegExp(
    `^(?:i|we)? ?(?:want|wanna|would like|'d like|i'd like|need|am going|'m going|i'm going|going|gonna) (?:to )?(?:hang up|end ${CALL}|stop(?: ${CALL})?|cancel(?: ${CALL})?|quit|cancel)$`,
    'u',
  ),
  /^(?:i'm|i am) (?:hanging up|going to hang up|gonna hang up)$/u,
  // Not "never mind" / "forget it": they as often take back what was just said.
  /^(?:leave me alone|i'm not doing this|i am not doing this)$/u,
  /^(?:take me off your list|take me off the list|remove me from your list|don't call me again|do not call me again|do not call me)$/u,
  /^(?:i )?(?:don't|do not) want to (?:do this|continue|go on|carry on|answer any more questions)(?: anymore| any more)?$/u,
  new RegExp(
    `^(?:can|could) (?:we|i|you) (?:please )?(?:stop(?: ${CALL})?|end ${CALL}|hang up|cancel(?: ${CALL})?)$`,
    'u',
  ),
  new RegExp(`^(?:let's|lets) (?:stop|end ${CALL}|stop here|call it a day)$`, 'u'),
];

// ---------- a person ----------

/** Nouns that name a person on their own ("agent", "a representative"). */
const PERSON_NOUNS: readonly string[] = [
  'agent',
  'an agent',
  'representative',
  'rep',
  'operator',
  'person',
  'human',
  'human being',
  'customer service',
  'customer support',
  'customer service agent',
  'customer service representative',
  'customer care',
];
/** Nouns that name a person only inside a request ("talk to someone"). */
const REQUEST_NOUNS: readonly string[] = [
  'someone',
  'somebody',
  'anyone',
  'anybody',
  'support',
  'a manager',
  'manager',
  'supervisor',
  'staff member',
  'member of staff',
  'member of your staff',
];

const ARTICLE = '(?:a|an|the|some|your|a real|an actual|a live|the real|real|live|actual)';
const ADJECTIVE = '(?:real|live|actual|human|proper|real live)';

function alternation(words: readonly string[]): string {
  return [...words]
    .sort((a, b) => b.length - a.length)
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'))
    .join('|');
}

const humanPatterns = new Map<string, { bare: RegExp; request: RegExp }>();

/** The patterns for a set of extra person words (built once per set). */
function humanPatternsFor(extra: readonly string[]): { bare: RegExp; request: RegExp } {
  const key = extra.join('\u0000');
  let found = humanPatterns.get(key);
  if (!found) {
    const own = extra
      .map((w) =>
        tokenize(w)
          .map((t) => t.bare)
          .join(' ')
          .replace(/^(?:a|an|the|my|your) /u, ''),
      )
      .filter((w) => w !== '');
    const alone = alternation([...PERSON_NOUNS, ...own]);
    const any = alternation([...PERSON_NOUNS, ...REQUEST_NOUNS, ...own]);
    const phrase = `(?:${ARTICLE} )?(?:${ADJECTIVE} )?(?:${any})`;
    const verbs = '(?:talk|speak|chat)';
    const join = '(?:put|get|transfer|connect|patch|send|pass|take|forward)';
    const request = [
      `(?:i |we )?(?:want|wanna|need|would like|'d like|i'd like|would rather|'d rather|i'd rather|wish|have|got) to ${verbs} (?:to|with) ${phrase}`,
      `(?:can|could|may|might) (?:i|we) (?:please )?${verbs} (?:to|with) ${phrase}`,
      `(?:let me|lemme) ${verbs} (?:to|with) ${phrase}`,
      `${verbs} (?:to|with) ${phrase}`,
      `(?:please )?${join} me (?:through |over |across )?(?:to|with) ${phrase}`,
      `(?:can|could|would|will) you (?:please )?${join} me (?:through |over |across )?(?:to|with) ${phrase}`,
      `(?:can|could|would|will) you (?:please )?(?:get|find|give) me ${phrase}`,
      `(?:get|give|find) me ${phrase}`,
      `(?:i |we )?(?:want|need|would like|'d like|i'd like) ${phrase}`,
      `(?:can|could|may) (?:i|we) (?:please )?(?:have|get|reach) ${phrase}`,
      `is there ${phrase}(?: (?:there|available|around|i can (?:talk|speak) (?:to|with)))?`,
      `(?:can|could|would|will) you (?:please )?transfer me`,
      '(?:please )?transfer me',
    ].join('|');
    found = {
      bare: new RegExp(`^(?:${ARTICLE} )?(?:${ADJECTIVE} )?(?:${alone})$`, 'u'),
      request: new RegExp(`^(?:${request})$`, 'u'),
    };
    if (humanPatterns.size > 64) humanPatterns.clear();
    humanPatterns.set(key, found);
  }
  return found;
}

function isHumanRequest(core: string, extra: readonly string[], open: boolean): boolean {
  const p = humanPatternsFor(extra);
  return (!open && p.bare.test(core)) || p.request.test(core);
}

// ---------- corrections ----------

/** Words a correction opens with ("actually", "sorry", "no wait", "I meant"). */
const MARKERS: readonly (readonly string[])[] = [
  ['let', 'me', 'correct', 'that'],
  ['scratch', 'that'],
  ['by', 'the', 'way'],
  ['one', 'second'],
  ['hold', 'on'],
  ['hang', 'on'],
  ['excuse', 'me'],
  ['i', 'mean'],
  ['i', 'meant'],
  ['i', 'said'],
  ['my', 'mistake'],
  ['my', 'bad'],
  ['correction'],
  ['actually'],
  ['sorry'],
  ['oops'],
  ['whoops'],
  ['wait'],
  ['oh'],
  ['ah'],
  ['no'],
  ['okay'],
  ['ok'],
  ['so'],
  ['well'],
  ['also'],
  ['and'],
  ['btw'],
  ['hey'],
];

/** Verbs between a name and its new value ("my zip code is …", "… should be …"). */
const VALUE_VERBS: readonly (readonly string[])[] = [
  ['should', 'have', 'been'],
  ['is', 'actually'],
  ['was', 'actually'],
  ['is', 'really'],
  ['should', 'be'],
  ['would', 'be'],
  ['needs', 'to', 'be'],
  ['ought', 'to', 'be'],
  ['is'],
  ['was'],
  ['are'],
];

/** Verbs that open a change request ("change my score to 9", "can I change my score"). */
const CHANGE = new Set(['change', 'correct', 'update', 'fix', 'redo', 'amend', 'edit', 'switch']);

/** Openings of a request to change an answer (then "my score", and maybe "to 9"). */
const CHANGE_OPENERS: readonly (readonly string[])[] = [
  ['can', 'i'],
  ['could', 'i'],
  ['may', 'i'],
  ['can', 'we'],
  ['could', 'we'],
  ['can', 'you'],
  ['could', 'you'],
  ['i', 'want', 'to'],
  ['i', 'wanna'],
  ['i', 'need', 'to'],
  ['i', 'would', 'like', 'to'],
  ["i'd", 'like', 'to'],
  ['id', 'like', 'to'],
  ['we', 'need', 'to'],
  ['let', 'me'],
  ["let's"],
  ['lets'],
  ['please'],
];

/** Words after a name that say it was wrong ("my score is wrong"). */
const WRONG: readonly (readonly string[])[] = [
  ['is', 'wrong'],
  ['was', 'wrong'],
  ['is', 'incorrect'],
  ['was', 'incorrect'],
  ['is', 'not', 'right'],
  ['was', 'not', 'right'],
  ["isn't", 'right'],
  ["wasn't", 'right'],
  ['is', 'a', 'mistake'],
  ['was', 'a', 'mistake'],
];

const POSSESSIVE = new Set(['my', 'the', 'our', 'that', 'his', 'her', 'their']);

/** A step name found in the words: the step, how many words it took, and how it ended. */
interface NameHit {
  step: string;
  length: number;
  /** Its last word carried "'s" ("zip's 94110"): the verb is said already. */
  contracted: boolean;
}

/** The step whose name starts at `at` (the longest name; undefined when two steps share it). */
function nameAt(
  words: readonly string[],
  at: number,
  steps: readonly { id: string; names: readonly string[][] }[],
): NameHit | undefined {
  let best: NameHit | undefined;
  let ambiguous = false;
  for (const step of steps) {
    for (const name of step.names) {
      const last = name.length - 1;
      const whole = startsWith(words, name, at);
      const contracted =
        !whole &&
        startsWith(words, name.slice(0, last), at) &&
        words[at + last] === `${name[last]}'s`;
      if (!whole && !contracted) continue;
      if (!best || name.length > best.length) {
        best = { step: step.id, length: name.length, contracted };
        ambiguous = false;
      } else if (best.length === name.length && best.step !== step.id) {
        ambiguous = true;
      }
    }
  }
  return ambiguous ? undefined : best;
}

function prepared(steps: readonly { id: string; names: readonly string[] }[]) {
  return steps.map((s) => ({
    id: s.id,
    names: s.names.map((n) => tokenize(n).map((t) => t.bare)).filter((n) => n.length > 0),
  }));
}

/** A correction of an earlier answer, if the whole utterance is one. */
function correction(
  tokens: readonly Token[],
  stepNames: readonly { id: string; names: readonly string[] }[],
): RepairRequest | undefined {
  if (stepNames.length === 0) return undefined;
  const steps = prepared(stepNames);
  const kept = tokens.filter((t) => !FILLERS.has(t.bare));
  const words = kept.map((t) => t.bare);
  let at = 0;
  for (let guard = 0; guard < 8; guard++) {
    const marker = MARKERS.find((m) => startsWith(words, m, at));
    if (!marker) break;
    at += marker.length;
  }
  return (
    valueCorrection(kept, words, at, steps) ??
    changeRequest(kept, words, at, steps) ??
    wrongAnswer(words, at, steps)
  );
}

/** "my zip code is 94110 (not 94101)", "the date should be March 3rd". */
function valueCorrection(
  kept: readonly Token[],
  words: readonly string[],
  from: number,
  steps: ReturnType<typeof prepared>,
): RepairRequest | undefined {
  let at = from;
  if (POSSESSIVE.has(words[at] ?? '')) at += 1;
  const hit = nameAt(words, at, steps);
  if (!hit) return undefined;
  at += hit.length;
  // "zip's 94110": the contraction was the verb.
  if (hit.contracted) return valueFrom(kept, words, at, hit.step);
  const verb = VALUE_VERBS.find((v) => startsWith(words, v, at));
  if (!verb) return undefined;
  return valueFrom(kept, words, at + verb.length, hit.step);
}

/** "change my score to 9", "can I change my score?", "I want to correct my zip code". */
function changeRequest(
  kept: readonly Token[],
  words: readonly string[],
  from: number,
  steps: ReturnType<typeof prepared>,
): RepairRequest | undefined {
  let at = from;
  const opener = CHANGE_OPENERS.find((o) => startsWith(words, o, at));
  if (opener) at += opener.length;
  if (words[at] === 'please') at += 1;
  const goBack = startsWith(words, ['go', 'back', 'to'], at);
  if (!goBack && !CHANGE.has(words[at] ?? '')) return undefined;
  at += goBack ? 3 : 1;
  if (!POSSESSIVE.has(words[at] ?? '')) return undefined;
  at += 1;
  const hit = nameAt(words, at, steps);
  if (!hit || hit.contracted) return undefined;
  at += hit.length;
  if (!goBack && (words[at] === 'to' || words[at] === 'as')) {
    return valueFrom(kept, words, at + 1, hit.step);
  }
  const rest = words
    .slice(at)
    .filter((w) => !['answer', 'please', 'again', 'question', 'too'].includes(w));
  return rest.length === 0 ? { kind: 'correct', step: hit.step } : undefined;
}

/** "my score is wrong", "I gave the wrong zip code". */
function wrongAnswer(
  words: readonly string[],
  from: number,
  steps: ReturnType<typeof prepared>,
): RepairRequest | undefined {
  let at = from;
  const gave = ['gave', 'said', 'got', 'entered', 'put', 'keyed', 'typed'];
  if (words[at] === 'i' && gave.includes(words[at + 1] ?? '')) {
    at += 2;
    if (words[at] === 'you') at += 1;
    if (!['the', 'a'].includes(words[at] ?? '') || words[at + 1] !== 'wrong') return undefined;
    const hit = nameAt(words, at + 2, steps);
    if (!hit || hit.contracted || at + 2 + hit.length !== words.length) return undefined;
    return { kind: 'correct', step: hit.step };
  }
  if (POSSESSIVE.has(words[at] ?? '')) at += 1;
  const hit = nameAt(words, at, steps);
  if (!hit || hit.contracted) return undefined;
  at += hit.length;
  const wrong = WRONG.find((w) => startsWith(words, w, at));
  if (!wrong || at + wrong.length !== words.length) return undefined;
  return { kind: 'correct', step: hit.step };
}

/** The new value: the words from `at`, up to a "not …", "instead of …" naming the old one. */
function valueFrom(
  kept: readonly Token[],
  words: readonly string[],
  at: number,
  step: string,
): RepairRequest | undefined {
  let end = words.length;
  for (let i = at + 1; i < words.length; i++) {
    const w = words[i];
    if (
      w === 'not' ||
      (w === 'instead' && words[i + 1] === 'of') ||
      (w === 'rather' && words[i + 1] === 'than')
    ) {
      end = i;
      break;
    }
  }
  // "… please", "… thanks" after the value.
  while (end > at && ['please', 'thanks', 'thank', 'you'].includes(words[end - 1] ?? '')) {
    if (words[end - 1] === 'you' && words[end - 2] !== 'thank') break;
    end -= 1;
  }
  if (words[at] === 'actually') at += 1;
  const value = kept.slice(at, end);
  if (value.length === 0 || value.length > MAX_VALUE_WORDS) return undefined;
  if (
    ['not', 'wrong', 'incorrect', 'right', 'correct', 'fine', 'okay', 'ok'].includes(
      words[at] ?? '',
    )
  ) {
    return undefined;
  }
  const answer = value
    .map((t) => t.raw)
    .join(' ')
    .replace(/^[\s,;:.!?-]+|[\s,;:!?-]+$/gu, '')
    .replace(/\.$/u, '');
  return answer === '' ? undefined : { kind: 'correct', step, answer };
}
