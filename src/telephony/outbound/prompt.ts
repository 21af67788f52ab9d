/**
 * Reads what a far-end IVR says, deterministically: the menu it offers ("For billing, press
 * 1", "press 2 to speak to an agent", "say billing, support or agent"), what it asks for
 * ("enter your 8-digit account number followed by the pound key", "if you know your
 * party's extension, dial it now"), and whether it puts us on hold, rejected our last
 * entry, or is a person. Nothing here guesses: a sentence it cannot read adds nothing.
 */
import type { DtmfDigit } from '../../core/call.js';
import { normalizeHeard, readGreeting } from './greeting.js';

/** One choice an IVR menu offers. */
export interface MenuChoice {
  /** What the choice is for, as the IVR said it ("your balance", "speak to an agent"). */
  label: string;
  /** The key that picks it. */
  key?: DtmfDigit;
  /** The words that pick it, when the IVR takes speech ("billing"). */
  say?: string;
}

/** Something the IVR asks us to enter or say. */
export interface InputRequest {
  /** What it asks for, as said ("4-digit pin", "party's extension", "date of birth"). */
  what: string;
  /** How it wants it. */
  via: 'keys' | 'speech' | 'either';
  /** The number of digits it named ("4-digit"). */
  digits?: number;
  /** The key it wants after the entry ("followed by the pound key"). */
  finishKey?: '#' | '*';
}

/** What one far-end utterance says, as far as the rules can tell. */
export interface PromptReading {
  /** The menu choices it offers, in the order heard. */
  options: MenuChoice[];
  /** What it asks us to enter or say, if it asks. */
  request?: InputRequest;
  /** It puts us on hold ("please hold", "all our agents are busy"). */
  hold: boolean;
  /** It refuses what we entered ("that is not a valid option", "doesn't match our records"). */
  rejected: boolean;
  /** A person is speaking, not a machine. */
  human: boolean;
}

const KEY =
  '(\\d|zero|one|two|three|four|five|six|seven|eight|nine|star|asterisk|pound|hash)(?:\\s+(?:key|sign))?';
const WORD_KEYS: Readonly<Record<string, DtmfDigit>> = {
  zero: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
  star: '*',
  asterisk: '*',
  pound: '#',
  hash: '#',
};
const NUMBER_WORDS: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  sixteen: 16,
};

