/**
 * taskline's testing kit: a scripted model, a simulated caller, a virtual clock and a
 * local OpenAI-compatible server. Import it from `taskline/testing` only; production code
 * importing `taskline` never loads it.
 *
 * @packageDocumentation
 */

export * from './expect.js';
export * from './linked-call.js';
export * from './openai-server.js';
export {
  DEBIAN_EN_US_MODEL,
  type PocketsphinxOptions,
  PocketsphinxRecognizer,
  pocketsphinxUnavailable,
} from './pocketsphinx.js';
export type { Recognition, RecognitionHints, Recognizer } from './recognizer.js';
export * from './scripted-llm.js';
export * from './simulated-caller.js';
export { CallerSpeech, type TranscriptionEvent } from './speech-endpoints.js';
export {
  type RecognizerName,
  type SpeechServer,
  type SpeechServerOptions,
  startSpeechServer,
} from './speech-server.js';
export * from './virtual-clock.js';
export { FLITE_VOICES, parseVoice, speak, type Voice, voiceLabel } from './voices.js';
