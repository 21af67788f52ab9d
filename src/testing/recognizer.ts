/**
 * A speech recogniser as audio mode and the local STT endpoint use it: audio in, words out,
 * optionally told what answer to expect. Two implementations ship: the transcription oracle
 * ({@link CallerSpeech}, exact words for audio it synthesised) and a real recogniser
 * ({@link PocketsphinxRecognizer}, Debian pocketsphinx).
 */
import type { AnswerKind } from '../core/expectation.js';
import type { Pcm } from './espeak.js';

/** What the recogniser is told about the answer it is about to hear (hints per question). */
export interface RecognitionHints {
  /** The kind of answer expected, when known. */
  kind?: AnswerKind;
  /** Words and phrases to favour (menu options and synonyms, yes/no words, digit words). */
  phrases: readonly string[];
}

/** What a recogniser heard in one utterance. */
export interface Recognition {
  /** The words heard ("" when nothing was recognised). */
  text: string;
  /**
   * How sure the recogniser is, 0–1, when it can say; undefined when it cannot. A caller of
   * the recogniser treats a low value as "not sure": confirm or re-ask, never store.
   */
  confidence?: number;
  /** Which search produced `text`: the oracle, a free language model, or the hint grammar. */
  source: 'oracle' | 'language-model' | 'grammar';
  /** What an unconstrained search heard when `text` came from the hint grammar, or the reverse. */
  alternative?: string;
  /** Time spent recognising, ms. */
  ms: number;
}

/** A recogniser behind the local STT endpoint. */
export interface Recognizer {
  /** Short name for reports ("oracle", "pocketsphinx"). */
  readonly name: string;
  /** Recognises one utterance (mono 16-bit PCM at any rate). */
  recognize(audio: Pcm, hints?: RecognitionHints): Promise<Recognition>;
  /** Stops whatever the recogniser runs (idempotent). */
  close(): Promise<void>;
}
