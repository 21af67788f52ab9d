/**
 * The Python sandbox: pyodide (CPython compiled to WebAssembly, with its standard library,
 * offline) in a child process started under Node's permission model (see python-child.ts for
 * what is closed and how). Before each run the workspace files that changed since the last
 * one are copied in, and after it the files the code created, changed or deleted are written
 * back to the backend, so Python, bash and the file tools share one workspace. A run past its
 * time limit is stopped by killing the process; the next run starts a fresh interpreter.
 *
 * A run ends all its work: what it left scheduled is cleared in the child, and a child that is
 * not idle soon after the result is replaced. Memory is capped twice: the interpreter's
 * WebAssembly memory (Python gets a MemoryError past `memoryLimitMb`) and, where the OS
 * enforces it, the whole process's data segment (`ulimit -d`), which also bounds what
 * JavaScript allocates for Python. A crash is its own outcome (`stopped: 'crashed'`, exit code 125, with the error), and
 * the files the run wrote are saved when the interpreter could still hand them back.
 *
 * Over 500 lines: the parent side of one child protocol (start, sync in, run, sync out, stop) reads best in one file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { requireOptional } from '../../core/optional.js';
import type { FileBackend } from '../files/backend.js';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  type ExecResult,
  positiveOption,
} from './bash.js';
import { functionSource } from './bash-worker.js';
import type { PythonChildMessage, PythonIdleMessage, PythonResultMessage } from './protocol.js';
import { pythonChildMain } from './python-child.js';
import { type SyncedFiles as Files, WorkspaceMirror } from './python-sync.js';

/** Default largest workspace copied into the interpreter (32 MiB). */
export const DEFAULT_MAX_SYNC_BYTES = 32 * 1024 * 1024;
/** Default time the interpreter may take to load. */
export const DEFAULT_PYTHON_START_TIMEOUT_MS = 60_000;
/** Default most memory Python's own objects may take (the interpreter's WebAssembly memory). */
export const DEFAULT_PYTHON_MEMORY_LIMIT_MB = 512;
/** What the child's JavaScript side may take on top of Python's memory (its heap is 512 MiB). */
const JS_ALLOWANCE_MB = 1024;
/** Time the child has, once a result is in, to show its event loop is idle. */
const IDLE_GRACE_MS = 5_000;
/** Exit code of a run whose interpreter crashed. */
export const CRASH_EXIT_CODE = 125;

/** Options for {@link PythonSandbox}. */
export interface PythonSandboxOptions {
  /** The workspace (the same backend as the file tools'). */
  backend: FileBackend;
  /** Time one run may take once the interpreter is loaded (default 30 s). */
  timeoutMs?: number;
  /** Time the interpreter may take to load (default 60 s). */
  startTimeoutMs?: number;
  /** Most output bytes kept from one run (default 1 MiB; the rest is counted and dropped). */
  maxOutputBytes?: number;
  /** Largest workspace copied into the interpreter (default 32 MiB). */
  maxSyncBytes?: number;
  /**
   * Most memory Python's objects may take, in MiB (default 512): past it Python raises
   * MemoryError. Where the OS enforces `ulimit -d` (Linux) the child process as a whole is
   * also held to this plus 1 GiB, so memory allocated on the JavaScript side is bounded too.
   */
  memoryLimitMb?: number;
  /** Clock of the time limits (default: the wall clock). */
  clock?: Clock;
}

/** Options of one {@link PythonSandbox.run}. */
export interface PythonRunOptions {
  /** `sys.argv` (default `['-c']`); a script run passes its path first. */
  argv?: string[];
  /** Working directory (default "/"). */
  cwd?: string;
  signal?: AbortSignal;
  /** Called when the interpreter has begun running the code (after a cold start). */
  onStarted?: () => void;
}

/** What a Python run produced, including what happened to the files it wrote. */
export interface PythonRunResult extends ExecResult, Files {}

let pyodideEntry: string | undefined;

/** pyodide's CommonJS entry, or `missing_dependency`. */
export function resolvePyodide(): string {
  pyodideEntry ??= requireOptional(
    () => createRequire(import.meta.url).resolve('pyodide'),
    'pyodide',
    'the Python sandbox (execute_python)',
  );
  return pyodideEntry;
}

/** The permission-model flag of this Node version (renamed in Node 22.13 / 23.5). */
function permissionFlag(): string {
  return process.allowedNodeEnvironmentFlags.has('--permission')
    ? '--permission'
    : '--experimental-permission';
}

/**
 * The command that starts `file args` with its data segment capped (`ulimit -d`, KiB) where a
 * POSIX shell is there to set it; elsewhere it starts as it is.
 */
