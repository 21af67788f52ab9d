/**
 * The real-server e2e harness, reusable by every suite that needs a LiveKit server in the
 * loop: `liveKitSuite()` starts the server (scripts/livekit-tools.sh builds it) and the local
 * speech server for the file, `startWorker` runs agent workers as child processes,
 * `dispatch` sends an agent into a room by name (explicit dispatch, livekit-server-sdk),
 * and `call` puts a test caller in a fresh room and dispatches the agent to them.
 *
 * When the server is not built, the file's suites skip with how to build it — except under
 * CI=true, where that fails the run.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AgentDispatchClient, RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect } from 'vitest';
import { espeakUnavailable } from '../../../src/testing/espeak.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../../src/testing/openai-server.js';
import { speechEndpoints } from '../../../src/testing/speech-endpoints.js';
import { type CallerOptions, TestCaller } from './caller.js';
import { CodecSurvivingOracle } from './fingerprint.js';
import {
  E2E_DIR,
  type LiveKitServer,
  type ServerStartOptions,
  serverBinary,
  startLiveKitServer,
} from './server.js';
import { startWorker, type Worker, type WorkerOptions } from './workers.js';

export { type AgentLine, type CallerOptions, TestCaller } from './caller.js';
export { CodecSurvivingOracle } from './fingerprint.js';
export {
  DEV_KEYS,
  E2E_DIR,
  type LiveKitServer,
  PORTS,
  type ServerStartOptions,
  startLiveKitServer,
} from './server.js';
export { type CallResult, startWorker, type Worker } from './workers.js';

/** Why the e2e suite cannot run here (a sentence saying how to fix it), or undefined. */
export async function liveKitUnavailable(): Promise<string | undefined> {
  const binary = serverBinary();
  const problem = 'missing' in binary ? binary.missing : await espeakUnavailable();
  if (!problem) return undefined;
  if (process.env.CI === 'true') {
    throw new Error(`CI=true and the LiveKit e2e suite cannot run: ${problem}`);
  }
  console.warn(`[skipped: needs a LiveKit server] ${problem}`);
  return problem;
}

/** What a suite file gets from {@link liveKitSuite}. */
export interface LiveKitSuite {
  readonly server: LiveKitServer;
  /** The local OpenAI-compatible speech server the workers' STT and TTS talk to. */
  readonly speech: FakeOpenAIServer;
  /** The ears of the speech server: callers register what they say with it. */
  readonly oracle: CodecSurvivingOracle;
  readonly rooms: RoomServiceClient;
  readonly dispatches: AgentDispatchClient;
  /** Starts a worker for this file (stopped after it); speech URL in its environment. */
  worker(options: WorkerOptions): Promise<Worker>;
  /** Sends `agentName` into `room` (created if needed); resolves the dispatch id. */
  dispatch(room: string, agentName: string, metadata?: string): Promise<string>;
  /**
   * A caller in a fresh room named `room`, and `agentName` dispatched to them; resolves once
   * the agent joined the room.
   */
  call(room: string, agentName: string, caller: CallerOptions): Promise<TestCaller>;
  /** Kills the server (SIGKILL) and starts a new one on the same ports (the server going away). */
  crashServer(): Promise<void>;
  /** Starts the server again after {@link crashServer} killed it (same ports, same keys). */
  restartServer(): Promise<void>;
  /** Joins `room` as a hidden observer that reads what the agent says. */
  observe(room: string): Promise<TestCaller>;
  /** Whether the server still has `room`. */
  roomExists(room: string): Promise<boolean>;
  /** Waits (bounded) until the server no longer has `room`. */
  roomGone(room: string, timeoutMs?: number): Promise<void>;
}

/**
 * Starts the server and the speech server before the file's tests and stops them (and the
 * file's workers and callers) after. Call at the top of a suite file that is not skipped.
 * `redis` routes the server through Redis (for livekit-sip); `webhooks` are URLs it posts
 * its webhooks to.
 */
export function liveKitSuite(options: ServerStartOptions = {}): LiveKitSuite {
  const workers: Worker[] = [];
  const callers: TestCaller[] = [];
  const oracle = new CodecSurvivingOracle();
  let server: LiveKitServer | undefined;
  let speech: FakeOpenAIServer | undefined;
  let rooms: RoomServiceClient | undefined;
  let dispatches: AgentDispatchClient | undefined;

  beforeAll(async () => {
    const binary = serverBinary();
    if ('missing' in binary) throw new Error(binary.missing);
    server = await startLiveKitServer(binary.path, options);
    speech = await startFakeOpenAI([], { extraRoutes: speechEndpoints({ recognizer: oracle }) });
    rooms = new RoomServiceClient(server.httpUrl, server.apiKey, server.apiSecret);
    dispatches = new AgentDispatchClient(server.httpUrl, server.apiKey, server.apiSecret);
  }, 60_000);

  afterAll(async () => {
    // What the ears heard, with every match score: the first thing to read when a call failed.
    mkdirSync(E2E_DIR, { recursive: true });
    writeFileSync(
      join(E2E_DIR, `hearings-${basename(expect.getState().testPath ?? 'suite')}.json`),
      JSON.stringify(oracle.hearings, null, 2),
    );
    for (const c of callers.splice(0)) await c.leave().catch(() => undefined);
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await speech?.close();
    await server?.stop();
  }, 60_000);

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not running (beforeAll failed)`);
    return value;
  };

  const suite: LiveKitSuite = {
    get server() {
      return need(server, 'livekit-server');
    },
    get speech() {
      return need(speech, 'the speech server');
    },
    oracle,
    get rooms() {
      return need(rooms, 'livekit-server');
    },
    get dispatches() {
      return need(dispatches, 'livekit-server');
    },
    async worker(options) {
      const worker = await startWorker(suite.server, {
        ...options,
        env: { TASKLINE_E2E_SPEECH_URL: suite.speech.url, ...options.env },
      });
      workers.push(worker);
      return worker;
    },
    async dispatch(room, agentName, metadata) {
      const dispatch = await suite.dispatches.createDispatch(room, agentName, { metadata });
      return dispatch.id;
    },
    async call(room, agentName, options) {
      const caller = await TestCaller.join(suite.server, room, options, oracle);
      callers.push(caller);
      await suite.dispatch(room, agentName);
      // A job process starts per call: slow on a busy machine (loading models), so a wide bound.
      await caller.participant(/^agent-/, true, 180_000);
      return caller;
    },
    async crashServer() {
      await suite.server.kill();
    },
    async restartServer() {
      const binary = serverBinary();
      if ('missing' in binary) throw new Error(binary.missing);
      server = await startLiveKitServer(binary.path, options);
    },
    async observe(room) {
      const observer = await TestCaller.join(
        suite.server,
        room,
        { identity: `observer-${room}`, observe: true },
        oracle,
      );
      callers.push(observer);
      return observer;
    },
    async roomExists(room) {
      const found = await suite.rooms.listRooms([room]);
      return found.some((r) => r.name === room);
    },
    async roomGone(room, timeoutMs = 30_000) {
      // The server has no event for a room's end that a non-participant can wait on; ask it.
      const deadline = Date.now() + timeoutMs;
      while (await suite.roomExists(room)) {
        if (Date.now() > deadline)
          throw new Error(`room ${room} still exists after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
  return suite;
}
