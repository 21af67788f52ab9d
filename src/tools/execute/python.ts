/**
 * The Python sandbox: pyodide (CPython compiled to WebAssembly, with its standard library,
 * offline) in a child process started under Node's permission model (see python-child.ts for
 * what is closed and how). Before each run the workspace files that changed since the last
 * one are copied in, and after it the files the code created, changed or deleted are written
 * back to the backend, so Python, bash and the file tools share one workspace. A run past its
 * time limit is stopped by killing the process; the next run starts a fresh interpreter.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { requireOptional } from '../../core/optional.js';
import { type FileBackend, FileError } from '../files/backend.js';
import { formatBytes } from '../files/backends/limits.js';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  type ExecResult,
  positiveOption,
} from './bash.js';
import { functionSource } from './bash-worker.js';
import {
  PYTHON_RESERVED_DIRS,
  type PythonChildMessage,
  type PythonResultMessage,
  type SyncedFile,
} from './protocol.js';
import { pythonChildMain } from './python-child.js';

/** Default largest workspace copied into the interpreter (32 MiB). */
export const DEFAULT_MAX_SYNC_BYTES = 32 * 1024 * 1024;
/** Default time the interpreter may take to load. */
export const DEFAULT_PYTHON_START_TIMEOUT_MS = 60_000;

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
export interface PythonRunResult extends ExecResult {
  /** Workspace paths the run created or changed, saved to the backend. */
  saved: string[];
  /** Workspace paths the run deleted, deleted in the backend too. */
  deleted: string[];
  /** Files that could not be saved, with the reason. */
  notSaved: { path: string; reason: string }[];
}

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

function digest(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('base64');
}

function reservedPath(path: string): boolean {
  return PYTHON_RESERVED_DIRS.some((r) => path === r || path.startsWith(`${r}/`));
}

interface Child {
  process: ChildProcess;
  ready: Promise<void>;
  /** Last lines the process wrote to stderr (Node's own messages), for a crash report. */
  log: string[];
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

interface Waiter {
  id: number;
  onStarted: (() => void) | undefined;
  resolve: (msg: PythonResultMessage | undefined) => void;
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
  readonly #backend: FileBackend;
  readonly #clock: Clock;
  /** Path → digest of what the interpreter holds. */
  readonly #synced = new Map<string, string>();
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
    this.#backend = options.backend;
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
    this.#clock = options.clock ?? systemClock;
  }

