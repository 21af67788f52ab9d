/**
 * The bash sandbox: just-bash (a bash interpreter written in TypeScript: no real processes,
 * no network) in a worker thread, its file system being a taskline {@link FileBackend}. The
 * worker is started on the first command and kept for the next ones; a command that runs past
 * its time limit is stopped by just-bash's own deadline, and if that does not answer, by
 * terminating the worker (a fresh one serves the next command).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { type Clock, systemClock } from '../../../core/clock.js';
import { TasklineError } from '../../../core/errors.js';
import { requireOptional } from '../../../core/optional.js';
import type { FileBackend } from '../files/backend.js';
import { BackendFs, callFs, FS_METHODS } from './backend-fs.js';
import { type BashWorkerData, bashWorkerSource } from './bash-worker.js';
import type { BashWorkerMessage, RunOutput } from './protocol.js';

/** Default time one command may run. */
export const DEFAULT_EXEC_TIMEOUT_MS = 30_000;
/** Default cap on the output one command may produce (stdout and stderr together). */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Default most commands (including loop iterations' commands) one exec may run. */
export const DEFAULT_MAX_COMMANDS = 100_000;
/** Time the host gives the sandbox's own deadline before it terminates the sandbox. */
const HARD_STOP_GRACE_MS = 2_000;

/** What a command produced. */
export interface ExecResult extends RunOutput {
  /**
   * Why the run did not end on its own: the host stopped it (its time limit, exit code 124, or
   * a cancellation, 130), or the sandbox itself crashed (exit code 125; the error in `error`).
   */
  stopped?: 'timeout' | 'cancelled' | 'crashed';
  /** The sandbox's own error, when it crashed. */
  error?: string;
  /** Wall time of the command, including a cold start. */
  durationMs: number;
}

/** Options for {@link BashSandbox}. */
export interface BashSandboxOptions {
  /** The files the shell works on (the same as the file tools'). */
  backend: FileBackend;
  /** Time one command may run (default 30 s). */
  timeoutMs?: number;
  /** Most output bytes one command may produce (default 1 MiB; more is an error). */
  maxOutputBytes?: number;
  /** Most commands one exec may run (default 100,000). */
  maxCommandCount?: number;
  /** Clock of the host's hard stop (default: the wall clock). */
  clock?: Clock;
}

/** Options of one {@link BashSandbox.exec}. */
export interface ExecOptions {
  /** Working directory (default "/"). */
  cwd?: string;
  /** Extra arguments for the first command, passed without shell parsing. */
  args?: string[];
  /** Environment additions. */
  env?: Record<string, string>;
  /** Stops the command (the worker is terminated). */
  signal?: AbortSignal;
  /** Called when the sandbox has begun running the command (after a cold start). */
  onStarted?: () => void;
}

let justBashEntry: string | undefined;

/** just-bash's CommonJS entry, or `missing_dependency`. */
export function resolveJustBash(): string {
  justBashEntry ??= requireOptional(
    () => createRequire(import.meta.url).resolve('just-bash'),
    'just-bash',
    'the bash sandbox (execute)',
  );
  return justBashEntry;
}

/** Checks a positive whole-number option. */
export function positiveOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new TasklineError('invalid_argument', `${name} must be a whole number of at least 1.`);
  }
  return value;
}

/** What a command produced, before its duration is added. */
type Outcome = Omit<ExecResult, 'durationMs'>;

interface Running {
  id: number;
  started: boolean;
  onStarted: (() => void) | undefined;
  resolve: (out: Outcome) => void;
  reject: (err: Error) => void;
}

/**
 * A bash sandbox over a file backend (see the module comment). Commands run one at a time;
 * each gets a fresh shell state (variables, functions, working directory) while the files
 * persist in the backend.
 */
export class BashSandbox {
  readonly fs: BackendFs;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly #maxCommands: number;
  readonly #clock: Clock;
  #worker: Worker | undefined;
  /** Workers being terminated (close waits for them). */
  readonly #ending = new Set<Promise<unknown>>();
  #running: Running | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;
  /** Cold starts so far (a stopped command costs the next one a cold start). */
  coldStarts = 0;

