/**
 * Agent workers as child processes, started the way a user starts theirs (`tsx room.ts
 * start`, LIVEKIT_URL / LIVEKIT_API_KEY / LIVEKIT_API_SECRET in the environment), each
 * registered with the suite's server under its agent name. Their stdout and stderr (the
 * worker's and its jobs' logs) are kept line by line, for assertions and in E2E_DIR.
 * `stop()` ends one gracefully, `kill()` with SIGKILL (a crashed worker).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { TransferResult } from '../../../src/telephony/transfer.js';
import { RESULT_PREFIX } from '../workers/session.js';
import { logChild } from './child-log.js';
import { freeTcpPort } from './ports.js';
import type { LiveKitServer } from './server.js';
import { E2E_DIR } from './server.js';
import { waitFor } from './wait.js';

const TSX = resolve('node_modules/.bin/tsx');
let started = 0;

/** A call's typed result, as its worker printed it when the call's session closed. */
export interface CallResult<R = unknown> {
  room: string;
  /** The verified caller number the room entry handed the module (CallSetup.callerNumber). */
  callerNumber?: string;
  reason: string;
  result: R;
  /** The call's transfer, when the bot attempted one (as the room entry saw it). */
  transfer?: TransferResult;
}

/** Options for {@link startWorker}. */
export interface WorkerOptions {
  /** The worker file (tests/e2e/workers/NAME.ts). */
  file: string;
  /** Its agent name (logged by the worker when it registers). */
  agentName: string;
  /** Its health-check port; default: a free port the system picks (upstream's 0 means 8081). */
  port?: number;
  /** More environment (e.g. TASKLINE_E2E_SPEECH_URL, TASKLINE_TRANSFER_MODE). */
  env?: Record<string, string>;
  /** How long to wait for it to register (default 60 s: a loaded machine is slow to load onnx). */
  registerWithinMs?: number;
  /**
   * Job processes it keeps started and initialized ahead of calls (default 1): as many as
   * the calls the file makes to it at once, so no call waits for a process to load.
   */
  idleProcesses?: number;
  /** How long to wait for those processes to be ready (default 180 s: a bound, on a busy machine). */
  readyWithinMs?: number;
}

/** A running worker process. */
export interface Worker {
  readonly pid: number;
  readonly agentName: string;
  /** Every line it printed so far (its jobs' too). */
  readonly lines: string[];
  /** The results its calls printed so far. */
  results<R>(): CallResult<R>[];
  /** Waits for the result of the call in `room` (bounded). */
  result<R>(room: string, timeoutMs?: number): Promise<CallResult<R>>;
  /** Waits until a printed line matches (bounded); resolves the line. */
  line(pattern: RegExp, timeoutMs?: number, from?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL now (a crash); resolves when it exited. */
  kill(): Promise<void>;
  readonly exited: Promise<number | null>;
}

/** Starts a worker process and waits until it registered with the server. */
export async function startWorker(server: LiveKitServer, options: WorkerOptions): Promise<Worker> {
  const logPath = join(E2E_DIR, `worker-${options.agentName}-${process.pid}-${++started}.log`);
  const child: ChildProcess = spawn(TSX, [options.file, 'start', '--log-level', 'debug'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: stopping the worker also reaches the job processes it forked.
    detached: true,
    env: {
      ...process.env,
      LIVEKIT_URL: server.url,
      LIVEKIT_API_KEY: server.apiKey,
      LIVEKIT_API_SECRET: server.apiSecret,
      LOG_LEVEL: 'debug',
      TASKLINE_E2E_WORKER_PORT: String(options.port ?? (await freeTcpPort())),
      TASKLINE_E2E_IDLE_PROCESSES: String(options.idleProcesses ?? 1),
      ...options.env,
    },
  });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  // Kept until its job processes (which print to the same pipes) are gone too.
  logChild(child, logPath, (line) => {
    lines.push(line);
    for (const l of listeners) l();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      for (const l of listeners) l();
      resolve(code);
    }),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;

  const line = (pattern: RegExp, timeoutMs = 30_000, from = 0) =>
    waitFor(
      () => lines.slice(from).find((l) => pattern.test(l)),
      listeners,
      timeoutMs,
      `worker ${options.agentName} to print ${pattern} (log: ${logPath})`,
      () => (alive() ? undefined : `the worker exited (code ${child.exitCode})`),
    );
  const results = <R>() =>
    lines
      .filter((l) => l.startsWith(RESULT_PREFIX))
      .map((l) => JSON.parse(l.slice(RESULT_PREFIX.length)) as CallResult<R>);
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  const worker: Worker = {
    pid: child.pid!,
    agentName: options.agentName,
    lines,
    results,
    result: <R>(room: string, timeoutMs = 60_000) =>
      waitFor(
        () => results<R>().find((r) => r.room === room),
        listeners,
        timeoutMs,
        `the result of the call in room ${room} (log: ${logPath})`,
      ),
    line,
    async stop(graceMs = 10_000) {
      if (!alive()) return;
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      signalGroup('SIGKILL'); // job processes that outlived their worker
    },
    async kill() {
      if (!alive()) return;
      signalGroup('SIGKILL');
      await exited;
    },
    exited,
  };
  try {
    await line(/registered worker/, options.registerWithinMs ?? 60_000);
    // Ready for calls once its job processes have loaded the agent: a call dispatched
    // before that waits for a process to start, which on a busy machine takes tens of seconds.
    const idle = options.idleProcesses ?? 1;
    await waitFor(
      () => lines.filter((l) => l.includes('job runner initialized')).length >= idle || undefined,
      listeners,
      options.readyWithinMs ?? 180_000,
      `worker ${options.agentName} to have ${idle} job process(es) ready (log: ${logPath})`,
      () => (alive() ? undefined : `the worker exited (code ${child.exitCode})`),
    );
  } catch (error) {
    await worker.stop(1_000);
    throw error;
  }
  return worker;
}