  /** Loads the interpreter now (a run loads it otherwise), so the first run is fast. */
  async warm(): Promise<void> {
    const child = this.#ensureChild();
    hold(child, true);
    try {
      await child.ready;
    } finally {
      hold(child, false);
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
    const empty = { saved: [], deleted: [], notSaved: [] };
    const child = this.#ensureChild();
    hold(child, true);
    let stopped: ExecResult['stopped'];
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
    try {
      const loadTimer = this.#clock.setTimer(this.startTimeoutMs, () => stop('timeout'));
      try {
        await child.ready;
      } finally {
        loadTimer.cancel();
      }
      loaded = true;
      const sync = await this.#syncIn();
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
      const result = new Promise<PythonResultMessage | undefined>((resolve) => {
        this.#waiter = { id, onStarted: options.onStarted, resolve };
      });
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
      const msg = await result;
      if (!msg) return this.#stoppedResult(stopped ?? 'cancelled', began, empty, false);
      const files = await this.#syncOut(msg);
      return {
        stdout: msg.stdout,
        stderr: msg.stderr,
        exitCode: msg.exitCode,
        ...(msg.droppedBytes ? { droppedBytes: msg.droppedBytes } : {}),
        durationMs: performance.now() - began,
        ...files,
      };
    } catch (err) {
      if (stopped) return this.#stoppedResult(stopped, began, empty, !loaded);
      throw err;
    } finally {
      timer?.cancel();
      options.signal?.removeEventListener('abort', onAbort);
      hold(child, false);
    }
  }

  #stoppedResult(
    why: 'timeout' | 'cancelled',
    began: number,
    empty: Pick<PythonRunResult, 'saved' | 'deleted' | 'notSaved'>,
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

  /** The workspace changes the interpreter has not seen yet. */
  async #syncIn(): Promise<{ put: SyncedFile[]; remove: string[] } | { error: string }> {
    let files: { path: string; size?: number }[];
    try {
      files = (await this.#backend.glob('**/*', '/')).filter((f) => !f.isDir);
    } catch (err) {
      if (err instanceof FileError && err.code === 'not_found') files = [];
      else throw err;
    }
    const put: SyncedFile[] = [];
    const present = new Set<string>();
    let total = 0;
    for (const f of files) {
      if (reservedPath(f.path)) continue;
      total += f.size ?? 0;
      if (total > this.maxSyncBytes) {
        return {
          error:
            `python: the workspace holds more than ${formatBytes(this.maxSyncBytes)}, the most ` +
            'copied into Python; delete files you no longer need (large_tool_results, old drafts)',
        };
      }
      let content: string;
      try {
        content = await this.#backend.read(f.path);
      } catch (err) {
        if (err instanceof FileError) continue; // unreadable here (too large, binary): not synced
        throw err;
      }
      present.add(f.path);
      const d = digest(content);
      if (this.#synced.get(f.path) === d) continue;
      this.#synced.set(f.path, d);
      put.push({ path: f.path, content });
    }
    const remove = [...this.#synced.keys()].filter((p) => !present.has(p));
    for (const p of remove) this.#synced.delete(p);
    return { put, remove };
  }

  /** Writes back what the run changed. */
  async #syncOut(
    msg: PythonResultMessage,
  ): Promise<Pick<PythonRunResult, 'saved' | 'deleted' | 'notSaved'>> {
    const saved: string[] = [];
    const deleted: string[] = [];
    const notSaved: { path: string; reason: string }[] = [];
    for (const f of msg.changed) {
      if (f.binary || f.content === undefined) {
        notSaved.push({ path: f.path, reason: 'binary: only UTF-8 text files can be saved' });
        this.#synced.delete(f.path);
        continue;
      }
      try {
        await this.#backend.write(f.path, f.content);
        this.#synced.set(f.path, digest(f.content));
        saved.push(f.path);
      } catch (err) {
        if (!(err instanceof FileError)) throw err;
        notSaved.push({ path: f.path, reason: `${err.code}: ${err.message}` });
        this.#synced.delete(f.path);
      }
    }
    for (const path of msg.removed) {
      this.#synced.delete(path);
      try {
        await this.#backend.delete(path);
        deleted.push(path);
      } catch (err) {
        if (!(err instanceof FileError)) throw err;
        if (err.code !== 'not_found')
          notSaved.push({ path, reason: `${err.code}: ${err.message}` });
      }
    }
    return { saved, deleted, notSaved };
  }

  #ensureChild(): Child {
    if (this.#child) return this.#child;
    const entry = resolvePyodide();
    const log: string[] = [];
    const proc = spawn(
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
      {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: { TASKLINE_PYODIDE: entry },
        serialization: 'advanced',
      },
    );
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      log.push(chunk);
      if (log.length > 20) log.shift();
    });
    this.coldStarts++;
    this.#synced.clear();
    let settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    ready.catch(() => undefined);
    const child: Child = { process: proc, ready, log };
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
        const waiter = this.#waiter;
        if (waiter?.id !== msg.id) return;
        this.#waiter = undefined;
        waiter.resolve(msg);
      }
    });
    proc.on('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      settle?.reject(
        new TasklineError(
          'call_failed',
          `The Python sandbox exited while loading (${signal ?? `code ${code}`}): ${log.join('').slice(-500)}`,
        ),
      );
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter?.resolve(undefined);
    });
    proc.on('error', () => undefined);
    proc.unref();
    (proc.channel as { unref?: () => void } | null | undefined)?.unref?.();
    this.#child = child;
    return child;
  }

  #kill(): void {
    const child = this.#child;
    this.#child = undefined;
    this.#synced.clear();
    child?.process.kill('SIGKILL');
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.resolve(undefined);
  }

  /** Stops the interpreter; later runs are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#kill();
  }
}