function dataLimited(file: string, args: string[], kib: number): [string, string[]] {
  if (process.platform === 'win32' || !existsSync('/bin/sh')) return [file, args];
  // A lower limit already in place stays (raising it can fail, and is not wanted anyway).
  const script = 'ulimit -d "$1" 2>/dev/null; shift; exec "$@"';
  return ['/bin/sh', ['-c', script, 'sh', String(kib), file, ...args]];
}

interface Child {
  process: ChildProcess;
  ready: Promise<void>;
  /** Last lines the process wrote to stderr (Node's own messages), for a crash report. */
  log: string[];
  /** Resolves once the process has exited. */
  exited: Promise<void>;
}

/** Keeps the process alive while the child works (`true`), or lets it exit while idle. */
function hold(child: Child, busy: boolean): void {
  const channel = child.process.channel as
    | { ref?: () => void; unref?: () => void }
    | null
    | undefined;
  if (busy) {
    child.process.ref();
    channel?.ref?.();
  } else {
    child.process.unref();
    channel?.unref?.();
  }
}

/** A promise with its resolver. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** One run in flight: `undefined` from either promise means the child is gone. */
interface Waiter {
  id: number;
  onStarted: (() => void) | undefined;
  result: ReturnType<typeof deferred<PythonResultMessage | undefined>>;
  idle: ReturnType<typeof deferred<PythonIdleMessage | undefined>>;
}

/**
 * A Python sandbox over a file backend (see the module comment). Runs happen one at a time;
 * each starts with fresh globals, while the interpreter (and its imported modules) is kept.
 */
export class PythonSandbox {
  readonly timeoutMs: number;
  readonly startTimeoutMs: number;
  readonly maxOutputBytes: number;
  readonly maxSyncBytes: number;
  readonly memoryLimitMb: number;
  readonly #clock: Clock;
  /** What the current interpreter holds of the workspace. */
  readonly #mirror: WorkspaceMirror;
  /** Children started and not yet exited (a killed one exits a moment later). */
  readonly #living = new Set<Child>();
  #child: Child | undefined;
  #waiter: Waiter | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;
  /** Interpreter loads so far. */
  coldStarts = 0;
  /** Load time of the latest interpreter, in ms. */
  lastLoadMs: number | undefined;

  constructor(options: PythonSandboxOptions) {
    this.timeoutMs = positiveOption('timeoutMs', options.timeoutMs, DEFAULT_EXEC_TIMEOUT_MS);
    this.startTimeoutMs = positiveOption(
      'startTimeoutMs',
      options.startTimeoutMs,
      DEFAULT_PYTHON_START_TIMEOUT_MS,
    );
    this.maxOutputBytes = positiveOption(
      'maxOutputBytes',
      options.maxOutputBytes,
      DEFAULT_MAX_OUTPUT_BYTES,
    );
    this.maxSyncBytes = positiveOption(
      'maxSyncBytes',
      options.maxSyncBytes,
      DEFAULT_MAX_SYNC_BYTES,
    );
    this.memoryLimitMb = positiveOption(
      'memoryLimitMb',
      options.memoryLimitMb,
      DEFAULT_PYTHON_MEMORY_LIMIT_MB,
    );
    this.#clock = options.clock ?? systemClock;
    this.#mirror = new WorkspaceMirror(options.backend, this.maxSyncBytes);
  }

