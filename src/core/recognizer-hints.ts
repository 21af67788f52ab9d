/**
 * Hints per question for the speech recogniser. While a capture waits for an answer it
 * publishes an {@link Expectation} on its call (digits, yes/no, a menu's options); a
 * {@link RecognizerHints} adapter passes it on to whatever recognises the caller — the
 * OpenAI transcription `prompt`, upstream's session keyterms (Deepgram and other STTs that
 * take a term list), or a user's own STT — and clears it when the capture ends.
 */
import type { voice } from '@livekit/agents';
import type { CallContext } from './call.js';
import type { AnswerKind, Expectation } from './expectation.js';

/** Something that tells a speech recogniser what the caller is expected to say next. */
export interface RecognizerHints {
  /**
   * Called when the active capture's expectation changes: `undefined` when none is active
   * (go back to no hints). Must not throw; runs on the call's event path.
   */
  update(expectation: Expectation | undefined): void;
}

/**
 * Keeps each of `hints` told what `call`'s active capture expects, starting with the current
 * one. Returns a function that stops (and clears the hints).
 */
export function applyRecognizerHints(call: CallContext, ...hints: RecognizerHints[]): () => void {
  const tell = (expectation: Expectation | undefined) => {
    for (const h of hints) {
      try {
        h.update(expectation);
      } catch {
        // a recogniser that cannot take hints still hears the caller
      }
    }
  };
  tell(call.expectation);
  const off = call.on('expecting', tell);
  return () => {
    off();
    tell(undefined);
  };
}

/** Phrases passed on at most (recognisers cap prompts and term lists; Whisper's prompt is 224 tokens). */
export const MAX_HINT_PHRASES = 50;
const MAX_PROMPT_CHARS = 600;

const KIND_TEXT: Record<AnswerKind, string> = {
  digits: 'Digits',
  number: 'A number',
  yesNo: 'Yes or no',
  choice: 'One of the options',
  date: 'A date',
  time: 'A time',
  email: 'An email address',
  phone: 'A phone number',
  name: 'A name',
  address: 'An address',
  freeText: 'An answer in their own words',
  custom: 'An answer',
};

/** The expectation's phrases, cleaned and capped, in order. */
export function hintPhrases(expectation: Expectation): string[] {
  const out: string[] = [];
  for (const p of expectation.phrases) {
    const clean = p
      .replace(/[,.:\n\r]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (clean && !out.includes(clean)) out.push(clean);
    if (out.length >= MAX_HINT_PHRASES) break;
  }
  return out;
}

/**
 * The transcription prompt for an expectation, e.g. `Yes or no: yes, no, yeah, nope.`:
 * a vocabulary list that Whisper-style models follow for spelling, with what is expected in
 * front for instruction-following models. Read back by {@link parseTranscriptionPrompt}.
 */
export function transcriptionPrompt(expectation: Expectation): string {
  const head = KIND_TEXT[expectation.kind] ?? KIND_TEXT.custom;
  let phrases = hintPhrases(expectation);
  let prompt = `${head}: ${phrases.join(', ')}.`;
  while (prompt.length > MAX_PROMPT_CHARS && phrases.length > 1) {
    phrases = phrases.slice(0, -1);
    prompt = `${head}: ${phrases.join(', ')}.`;
  }
  return phrases.length ? prompt : `${head}.`;
}

/**
 * The kind and phrases of a prompt made by {@link transcriptionPrompt} (how a local STT
 * endpoint recovers the hints from the request's `prompt`); undefined for any other prompt.
 */
export function parseTranscriptionPrompt(
  prompt: string,
): { kind: AnswerKind; phrases: string[] } | undefined {
  const m = /^([^:.]+?)(?::\s*(.*))?\.$/s.exec(prompt.trim());
  if (!m) return undefined;
  const kind = (Object.keys(KIND_TEXT) as AnswerKind[]).find((k) => KIND_TEXT[k] === m[1]);
  if (!kind) return undefined;
  const phrases = (m[2] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return { kind, phrases };
}

/** The part of upstream's `openai.STT` the prompt hints use. */
export interface PromptableStt {
  updateOptions(options: { prompt?: string; keywords?: string[] }): void;
}

/** Options for {@link promptHints}. */
export interface PromptHintOptions {
  /** The prompt to use when no capture is active (default: none). */
  basePrompt?: string;
  /**
   * Also send the phrases as `keywords` (only `gpt-transcribe` models take them; the plugin
   * throws for others, so this is off by default).
   */
  keywords?: boolean;
}

/**
 * Hints for upstream's `openai.STT` (and any STT with the same `updateOptions({ prompt })`):
 * the transcription prompt of {@link transcriptionPrompt}, and keywords on request.
 */
export function promptHints(stt: PromptableStt, options: PromptHintOptions = {}): RecognizerHints {
  return {
    update(expectation) {
      const prompt = expectation ? transcriptionPrompt(expectation) : options.basePrompt;
      stt.updateOptions({
        prompt,
        ...(options.keywords ? { keywords: expectation ? hintPhrases(expectation) : [] } : {}),
      });
    },
  };
}

/**
 * Hints through upstream's session keyterms (`session.updateOptions({ keyterms })`), which
 * upstream applies to every STT that takes a term list (Deepgram keyterms and the like).
 * `base` are the keyterms to keep when no capture is active.
 */
export function keytermHints(
  session: voice.AgentSession,
  base: readonly string[] = [],
): RecognizerHints {
  return {
    update(expectation) {
      const phrases = expectation ? hintPhrases(expectation) : [];
      session.updateOptions({ keyterms: [...new Set([...base, ...phrases])] });
    },
  };
}