/** A key mention: "press 1", "dial the star key", "select option two". */
const KEY_MENTION = new RegExp(
  `\\b(?:please\\s+)?(?:press|dial|select|push|choose|enter|key)\\s+(?:the\\s+)?(?:option\\s+|number\\s+)?${KEY}\\b(?!\\s*-?\\s*digit)`,
  'g',
);
const LEAD =
  /^\s*(?:and\s+|or\s+)?(?:for|to|if you(?:'d| would)? (?:want|like|wish|need) to|if)\b\s*/;
const SENTENCE_END = /[.;!?]/;

const HOLD: readonly RegExp[] = [
  /\bplease (?:continue to )?(?:hold|stay on the line|wait)\b/,
  /\byour call is (?:important|being transferred|in a queue)\b/,
  /\ball (?:of )?our (?:agents|representatives|staff|operators|lines)\b[^.]{0,30}\b(?:busy|assisting|engaged)\b/,
  /\b(?:next|first) available\b/,
  /\b(?:estimated )?wait time\b/,
  /\byou are (?:caller )?(?:number )?\w+ in (?:the )?(?:queue|line)\b/,
  /\bconnecting you\b|\btransferring (?:you|your call)\b/,
];

const REJECTED: readonly RegExp[] = [
  /\bnot a valid\b|\binvalid (?:option|entry|selection|number|pin|input)\b/,
  /\b(?:doesn't|does not|did not|didn't) (?:match|recogni[sz]e|understand|get that|catch that)\b/,
  /\b(?:is|was) (?:incorrect|not recogni[sz]ed|not correct)\b/,
  /\b(?:sorry|i'm sorry),? (?:i|we) (?:didn't|did not|couldn't|could not)\b/,
];

function keyOf(word: string): DtmfDigit | undefined {
  if (/^\d$/.test(word)) return word as DtmfDigit;
  return WORD_KEYS[word];
}

function cleanLabel(text: string): string {
  return text
    .replace(/^[\s,]+|[\s,]+$/g, '')
    .replace(/^(?:please\s+)?/, '')
    .trim();
}

/** The choice a key mention at `[start, end)` of `t` names, read after it or else before it. */
function labelFor(t: string, start: number, end: number, previousEnd: number): string {
  const after = t.slice(end);
  const clauseAfter = after
    .split(SENTENCE_END)[0]!
    .split(/,\s*(?:or\s+)?(?:press|dial)\b/)[0]!
    .replace(/^\s*(?:at any time|anytime|now)\b\s*,?/, '');
  if (LEAD.test(clauseAfter)) return cleanLabel(clauseAfter.replace(LEAD, ''));
  // Before: from the sentence start (or the previous mention) to this mention; the last
  // comma-part that starts with a lead word begins the label ("Thank you for calling, for
  // questions about billing, payments or refunds, press 2" → "questions about billing, …").
  let from = previousEnd;
  const before = t.slice(from, start);
  const lastEnd = Math.max(...[...before.matchAll(/[.;!?]/g)].map((m) => (m.index ?? -1) + 1), 0);
  from += lastEnd;
  const segment = t.slice(from, start);
  const parts = segment.split(',');
  let first = parts.length - 1;
  for (let i = parts.length - 1; i >= 0; i--) {
    if (LEAD.test(parts[i]!)) {
      first = i;
      break;
    }
  }
  while (first > 0 && !parts[first]!.trim()) first -= 1;
  const label = parts.slice(first).join(',').replace(LEAD, '');
  return cleanLabel(label);
}

function readOptions(t: string): MenuChoice[] {
  const options: MenuChoice[] = [];
  let previousEnd = 0;
  for (const m of t.matchAll(KEY_MENTION)) {
    const key = keyOf(m[1]!);
    const start = m.index ?? 0;
    const end = start + m[0].length;
    if (!key) continue;
    const label = labelFor(t, start, end, previousEnd);
    previousEnd = end;
    if (!label || label.split(' ').length > 14) continue;
    // "To hear these options again, press star": a repeat is not a destination.
    if (options.some((o) => o.key === key)) continue;
    options.push({ key, label });
  }
  for (const say of readSpoken(t)) {
    const same = options.find((o) => o.label === say);
    if (same) same.say = say;
    else options.push({ label: say, say });
  }
  return options;
}

/** Words a menu accepts as speech: "say billing, support or agent", "you can say 'pay a bill'". */
function readSpoken(t: string): string[] {
  const out: string[] = [];
  for (const m of t.matchAll(
    /\b(?:you can |please |or |just )?say(?: things like)?\s+([^.;!?]+)/g,
  )) {
    const list = m[1]!;
    if (/^(?:your|the|a|an|it|that|so|yes or no|or press)\b/.test(list)) continue;
    for (const raw of list.split(/,|\bor\b/)) {
      const item = raw.replace(/["']/g, '').trim();
      if (!item || item.split(' ').length > 5) continue;
      if (/^(?:and\s+)?(?:press|dial|to|for)\b/.test(item)) break;
      out.push(item.replace(/^and\s+/, ''));
    }
  }
  return out;
}

function digitsIn(what: string): number | undefined {
  const m = /\b(\d+|[a-z]+)[- ]digit\b/.exec(what);
  if (!m) return undefined;
  const n = /^\d+$/.test(m[1]!) ? Number(m[1]) : NUMBER_WORDS[m[1]!];
  return n && n > 0 ? n : undefined;
}

function readRequest(t: string): InputRequest | undefined {
  const finish = /\bfollowed by (?:the )?(pound|hash|star|#|\*)(?: key| sign)?\b/.exec(t);
  const finishKey = finish ? (/star|\*/.test(finish[1]!) ? '*' : '#') : undefined;
  const known =
    /\bif you know (?:your |the )?([^.,;!?]{2,50}?),?\s+(?:please\s+)?(?:you may\s+|you can\s+)?(?:dial|enter|press|key)\b/.exec(
      t,
    );
  if (known) {
    const what = known[1]!.trim();
    return withDigits({ what, via: 'keys', ...(finishKey ? { finishKey } : {}) });
  }
  const ask =
    /\b(?:please\s+|now\s+)?(say or enter|enter or say|say or key|say|tell me|enter|key in|type in|type|dial|input|punch in)\s+(?:in\s+)?(?:your|the|a|an)\s+([^.;!?]{2,60}?)(?=\s*(?:followed by|then|and then|using|on your|on the|now|at any time|when|after|,|[.;!?]|$))/.exec(
      t,
    );
  if (!ask) return undefined;
  const verb = ask[1]!;
  const via: InputRequest['via'] = /say or|or say/.test(verb)
    ? 'either'
    : /^(say|tell me)$/.test(verb)
      ? 'speech'
      : 'keys';
  return withDigits({ what: ask[2]!.trim(), via, ...(finishKey ? { finishKey } : {}) });
}

function withDigits(request: InputRequest): InputRequest {
  const digits = digitsIn(request.what);
  return digits ? { ...request, digits } : request;
}

/** Reads one far-end utterance (see {@link PromptReading}). */
export function readPrompt(text: string): PromptReading {
  const t = normalizeHeard(text);
  const options = readOptions(t);
  const request = readRequest(t);
  const hold = HOLD.some((r) => r.test(t));
  const rejected = REJECTED.some((r) => r.test(t));
  const human = options.length === 0 && !request && !hold && readGreeting(text).kind === 'human';
  return { options, ...(request ? { request } : {}), hold, rejected, human };
}
