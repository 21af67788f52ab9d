/**
 * A local OpenAI-compatible speech server to start on its own: upstream's real `openai.STT`
 * and `openai.TTS` pointed at it run offline, with the caller heard by a real recogniser
 * (pocketsphinx) or the transcription oracle, and the agent spoken by espeak-ng. Audio mode
 * runs on it; so can a test of a real LiveKit room (`sttOptions` gives the plugin options).
 *
 * ```ts
 * const speech = await startSpeechServer({ recognizer: 'pocketsphinx' });
 * const stt = new openai.STT(speech.sttOptions);   // hears with pocketsphinx
 * …
 * await speech.close();
 * ```
 */
import { startFakeOpenAI } from './openai-server.js';
import { type PocketsphinxOptions, PocketsphinxRecognizer } from './pocketsphinx.js';
import type { Recognizer } from './recognizer.js';
import { CallerSpeech, speechEndpoints, type TranscriptionEvent } from './speech-endpoints.js';

/** The recognisers a speech server can be started with. */
export type RecognizerName = 'oracle' | 'pocketsphinx';

/** Options for {@link startSpeechServer}. */
export interface SpeechServerOptions {
  /**
   * Who hears the caller: `pocketsphinx` (default; a real recogniser), `oracle` (exact words
   * of caller audio registered in `callerSpeech`), or a recogniser of your own.
   */
  recognizer?: RecognizerName | Recognizer;
  /** Options of the pocketsphinx worker. */
  pocketsphinx?: PocketsphinxOptions;
  /** espeak-ng voice of the agent (default "en-us"). */
  agentVoice?: string;
  /** Port on 127.0.0.1 (default: a free one). */
  port?: number;
  /** Called after each transcription with what was heard. */
  onTranscription?: (event: TranscriptionEvent) => void;
  /** Called when a transcription request arrives (with its call id, if any). */
  onTranscriptionStart?: (call: string | undefined) => void;
}

/** A running speech server. */
export interface SpeechServer {
  /** Base URL including `/v1`. */
  url: string;
  /** Options for upstream's `new openai.STT(…)` (transcriptions endpoint, not realtime). */
  sttOptions: { baseURL: string; apiKey: string; model: string; useRealtime: false };
  /** Options for upstream's `new openai.TTS(…)`: 24 kHz PCM from espeak-ng. */
  ttsOptions: { baseURL: string; apiKey: string; model: string };
  /** The recogniser in use. */
  recognizer: Recognizer;
  /** Where caller audio is registered for the oracle (unused by a real recogniser). */
  callerSpeech: CallerSpeech;
  /** Stops the server and the recogniser it started. */
  close(): Promise<void>;
}

/** Starts the speech server (with a warm pocketsphinx worker unless told otherwise). */
export async function startSpeechServer(options: SpeechServerOptions = {}): Promise<SpeechServer> {
  const callerSpeech = new CallerSpeech();
  const choice = options.recognizer ?? 'pocketsphinx';
  const owned = typeof choice === 'string';
  const recognizer: Recognizer =
    choice === 'oracle'
      ? callerSpeech
      : choice === 'pocketsphinx'
        ? await PocketsphinxRecognizer.start(options.pocketsphinx)
        : choice;
  let server: Awaited<ReturnType<typeof startFakeOpenAI>>;
  try {
    server = await startFakeOpenAI([], {
      ...(options.port !== undefined ? { port: options.port } : {}),
      extraRoutes: speechEndpoints({
        callerSpeech,
        recognizer,
        ...(options.agentVoice ? { voice: options.agentVoice } : {}),
        ...(options.onTranscription ? { onTranscription: options.onTranscription } : {}),
        ...(options.onTranscriptionStart
          ? { onTranscriptionStart: options.onTranscriptionStart }
          : {}),
      }),
    });
  } catch (error) {
    if (owned) await recognizer.close();
    throw error;
  }
  return {
    url: server.url,
    sttOptions: { baseURL: server.url, apiKey: 'local', model: 'whisper-1', useRealtime: false },
    ttsOptions: { baseURL: server.url, apiKey: 'local', model: 'tts-1' },
    recognizer,
    callerSpeech,
    async close() {
      await server.close();
      if (owned) await recognizer.close();
    },
  };
}
