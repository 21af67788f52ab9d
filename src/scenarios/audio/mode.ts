/**
 * Audio mode for scenarios: upstream's real voice pipeline in a session with no room —
 * Silero VAD (bundled model, offline), upstream's openai STT and TTS talking to the local
 * OpenAI-compatible speech server, turn detection, endpointing and interruptions as upstream
 * runs them, and a caller speaking in real time over a phone line. The caller is heard by the
 * transcription oracle (exact words of what it synthesised, espeak-ng voice) or by a real
 * recogniser (pocketsphinx, flite voices), with hints per question from the active capture.
 */
import type { voice } from '@livekit/agents';
import { ensureLogger } from '../../core/log.js';
import { loadOptional } from '../../core/optional.js';
import { TURN_VAD_OPTIONS, useTaskAwareTurns } from '../../tasks/turn-detector.js';
import { pocketsphinxUnavailable } from '../../testing/pocketsphinx.js';
import type { TranscriptionEvent } from '../../testing/speech-endpoints.js';
import { type RecognizerName, startSpeechServer } from '../../testing/speech-server.js';
import {
  DEFAULT_REAL_VOICES,
  ESPEAK_VOICE,
  parseVoice,
  type Voice,
  voiceUnavailable,
} from '../../testing/voices.js';
import type { CallMode, ScenarioOfCall } from '../driver.js';
import type { LineSpec } from '../schema.js';
import { AudioDriver, type AudioDriverOptions } from './driver.js';
import { localTts } from './local-tts.js';
import { mergeLine } from './phone-line.js';

/** How audio mode hears and carries the caller (all serialisable: `taskline test` flags). */
export interface AudioHearingOptions {
  /** Who hears the caller: the transcription oracle (default) or pocketsphinx. */
  recognizer?: RecognizerName;
  /**
   * The callers' voices, taken in turn per scenario (a scenario's `voice:` wins). Default:
   * espeak-ng with the oracle, the four flite voices with a real recogniser.
   */
  voices?: readonly Voice[];
  /** The phone line of every call (a scenario's `line:` is merged over it). */
  line?: LineSpec;
  /** Pass what the active capture expects to the recogniser (default true). */
  hints?: boolean;
}

/** Why audio mode cannot run here with `options` (one sentence), or undefined when it can. */
export async function audioUnavailable(
  options: AudioHearingOptions = {},
): Promise<string | undefined> {
  for (const v of [ESPEAK_VOICE, ...voicesOf(options)]) {
    const problem = await voiceUnavailable(v);
    if (problem) return problem;
  }
  if (options.recognizer === 'pocketsphinx') {
    const problem = await pocketsphinxUnavailable();
    if (problem) return problem;
  }
  if (options.line?.noise?.kind === 'babble') {
    const problem = await voiceUnavailable({ engine: 'flite', name: 'slt' });
    if (problem) return `babble noise needs flite: ${problem}`;
  }
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
export interface AudioModeOptions extends AudioDriverOptions, AudioHearingOptions {
  /** Extra session options (e.g. `turnHandling`), merged over the audio pipeline's. */
  sessionOptions?: Omit<voice.AgentSessionOptions, 'llm'>;
  /** Called after each transcription with what the recogniser heard. */
  onTranscription?: (event: TranscriptionEvent) => void;
  /**
   * Who ends the caller's turns: `taskline` (default) — task-aware end of turn with
   * taskline's VAD and endpointing settings (docs/latency.md), as the room entry runs;
   * `upstream` — upstream's default VAD and turn settings (a baseline).
   */
  turnTaking?: 'taskline' | 'upstream';
}

function voicesOf(options: AudioHearingOptions): readonly Voice[] {
  if (options.voices?.length) return options.voices;
  return options.recognizer === 'pocketsphinx' ? DEFAULT_REAL_VOICES : [ESPEAK_VOICE];
}

/** A stable small number for a string (which voice a scenario gets). */
function hashOf(text: string): number {
  let h = 2_166_136_261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16_777_619);
  return h >>> 0;
}

/** Starts what audio mode needs (VAD model, local speech server, recogniser) and returns the mode. */
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
  const recognizer = options.recognizer ?? 'oracle';
  /** The running calls, by id: each hears its own transcriptions (what the agent heard). */
  const calls = new Map<string, AudioDriver>();
  const speech = await startSpeechServer({
    recognizer,
    onTranscriptionStart: (call) => {
      if (call) calls.get(call)?.transcribing(+1);
    },
    onTranscription: (event) => {
      if (event.call) {
        calls.get(event.call)?.transcribed(event);
        calls.get(event.call)?.transcribing(-1);
      }
      options.onTranscription?.(event);
    },
  });
  const voices = voicesOf(options);
  const {
    sessionOptions,
    recognizer: _r,
    voices: _v,
    line,
    hints,
    onTranscription: _t,
    turnTaking: _turns,
    ...driverOptions
  } = options;
  /** Calls run per scenario file, so repeats of one scenario take the voices in turn. */
  const runs = new Map<string, number>();
  return {
    name: 'audio',
    async sessionOptions(callId) {
      const baseURL = callId ? `${speech.url}/calls/${callId}` : speech.url;
      return {
        vad,
        stt: new openai.STT({ ...speech.sttOptions, baseURL }),
        tts: localTts(openai, speech.url),
        ...sessionOptions,
      };
    },
    attach(session, callId, scenario?: ScenarioOfCall) {
      const key = scenario?.file ?? '';
      const run = runs.get(key) ?? 0;
      runs.set(key, run + 1);
      const voice = scenario?.spec.voice
        ? parseVoice(scenario.spec.voice)
        : voices[(hashOf(key) + run) % voices.length]!;
      // Unless the options chose a turn detector of their own.
      if (taskline && !sessionOptions?.turnHandling?.turnDetection) useTaskAwareTurns(session);
      const driver = new AudioDriver(
        session,
        callId,
        {
          voice,
          // The oracle knows only the exact samples it made: it hears over a clean line.
          line: recognizer === 'oracle' ? {} : mergeLine(line, scenario?.spec.line),
          ...(recognizer === 'oracle' ? { oracle: speech.callerSpeech } : {}),
          hints: hints !== false,
          seed: (hashOf(key) + run) | 1,
        },
        driverOptions,
      );
      calls.set(callId, driver);
      driver.onClose(() => calls.delete(callId));
      return driver;
    },
    async close() {
      await speech.close();
    },
  };
}
