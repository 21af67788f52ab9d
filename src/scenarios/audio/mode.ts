/**
 * Audio mode for scenarios: upstream's real voice pipeline in a session with no room —
 * Silero VAD (bundled model, offline), upstream's openai STT and TTS talking to the local
 * OpenAI-compatible server (espeak-ng speech; a transcription oracle that returns what the
 * caller's audio was synthesised from), turn detection, endpointing and interruptions as
 * upstream runs them, and a caller speaking in real time.
 */
import type { voice } from '@livekit/agents';
import { ensureLogger } from '../../core/log.js';
import { loadOptional } from '../../core/optional.js';
import { TURN_VAD_OPTIONS, useTaskAwareTurns } from '../../tasks/turn-detector.js';
import { espeakUnavailable } from '../../testing/espeak.js';
import { startFakeOpenAI } from '../../testing/openai-server.js';
import { CallerSpeech, speechEndpoints } from '../../testing/speech-endpoints.js';
import type { CallMode } from '../driver.js';
import { AudioDriver, type AudioDriverOptions } from './driver.js';
import { localTts } from './local-tts.js';

/** Why audio mode cannot run here (one sentence), or undefined when it can. */
export async function audioUnavailable(): Promise<string | undefined> {
  const espeak = await espeakUnavailable();
  if (espeak) return espeak;
  for (const [pkg, load] of [
    ['@livekit/agents-plugin-silero', () => import('@livekit/agents-plugin-silero')],
    ['@livekit/agents-plugin-openai', () => import('@livekit/agents-plugin-openai')],
  ] as const) {
    try {
      await load();
    } catch {
      return `${pkg} is not installed (npm install ${pkg}@^1.9.0)`;
    }
  }
  return undefined;
}

/** Options for {@link audioMode}. */
export interface AudioModeOptions extends AudioDriverOptions {
  /** Extra session options (e.g. `turnHandling`), merged over the audio pipeline's. */
  sessionOptions?: Omit<voice.AgentSessionOptions, 'llm'>;
  /**
   * Who ends the caller's turns: `taskline` (default) — task-aware end of turn with
   * taskline's VAD and endpointing settings (docs/latency.md), as the room entry runs;
   * `upstream` — upstream's default VAD and turn settings (a baseline).
   */
  turnTaking?: 'taskline' | 'upstream';
}

/** Starts what audio mode needs (VAD model, local speech server) and returns the mode. */
export async function audioMode(options: AudioModeOptions = {}): Promise<CallMode> {
  ensureLogger();
  const feature = 'audio-mode scenarios (taskline test --audio)';
  const silero = await loadOptional(
    () => import('@livekit/agents-plugin-silero'),
    '@livekit/agents-plugin-silero',
    feature,
  );
  const openai = await loadOptional(
    () => import('@livekit/agents-plugin-openai'),
    '@livekit/agents-plugin-openai',
    feature,
  );
  const taskline = options.turnTaking !== 'upstream';
  const vad = await silero.VAD.load(taskline ? TURN_VAD_OPTIONS : {});
  const callerSpeech = new CallerSpeech();
  const server = await startFakeOpenAI([], { extraRoutes: speechEndpoints({ callerSpeech }) });
  const { sessionOptions, turnTaking: _turnTaking, ...driverOptions } = options;
  return {
    name: 'audio',
    async sessionOptions() {
      return {
        vad,
        stt: new openai.STT({
          useRealtime: false,
          model: 'whisper-1',
          baseURL: server.url,
          apiKey: 'local',
        }),
        tts: localTts(openai, server.url),
        ...sessionOptions,
      };
    },
    attach(session, callId) {
      // Unless the options chose a turn detector of their own.
      if (taskline && !sessionOptions?.turnHandling?.turnDetection) useTaskAwareTurns(session);
      return new AudioDriver(session, callId, callerSpeech, driverOptions);
    },
    async close() {
      await server.close();
    },
  };
}
