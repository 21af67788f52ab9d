/**
 * Who answered, read from what they said — taskline's deterministic answering-machine rules,
 * run on the far end's transcripts before any model: a full mailbox, a voicemail greeting,
 * an IVR menu, a person. The rules only decide on clear cues; anything else is `unknown`
 * (keep listening, or ask upstream's AMD): a person saying "hello?" is never a machine, and
 * a long greeting with no cue is never a person.
 */

/** What a greeting says about who answered. */
export type GreetingKind =
  /** A person ("Hello?", "Dana speaking", "Hi, who's calling?"). */
  | 'human'
  /** A voicemail greeting that takes a message. */
  | 'voicemail'
  /** A voicemail that takes no message (full, not set up). */
  | 'mailbox_full'
  /** An automated menu ("For billing, press 1"). */
  | 'ivr'
  /** An automated line, not yet clear which kind ("Thank you for calling …"). */
  | 'machine'
  /** Nothing decisive. */
  | 'unknown';

/** The verdict on one greeting, with the words that decided it. */
export interface GreetingReading {
  kind: GreetingKind;
  /** The phrase that decided it (absent for `unknown`). */
  cue?: string;
}

const KEY_WORD =
  '(?:\\d|zero|one|two|three|four|five|six|seven|eight|nine|star|asterisk|pound|hash)';

const MAILBOX_FULL: readonly RegExp[] = [
  /\b(?:mail ?box|voice ?mail(?: box)?|memory)\b[^.?!]{0,30}\bfull\b/,
  /\b(?:cannot|can ?not|can't|unable to|is not able to|isn't able to|not able to) (?:accept|take|receive|record|hold) (?:any )?(?:new |more |additional |further )?messages\b/,
  /\b(?:mail ?box|voice ?mail)\b[^.?!]{0,40}\b(?:has not|hasn't|have not|not) (?:yet )?(?:been )?set ?up\b/,
  /\bnot (?:currently )?accepting (?:any )?(?:new )?messages\b/,
];

const VOICEMAIL: readonly RegExp[] = [
  /\bleave (?:me |us )?(?:a |your |a brief |a short |a detailed )?(?:message|voice ?mail|name and number)\b/,
  /\b(?:after|at) the (?:tone|beep)\b/,
  /\brecord your message\b/,
  /\bvoice ?mail\b/,
  /\b(?:can't|cannot|can not|unable to|not able to) (?:take|answer|come to|get to) (?:your call|the phone|the call)\b/,
  /\b(?:is|am|are)(?: not|n't) available (?:right now|at the moment|at this time|to take your call)\b/,
  /\baway from (?:my|the|his|her) (?:desk|phone)\b/,
  /\b(?:get back to you|call you back|return your call)\b/,
];

const IVR: readonly RegExp[] = [
  new RegExp(`\\b(?:press|dial|select|push)\\s+(?:the\\s+)?${KEY_WORD}\\b`),
  /\bmain menu\b|\bmenu options\b|\bthe following options\b/,
  /\bif you know (?:your party's|the|your) extension\b/,
  /\b(?:virtual|automated|digital) (?:assistant|attendant|system|agent)\b/,
  /\bin a few words\b/,
  /\b(?:please |you can )say [^.?!]{1,60}\bor\b/,
  /\b(?:please )?(?:enter|key in|type in) your\b/,
];

const MACHINE: readonly RegExp[] = [
  /\b(?:thank you|thanks) for calling\b/,
  /\byou(?:'ve| have) reached\b/,
  /\bwelcome to\b/,
  /\byour call (?:is important|may be (?:recorded|monitored))\b/,
  /\b(?:office|business|opening) hours\b/,
  /\bwe are (?:currently )?closed\b/,
];

const HUMAN: readonly RegExp[] = [
  /^(?:hello|hi|hey|hiya|yes|yeah|yep|good (?:morning|afternoon|evening)|speaking)\b/,
  /\bthis is [a-z]+(?: [a-z]+)?(?: speaking)?\b/,
  /\b[a-z]+ speaking\b/,
  /\bhow (?:can|may) i help\b/,
  /\bwhat can i do for you\b/,
  /\bwho(?:'s| is) (?:this|calling|it)\b/,
];

/** Longest utterance (in words) the person rules apply to: long speech is not a "hello". */
const HUMAN_MAX_WORDS = 12;

/** Lower-cases and straightens quotes, so the rules see one spelling. */
export function normalizeHeard(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

function firstCue(text: string, rules: readonly RegExp[]): string | undefined {
  for (const rule of rules) {
    const m = rule.exec(text);
    if (m) return m[0];
  }
  return undefined;
}

/**
 * Reads a greeting (one or more far-end utterances joined). Order matters: a full mailbox
 * before a voicemail ("the mailbox is full, please leave…" takes no message), a voicemail
 * before an IVR ("press 1 to leave a message" is a mailbox), an automated line before a
 * person ("Hello, you've reached Dana" is a recording).
 */
export function readGreeting(text: string): GreetingReading {
  const t = normalizeHeard(text);
  if (!t) return { kind: 'unknown' };
  for (const [kind, rules] of [
    ['mailbox_full', MAILBOX_FULL],
    ['voicemail', VOICEMAIL],
    ['ivr', IVR],
    ['machine', MACHINE],
  ] as const) {
    const cue = firstCue(t, rules);
    if (cue) return { kind, cue };
  }
  const words = t.split(' ').filter((w) => /[a-z0-9]/.test(w)).length;
  if (words <= HUMAN_MAX_WORDS) {
    const cue = firstCue(t, HUMAN);
    if (cue) return { kind: 'human', cue };
    if (words <= 3 && t.endsWith('?')) return { kind: 'human', cue: t };
  }
  return { kind: 'unknown' };
}
