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
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { encodeWav, espeakUnavailable } from '../../../src/testing/espeak.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../../src/testing/openai-server.js';
import { speechEndpoints } from '../../../src/testing/speech-endpoints.js';
import { type CallerOptions, TestCaller } from './caller.js';
import { CodecSurvivingOracle } from './fingerprint.js';
import type { SharedLiveKit } from './global-setup.js';
import { type SuiteRedis, startRedis } from './redis.js';
import {
  E2E_DIR,
  type LiveKitServer,
  ownServerPorts,
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
  ownServerPorts,
  PORTS,
  type ServerPorts,
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
  /** True when the file uses the suite's shared server (false: a server of its own). */
  readonly shared: boolean;
  /** The suite's own Redis the server routes through (host:port), when it does. */
  readonly redis: string | undefined;
  /** The local OpenAI-compatible speech server the workers' STT and TTS talk to. */
  readonly speech: FakeOpenAIServer;
  /** The ears of the speech server: callers register what they say with it. */
  readonly oracle: CodecSurvivingOracle;
  readonly rooms: RoomServiceClient;
  readonly dispatches: AgentDispatchClient;
  /**
   * Starts a worker for this file (stopped after it); speech URL in its environment. On
   * the shared server its agent name gets this file's suffix, so no other file's dispatch
   * reaches it; {@link call}, {@link dispatch} and {@link agentName} map the name given here.
   */
  worker(options: WorkerOptions): Promise<Worker>;
  /** The agent name a worker started as `agentName` registered under (see {@link worker}). */
  agentName(agentName: string): string;
  /** Sends `agentName` into `room` (created if needed); resolves the dispatch id. */
  dispatch(room: string, agentName: string, metadata?: string): Promise<string>;
  /**
   * A caller in a fresh room named `room`, and `agentName` dispatched to them; resolves once
   * the agent joined the room.
   */
  call(room: string, agentName: string, caller: CallerOptions): Promise<TestCaller>;
  /** Kills the server (SIGKILL): the server going away. Only a file's own server. */
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

/** Options for {@link liveKitSuite}. */
export interface LiveKitSuiteOptions extends Omit<ServerStartOptions, 'redis'> {
  /**
   * The file makes SIP calls: its server routes through a Redis of the suite's own, for
   * livekit-sip (the shared server does when a SIP call can be made here; a file's own
   * server gets a Redis of its own, started and stopped with it).
   */
  sip?: boolean;
  /**
   * Start a server for this file only, beside the shared one (a file that kills its
   * server). Implied by `webhooks` and `ports`.
   */
  ownServer?: boolean;
}

/** The shared server as a file sees it: it cannot stop or kill it. */
function sharedServer(shared: SharedLiveKit): LiveKitServer {
  const refuse = async () => {
    throw new Error(
      "the suite's shared livekit-server is stopped by its global setup: use liveKitSuite({ ownServer: true }) for a server a file may stop or kill",
    );
  };
  const { url, httpUrl, apiKey, apiSecret, pid, log } = shared;
  return { url, httpUrl, apiKey, apiSecret, pid, log, stop: refuse, kill: refuse };
}

/**
 * Gives the file's tests a LiveKit server and starts the speech server before them; stops
 * the file's workers, callers and speech server (and its own server) after. Call at the
 * top of a suite file that is not skipped. The file uses the suite's shared server (started
 * once by tests/e2e/harness/global-setup.ts, through Redis for livekit-sip) unless it asks
 * for its own (`ownServer`, `webhooks`, `ports`) or runs without the global setup; its own
 * server takes free ports beside the shared one's (ownServerPorts), and with `sip` it routes
 * through a Redis of its own (harness/redis.ts).
 */
export function liveKitSuite(options: LiveKitSuiteOptions = {}): LiveKitSuite {
  const workers: Worker[] = [];
  const callers: TestCaller[] = [];
  const names = new Map<string, string>();
  const oracle = new CodecSurvivingOracle();
  const provided = inject('liveKitShared');
  const own =
    !provided ||
    options.ownServer === true ||
    (options.webhooks?.length ?? 0) > 0 ||
    options.ports !== undefined ||
    (options.sip === true && provided.redis === undefined);
  const shared = own ? undefined : provided;
  let serverOptions: ServerStartOptions | undefined;
  let redis: SuiteRedis | undefined;
  let server: LiveKitServer | undefined = shared ? sharedServer(shared) : undefined;
  let speech: FakeOpenAIServer | undefined;
  let rooms: RoomServiceClient | undefined;
  let dispatches: AgentDispatchClient | undefined;

  const startOwn = async () => {
    const binary = serverBinary();
    if ('missing' in binary) throw new Error(binary.missing);
    if (options.sip) redis ??= await startRedis();
    // Beside the shared server, ports of its own (kept for a restart after a crash).
    const { ownServer: _own, sip: _sip, ...start } = options;
    serverOptions ??= {
      ...start,
      redis: redis?.address,
      ports: options.ports ?? (provided ? await ownServerPorts() : undefined),
    };
    server = await startLiveKitServer(binary.path, serverOptions);
  };

  beforeAll(async () => {
    if (!server) await startOwn();
    const s = server!;
    speech = await startFakeOpenAI([], { extraRoutes: speechEndpoints({ recognizer: oracle }) });
    rooms = new RoomServiceClient(s.httpUrl, s.apiKey, s.apiSecret);
    dispatches = new AgentDispatchClient(s.httpUrl, s.apiKey, s.apiSecret);
  }, 60_000);

  afterAll(async () => {
    // What the ears heard, with every match score: the first thing to read when a call failed.
    // A segment heard as nothing is kept as a WAV beside them, to be listened to.
    mkdirSync(E2E_DIR, { recursive: true });
    const file = basename(expect.getState().testPath ?? 'suite');
    const hearings = oracle.hearings.map(({ missed, ...hearing }, i) => {
      if (!missed) return hearing;
      const wav = `missed-${file}-${i}.wav`;
      writeFileSync(join(E2E_DIR, wav), encodeWav(missed));
      return { ...hearing, wav };
    });
    writeFileSync(join(E2E_DIR, `hearings-${file}.json`), JSON.stringify(hearings, null, 2));
    for (const c of callers.splice(0)) await c.leave().catch(() => undefined);
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await speech?.close();
    if (!shared) await server?.stop();
    await redis?.stop();
  }, 60_000);

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not running (beforeAll failed)`);
    return value;
  };
  const nameOf = (agentName: string) => names.get(agentName) ?? agentName;

  const suite: LiveKitSuite = {
    get server() {
      return need(server, 'livekit-server');
    },
    shared: shared !== undefined,
    get redis() {
      return shared ? (shared.redis ?? undefined) : redis?.address;
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
    async worker(workerOptions) {
      // On the shared server, a name of this file's own: another file's dispatch of the
      // same example must not reach this file's worker (its ears are in this process).
      const agentName = shared
        ? `${workerOptions.agentName}-f${process.pid}`
        : workerOptions.agentName;
      names.set(workerOptions.agentName, agentName);
      const worker = await startWorker(suite.server, {
        ...workerOptions,
        agentName,
        env: {
          TASKLINE_E2E_SPEECH_URL: suite.speech.url,
          TASKLINE_E2E_AGENT_NAME: agentName,
          ...workerOptions.env,
        },
      });
      workers.push(worker);
      return worker;
    },
    agentName: nameOf,
    async dispatch(room, agentName, metadata) {
      const dispatch = await suite.dispatches.createDispatch(room, nameOf(agentName), {
        metadata,
      });
      return dispatch.id;
    },
    async call(room, agentName, callerOptions) {
      const caller = await TestCaller.join(suite.server, room, callerOptions, oracle);
      callers.push(caller);
      await suite.dispatch(room, agentName);
      // The worker has a job process ready (startWorker waits for it): the agent joins once
      // that process connected and started its session. A bound for a busy machine.
      await caller.participant(/^agent-/, true, 120_000);
      return caller;
    },
    async crashServer() {
      await suite.server.kill();
    },
    async restartServer() {
      if (shared) await suite.server.stop(); // refuses, with the reason
      await startOwn();
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