  constructor(options: BashSandboxOptions) {
    this.fs = new BackendFs(options.backend);
    this.timeoutMs = positiveOption('timeoutMs', options.timeoutMs, DEFAULT_EXEC_TIMEOUT_MS);
    this.maxOutputBytes = positiveOption(
      'maxOutputBytes',
      options.maxOutputBytes,
      DEFAULT_MAX_OUTPUT_BYTES,
    );
    this.#maxCommands = positiveOption(
      'maxCommandCount',
      options.maxCommandCount,
      DEFAULT_MAX_COMMANDS,
    );
    this.#clock = options.clock ?? systemClock;
  }

  /** Starts the worker now (it starts on the first command otherwise). */
  async warm(): Promise<void> {
    this.#ensureWorker();
  }

  /** Runs a bash script; resolves with its output, never rejects for the script's own errors. */
  exec(script: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.#closed) {
      return Promise.reject(new TasklineError('session_closed', 'This sandbox is closed.'));
    }
    const run = this.#queue.then(() => this.#execNow(script, options));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #execNow(script: string, options: ExecOptions): Promise<ExecResult> {
    const began = performance.now();
    if (options.signal?.aborted) {
      return {
        stdout: '',
        stderr: 'cancelled before it started\n',
        exitCode: 130,
        durationMs: 0,
        stopped: 'cancelled',
      };
    }
    const worker = this.#ensureWorker();
    // Idle workers do not keep the process alive; a running command does.
    worker.ref();
    const id = this.#nextId++;
    const output = new Promise<Outcome>((resolve, reject) => {
      this.#running = { id, started: false, onStarted: options.onStarted, resolve, reject };
    });
    const stop = (why: 'timeout' | 'cancelled') => {
      if (this.#running?.id !== id) return;
      const running = this.#running;
      this.#running = undefined;
      this.#kill();
      running.resolve({
        stdout: '',
        stderr:
          why === 'timeout'
            ? `bash: stopped after ${this.timeoutMs} ms: the time limit for one command\n`
            : 'bash: cancelled\n',
        exitCode: why === 'timeout' ? 124 : 130,
        stopped: why,
      });
    };
    const timer = this.#clock.setTimer(this.timeoutMs + HARD_STOP_GRACE_MS, () => stop('timeout'));
    const onAbort = () => stop('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.postMessage({
      type: 'exec',
      id,
      script,
      cwd: options.cwd ?? '/',
      env: options.env ?? {},
      ...(options.args ? { args: options.args } : {}),
    });
    try {
      const out = await output;
      return { ...out, durationMs: performance.now() - began };
    } finally {
      timer.cancel();
      options.signal?.removeEventListener('abort', onAbort);
      // A worker being terminated stays referenced until it is gone (see #terminate).
      if (this.#worker === worker) worker.unref();
    }
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const data: BashWorkerData = {
      justBash: resolveJustBash(),
      timeoutMs: this.timeoutMs,
      maxOutputBytes: this.maxOutputBytes,
      maxCommandCount: this.#maxCommands,
      fsMethods: FS_METHODS,
    };
    const worker = new Worker(bashWorkerSource(), {
      eval: true,
      workerData: data,
      env: {},
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    this.coldStarts++;
    worker.unref();
    worker.on('message', (msg: BashWorkerMessage) => this.#onMessage(worker, msg));
    worker.on('error', (err) => this.#onExit(worker, err));
    worker.on('exit', () => this.#onExit(worker, undefined));
    this.#worker = worker;
    return worker;
  }

  #onMessage(worker: Worker, msg: BashWorkerMessage): void {
    if (worker !== this.#worker) return;
    if (msg.type === 'fs') {
      callFs(this.fs, msg.method, msg.args).then(
        (value) => {
          if (worker === this.#worker)
            worker.postMessage({ type: 'fs-result', id: msg.id, ok: true, value });
        },
        (err: unknown) => {
          if (worker !== this.#worker) return;
          const e = err as { code?: unknown; message?: unknown };
          worker.postMessage({
            type: 'fs-result',
            id: msg.id,
            ok: false,
            error: {
              code: typeof e?.code === 'string' ? e.code : 'EIO',
              message: typeof e?.message === 'string' ? e.message : 'EIO: input/output error',
            },
          });
        },
      );
      return;
    }
    if (msg.type === 'started') {
      if (this.#running?.id !== msg.id) return;
      this.#running.started = true;
      this.#running.onStarted?.();
      return;
    }
    if (msg.type === 'result') {
      const running = this.#running;
      if (running?.id !== msg.id) return;
      this.#running = undefined;
      running.resolve({ stdout: msg.stdout, stderr: msg.stderr, exitCode: msg.exitCode });
      return;
    }
    if (msg.type === 'fatal') {
      const running = this.#running;
      this.#running = undefined;
      this.#kill();
      running?.reject(
        new TasklineError('call_failed', `The bash sandbox could not start: ${msg.message}`),
      );
    }
  }

  #onExit(worker: Worker, err: Error | undefined): void {
    if (worker !== this.#worker) return;
    this.#worker = undefined;
    const running = this.#running;
    this.#running = undefined;
    const error = err?.message ?? 'the worker exited';
    running?.resolve({
      stdout: '',
      stderr: `bash: the sandbox crashed (${error}); the next command starts a fresh one\n`,
      exitCode: 125,
      stopped: 'crashed',
      error,
    });
  }

  #kill(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) this.#terminate(worker);
  }

  /** Terminates a worker; close() waits for every termination to finish. */
  #terminate(worker: Worker): Promise<unknown> {
    // A pending terminate must keep the event loop alive, or `await close()` never returns.
    worker.ref();
    const ending = worker.terminate().catch(() => undefined);
    this.#ending.add(ending);
    void ending.finally(() => this.#ending.delete(ending));
    return ending;
  }

  /** True while a command is running. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** Stops the worker and waits until it is gone; later commands are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = this.#running;
    this.#running = undefined;
    running?.resolve({
      stdout: '',
      stderr: 'bash: the sandbox was closed\n',
      exitCode: 130,
      stopped: 'cancelled',
    });
    this.#kill();
    await Promise.all([...this.#ending]);
  }
}
