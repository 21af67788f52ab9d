/**
 * What an example's e2e worker changes about its production worker (room.ts), and nothing
 * more: the model is the example's own scripted stand-in (its demo.ts, as `taskline run`
 * uses with no API key; preemptive generation off, as a turn-keyed script needs), and speech goes through upstream's real openai STT and TTS
 * plugins to the suite's local speech server (espeak-ng voice; ears that survive Opus, see
 * tests/e2e/harness/fingerprint.ts) at TASKLINE_E2E_SPEECH_URL. Silero VAD, RoomIO, the
 * room entry, dispatch and the server are the real ones.
 *
 * Each call's typed result is printed as one `E2E_RESULT {json}` line when its session
 * closes, so the suite reads what a user's code would read from `result()`.
 */
import { type llm, type ServerOptions, type VAD, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import { type CallModule, loadCallDemo } from '../../../src/app/module.js';
import type { RoomAgentOptions } from '../../../src/app/room.js';
import { roomServerOptions } from '../../../src/app/room.js';
import { localTts } from '../../../src/scenarios/audio/local-tts.js';
import { lastTransfer } from '../../../src/telephony/transfer.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';

/** The prefix of the line a worker prints with a call's typed result. */
export const RESULT_PREFIX = 'E2E_RESULT ';

function speechUrl(): string {
  const url = process.env.TASKLINE_E2E_SPEECH_URL;
  if (!url) throw new Error('TASKLINE_E2E_SPEECH_URL is not set: start workers with the harness');
  return url;
}

let vad: Promise<VAD> | undefined;

/**
 * `module` with its demo's scripted model and call builder, and each call's result
 * printed when the call ends.
 */
export async function e2eModule<R>(module: CallModule<R>): Promise<CallModule<R>> {
  const demo = await loadCallDemo(module);
  const createCall = demo.createCall ?? module.createCall;
  return {
    ...module,
    createCall(setup) {
      const call = createCall(setup);
      const session = setup?.session;
      session?.once(voice.AgentSessionEventTypes.Close, (ev) => {
        const result = call.result();
        // The transfer has settled once the session closed (the call ended after it).
        void lastTransfer(session).then((transfer) => {
          const line = {
            room: setup?.room?.name,
            callerNumber: setup?.callerNumber,
            reason: ev.reason,
            result,
            ...(transfer ? { transfer } : {}),
          };
          process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(line)}\n`);
        });
      });
      return call;
    },
  };
}

/**
 * Room-entry options building each call's session as described in this file's header;
 * `model` replaces the demo's scripted model (a worker that needs another stand-in).
 */
export function e2eSessionOptions(
  module: CallModule,
  options: { model?: () => llm.LLM } = {},
): RoomAgentOptions {
  return {
    // Loaded while the job process waits for a job, as roomAgent's own prewarm does.
    prewarm: async () => {
      vad ??= silero.VAD.load();
      await vad;
    },
    createSession: async () => {
      vad ??= silero.VAD.load();
      const model = options.model?.() ?? (await loadCallDemo(module)).createScriptedModel?.();
      if (!model) throw new Error(`${module.name} has no scripted model in its demo`);
      const session = new voice.AgentSession({
        vad: await vad,
        stt: new openai.STT({
          model: 'whisper-1',
          useRealtime: false,
          baseURL: speechUrl(),
          apiKey: 'local',
        }),
        llm: model,
        tts: localTts(openai, speechUrl()),
        // A scripted model answers by turn: a speculative request before the turn is
        // confirmed would take the next turn's step (a real model just answers twice).
        turnHandling: { preemptiveGeneration: { enabled: false } },
      });
      if (model instanceof ScriptedLLM) model.bind(session);
      return session;
    },
  };
}

/** Calls one worker takes before it reports itself full. */
const JOBS_PER_WORKER = 8;

/**
 * How long a job process may take to load the agent before upstream kills it. Upstream's
 * 10 s is a retry loop that never ends on a busy machine: each new process loads the whole
 * module graph through tsx, is killed at 10 s, and the next one starts from zero (seen: 18
 * processes killed in 3 minutes, no call answered). A bound, not an expectation.
 */
const JOB_PROCESS_LOAD_MS = 120_000;

/**
 * The example's worker options (`roomServerOptions`, its agent name) with what a shared,
 * loaded test machine needs: load measured as this worker's share of {@link JOBS_PER_WORKER}
 * calls, not upstream's default (the whole machine's CPU, which on a busy machine reads
 * near 1.0 and makes the server turn every dispatch away — "no servers available"), job
 * processes kept ready (TASKLINE_E2E_IDLE_PROCESSES, default 1) with a load bound that fits
 * the machine, and from the harness its health port and its agent name
 * (TASKLINE_E2E_AGENT_NAME: on the suite's shared server each file's workers have names of
 * their own), and a bound on a job process's prewarm (loading VAD) that a machine shared by
 * many processes meets (upstream's 10 s default times out every process there).
 */
export function e2eServerOptions(fileUrl: string, agentName: string): ServerOptions {
  const options = roomServerOptions(fileUrl, {
    agentName: process.env.TASKLINE_E2E_AGENT_NAME || agentName,
  });
  options.loadFunc = async (server) => Math.min(1, server.activeJobs.length / JOBS_PER_WORKER);
  options.loadThreshold = 1;
  options.numIdleProcesses = Number(process.env.TASKLINE_E2E_IDLE_PROCESSES ?? 1);
  options.initializeProcessTimeout = JOB_PROCESS_LOAD_MS;
  options.host = '127.0.0.1';
  // The harness gives each worker a free port: workers started at once never collide.
  options.port = Number(process.env.TASKLINE_E2E_WORKER_PORT ?? 0) || options.port;
  return options;
}