  /** Loads the interpreter now (a run loads it otherwise), so the first run is fast. */
  async warm(): Promise<void> {
    if (this.#closed) throw new TasklineError('session_closed', 'This sandbox is closed.');
    const child = this.#ensureChild();
    hold(child, true);
    try {
      await child.ready;
    } finally {
      if (this.#child === child) hold(child, false);
    }
  }

  /** Runs Python code; resolves with its output, never rejects for the code's own errors. */
  run(code: string, options: PythonRunOptions = {}): Promise<PythonRunResult> {
    if (this.#closed) {
      return Promise.reject(new TasklineError('session_closed', 'This sandbox is closed.'));
    }
    const run = this.#queue.then(() => this.#runNow(code, options));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #runNow(code: string, options: PythonRunOptions): Promise<PythonRunResult> {
    const began = performance.now();
    const empty: Files = { saved: [], deleted: [], notSaved: [] };
    if (this.#closed) return this.#stoppedResult('cancelled', began, empty, false);
    const child = this.#ensureChild();
    hold(child, true);
    let stopped: 'timeout' | 'cancelled' | undefined;
    let timer: TimerHandle | undefined;
    const stop = (why: 'timeout' | 'cancelled') => {
      if (this.#child !== child) return;
      stopped = why;
      this.#kill();
    };
    const onAbort = () => stop('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) stop('cancelled');
    let loaded = false;
    let waiter: Waiter | undefined;
    try {
      const loadTimer = this.#clock.setTimer(this.startTimeoutMs, () => stop('timeout'));
      try {
        await child.ready;
      } finally {
        loadTimer.cancel();
      }
      loaded = true;
      const sync = await this.#mirror.changes();
      if ('error' in sync) {
        return {
          stdout: '',
          stderr: `${sync.error}\n`,
          exitCode: 1,
          durationMs: performance.now() - began,
          ...empty,
        };
      }
      if (this.#child !== child)
        return this.#stoppedResult(stopped ?? 'cancelled', began, empty, false);
      const id = this.#nextId++;
      waiter = {
        id,
        onStarted: options.onStarted,
        result: deferred(),
        idle: deferred(),
      };
      this.#waiter = waiter;
      timer = this.#clock.setTimer(this.timeoutMs, () => stop('timeout'));
      child.process.send({
        type: 'run',
        id,
        code,
        argv: options.argv ?? ['-c'],
        cwd: options.cwd ?? '/',
        put: sync.put,
        remove: sync.remove,
        maxOutputBytes: this.maxOutputBytes,
      });
      const msg = await waiter.result.promise;
      timer.cancel();
      if (!msg) {
        if (stopped || this.#closed) {
          return this.#stoppedResult(stopped ?? 'cancelled', began, empty, false);
        }
        return this.#crashedResult(began, this.#exitReason(child), undefined, empty);
      }
      // The code has returned. Its result stands whatever happens next; the child must still
      // show that no work of the run is left before the next run may use it.
      const over = msg.crashed !== undefined || msg.ended === true;
      const idle = over ? undefined : this.#awaitIdle(child, waiter);
      if (over) this.#kill();
      const files = await this.#mirror.writeBack(msg);
      if (msg.crashed) return this.#crashedResult(began, msg.crashed, msg, files);
      const notes: string[] = [];
      const settled = over ? { pending: 0, resources: [] } : await idle;
      const pending = msg.pending + (settled?.pending ?? 0);
      if (pending > 0) {
        notes.push(
          `python: ${pending === 1 ? '1 callback' : `${pending} callbacks`} (asyncio tasks, ` +
            `timers) still scheduled when the code ended ${pending === 1 ? 'was' : 'were'} ` +
            'stopped: work does not outlive a run, and no asyncio event loop runs here',
        );
      }
      if (!settled) {
        if (!stopped && !this.#closed)
          notes.push(
            'python: the code left work running after it ended; the interpreter was stopped ' +
              '(the next run loads a fresh one)',
          );
      } else if (settled.resources.length > 0) {
        this.#retire(child);
        notes.push(
          `python: the run left ${settled.resources.join(', ')} open; the interpreter was ` +
            'replaced (the next run loads a fresh one)',
        );
      }
      const stderr = notes.length ? `${msg.stderr}${notes.join('\n')}\n` : msg.stderr;
      return {
        stdout: msg.stdout,
        stderr,
        exitCode: msg.exitCode,
        ...(msg.droppedBytes ? { droppedBytes: msg.droppedBytes } : {}),
        durationMs: performance.now() - began,
        ...files,
      };
    } catch (err) {
      if (stopped || this.#closed) {
        return this.#stoppedResult(stopped ?? 'cancelled', began, empty, !loaded);
      }
      throw err;
    } finally {
      timer?.cancel();
      options.signal?.removeEventListener('abort', onAbort);
      if (waiter && this.#waiter === waiter) this.#waiter = undefined;
      // A child that was stopped stays referenced until it has exited (close() waits for it).
      if (this.#child === child) hold(child, false);
    }
  }

  /** The child's `idle` for this run, or `undefined` (and the child stopped) past the grace. */
  async #awaitIdle(child: Child, waiter: Waiter): Promise<PythonIdleMessage | undefined> {
    const grace = this.#clock.setTimer(IDLE_GRACE_MS, () => this.#retire(child));
    try {
      return await waiter.idle.promise;
    } finally {
      grace.cancel();
      if (this.#waiter === waiter) this.#waiter = undefined;
    }
  }

  #stoppedResult(
    why: 'timeout' | 'cancelled',
    began: number,
    empty: Files,
    loading: boolean,
  ): PythonRunResult {
    const what = loading
      ? `the Python interpreter did not load within ${this.startTimeoutMs} ms`
      : `stopped after ${this.timeoutMs} ms: the time limit for one run`;
    return {
      stdout: '',
      stderr:
        why === 'timeout'
          ? `python: ${what}; files it wrote were not saved\n`
          : 'python: cancelled; files it wrote were not saved\n',
      exitCode: why === 'timeout' ? 124 : 130,
      stopped: why,
      durationMs: performance.now() - began,
      ...empty,
    };
  }

  /** A run whose interpreter failed: with what it printed and saved when it could tell. */
  #crashedResult(
    began: number,
    error: string,
    msg: PythonResultMessage | undefined,
    files: Files,
  ): PythonRunResult {
    const kept = msg
      ? 'files it wrote before were saved'
      : 'the interpreter process ended, so files it wrote were not saved';
    return {
      stdout: msg?.stdout ?? '',
      stderr:
        `${msg?.stderr ?? ''}python: the interpreter crashed: ${error}; ${kept}; ` +
        'the next run loads a fresh interpreter\n',
      exitCode: CRASH_EXIT_CODE,
      ...(msg?.droppedBytes ? { droppedBytes: msg.droppedBytes } : {}),
      stopped: 'crashed',
      error,
      durationMs: performance.now() - began,
      ...files,
    };
  }

  /** Why a child ended on its own: Node's last message, else its exit code or signal. */
  #exitReason(child: Child): string {
    // Node's fatal messages ("FATAL ERROR: ...", "# Fatal process out of memory: ..."), not
    // the native stack frames ("3: 0x... v8::internal::...") or JavaScript frames after them.
    const lines = child.log
      .join('')
      .split('\n')
      .map((l) => l.replace(/^#\s*/, '').trim())
      .filter((l) => l && !/^(\d+: 0x|at )/.test(l));
    const fatal = lines.filter((l) => /fatal|error|abort|out of memory/i.test(l));
    const { exitCode, signalCode } = child.process;
    const how = signalCode ? `signal ${signalCode}` : `exit code ${exitCode}`;
    const first = fatal[0];
    return first ? `${first.slice(0, 300)} (${how})` : `the process ended (${how})`;
  }

  #ensureChild(): Child {
    if (this.#child) return this.#child;
    const entry = resolvePyodide();
    const log: string[] = [];
    const [file, args] = dataLimited(
      process.execPath,
      [
        permissionFlag(),
        `--allow-fs-read=${dirname(entry)}/*`,
        '--disallow-code-generation-from-strings',
        '--no-warnings',
        '--max-old-space-size=512',
        '-e',
        functionSource(pythonChildMain),
      ],
      (this.memoryLimitMb + JS_ALLOWANCE_MB) * 1024,
    );
    const proc = spawn(file, args, {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: {
        TASKLINE_PYODIDE: entry,
        TASKLINE_PYTHON_MEMORY_BYTES: String(this.memoryLimitMb * 1024 * 1024),
      },
      serialization: 'advanced',
    });
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      log.push(chunk);
      if (log.length > 20) log.shift();
    });
    this.coldStarts++;
    this.#mirror.forget();
    let settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    ready.catch(() => undefined);
    const exited = deferred<void>();
    const child: Child = { process: proc, ready, log, exited: exited.promise };
    this.#living.add(child);
    proc.on('message', (msg: PythonChildMessage) => {
      if (this.#child !== child) return;
      if (msg.type === 'ready') {
        this.lastLoadMs = msg.loadMs;
        settle?.resolve();
      } else if (msg.type === 'fatal') {
        settle?.reject(
          new TasklineError('call_failed', `The Python sandbox could not start: ${msg.message}`),
        );
        this.#kill();
      } else if (msg.type === 'started') {
        if (this.#waiter?.id === msg.id) this.#waiter.onStarted?.();
      } else if (msg.type === 'result') {
        if (this.#waiter?.id === msg.id) this.#waiter.result.resolve(msg);
      } else if (msg.type === 'idle') {
        if (this.#waiter?.id === msg.id) this.#waiter.idle.resolve(msg);
      }
    });
    proc.on('exit', (code, signal) => {
      this.#living.delete(child);
      exited.resolve();
      if (this.#child !== child) return;
      this.#child = undefined;
      this.#mirror.forget();
      settle?.reject(
        new TasklineError(
          'call_failed',
          `The Python sandbox exited while loading (${signal ?? `code ${code}`}): ${log.join('').slice(-500)}`,
        ),
      );
      this.#release();
    });
    proc.on('error', () => undefined);
    proc.unref();
    (proc.channel as { unref?: () => void } | null | undefined)?.unref?.();
    this.#child = child;
    return child;
  }

  /** Ends the waits of the run in flight: its child is gone. */
  #release(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.result.resolve(undefined);
    waiter?.idle.resolve(undefined);
  }

  /** Stops a child that is no longer fit for the next run (the current one, if it is). */
  #retire(child: Child): void {
    if (this.#child === child) this.#kill();
    else {
      child.process.kill('SIGKILL');
      hold(child, true);
    }
  }

  #kill(): void {
    const child = this.#child;
    this.#child = undefined;
    this.#mirror.forget();
    if (child) {
      child.process.kill('SIGKILL');
      hold(child, true);
    }
    this.#release();
  }

  /** Stops the interpreter and waits until its process has exited; later runs are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#kill();
    const living = [...this.#living];
    for (const child of living) {
      child.process.kill('SIGKILL');
      // Waiting on an exit must keep the event loop alive, or `await close()` never returns.
      hold(child, true);
    }
    await Promise.all(living.map((c) => c.exited));
  }
}
