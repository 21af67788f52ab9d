/**
 * The recogniser's confidence, read where a transcript enters a capture: a capture's STT node
 * passes every speech event through unchanged and notes each final transcript's confidence on
 * the call (`call.noteConfidence`). Recognisers that give one (Deepgram, Google…) put it on
 * `alternatives[0].confidence`; 0 or absent means "unknown", never "low".
 */
import { ReadableStream } from 'node:stream/web';
import { stt } from '@livekit/agents';
import type { CallContext } from '../core/call.js';

/** Below this confidence a value parsed from speech is read back before it is taken. */
export const DEFAULT_MIN_CONFIDENCE = 0.5;

type SpeechEvents = ReadableStream<stt.SpeechEvent | string>;

/** `events` with each final transcript's confidence noted on `call` (events pass unchanged). */
export function noteConfidences(events: SpeechEvents, call: CallContext): SpeechEvents {
  const reader = events.getReader();
  return new ReadableStream<stt.SpeechEvent | string>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      if (typeof value !== 'string' && value.type === stt.SpeechEventType.FINAL_TRANSCRIPT) {
        const best = value.alternatives?.[0];
        if (best) call.noteConfidence(best.text, best.confidence);
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** True when the recogniser said how sure it was, and it was less sure than `min`. */
export function heardUnsure(confidence: number | undefined, min: number): boolean {
  return confidence !== undefined && confidence < min;
}
