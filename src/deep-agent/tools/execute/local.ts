/**
 * The unsandboxed local shell: real `bash -c` processes on this machine, in one directory.
 * Off unless the app opts in with `dangerouslyAllowUnsandboxed: true`: a model (or whoever
 * steers it through what the caller says) could then run anything this process may run.
 *
 * Bounded all the same. A command ends with every process it started: where Linux allows it
 * (root, or unprivileged user namespaces) it runs as PID 1 of its own PID namespace
 * (`unshare`), so when it exits or is killed the kernel ends everything it left behind,
 * `setsid` and double forks included. Elsewhere its process group is killed, and on Linux also
 * every process that carries the run's environment marker or holds its output pipes. The time
 * limit holds whatever the command does: output still held open by a process that could not
 * be ended is cut off, never waited for. `close()` ends the commands in flight and returns.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:os';
import { type Clock, systemClock } from '../../../core/clock.js';
import { TasklineError } from '../../../core/errors.js';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  type ExecOptions,
  type ExecResult,
  positiveOption,
} from './bash.js';
import {
  killGroup,
  killMarked,
  type LocalContainment,
  pipeOf,
  probeNamespace,
  RUN_MARKER,
} from './processes.js';

export type { LocalContainment } from './processes.js';

/** Time output may stay open once a command's processes were ended, before it is cut off. */
const DRAIN_MS = 1_000;

/** Options for {@link LocalShell}. */
export interface LocalShellOptions {
  /** Directory the commands run in. */
  cwd: string;
  /** Must be `true`: the commands are real processes with this process's rights. */
  dangerouslyAllowUnsandboxed: boolean;
  /** Time one command may run (default 30 s). */
  timeoutMs?: number;
  /** Most output bytes kept (default 1 MiB; the rest is counted and dropped). */
  maxOutputBytes?: number;
  /** Environment of the commands (default: only PATH and HOME=cwd). */
  env?: Record<string, string>;
  /**
   * How a command's processes are held together so all of them end with it: `'auto'`
   * (default) uses a PID namespace where this machine allows one and the process group
   * otherwise; `'pid-namespace'` refuses to run without one (`missing_dependency`).
   */
  containment?: 'auto' | LocalContainment;
  clock?: Clock;
}

/** One command in flight. */
interface Run {
  stop(why: 'timeout' | 'cancelled'): void;
  done: Promise<ExecResult>;
}

/** A local, unsandboxed shell (see the module comment). */
export class LocalShell {
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly #env: Record<string, string>;
  readonly #clock: Clock;
  readonly #want: 'auto' | LocalContainment;
  readonly #running = new Set<Run>();
  #probe: Promise<string[] | undefined> | undefined;
  #closed = false;

  constructor(options: LocalShellOptions) {
    if (options?.dangerouslyAllowUnsandboxed !== true) {
      throw new TasklineError(
        'invalid_argument',
        'A local shell runs real commands on this machine with no sandbox: anything the model ' +
          'is talked into runs with your process rights. Use the sandboxed shell (just-bash), or ' +
          'opt in explicitly with { local: { cwd, dangerouslyAllowUnsandboxed: true } }.',
      );
    }
    if (typeof options.cwd !== 'string' || options.cwd === '') {
      throw new TasklineError('invalid_argument', 'A local shell needs a cwd (a directory).');
    }
    const want = options.containment ?? 'auto';
    if (!['auto', 'pid-namespace', 'process-group'].includes(want)) {
      throw new TasklineError(
        'invalid_argument',
        "containment must be 'auto', 'pid-namespace' or 'process-group'.",
      );
    }
    this.cwd = options.cwd;
    this.timeoutMs = positiveOption('timeoutMs', options.timeoutMs, DEFAULT_EXEC_TIMEOUT_MS);
    this.maxOutputBytes = positiveOption(
      'maxOutputBytes',
      options.maxOutputBytes,
      DEFAULT_MAX_OUTPUT_BYTES,
    );
    this.#env = options.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.cwd };
    this.#clock = options.clock ?? systemClock;
    this.#want = want;
  }

  /** How this shell holds a command's processes together (probed once, on first use). */
  async containment(): Promise<LocalContainment> {
    return (await this.#namespace()) ? 'pid-namespace' : 'process-group';
  }

  #namespace(): Promise<string[] | undefined> {
    if (this.#want === 'process-group') return Promise.resolve(undefined);
    this.#probe ??= probeNamespace(this.#env);
    return this.#probe;
  }

  /** Runs `bash -c script`; resolves with its output once every process it started has ended. */
  async exec(script: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this.#closed) throw new TasklineError('session_closed', 'This shell is closed.');
    const namespace = await this.#namespace();
    if (!namespace && this.#want === 'pid-namespace') {
      throw new TasklineError(
        'missing_dependency',
        'This machine cannot give a command its own PID namespace (it needs Linux, `unshare` ' +
          "from util-linux, and root or unprivileged user namespaces); use containment: 'auto' " +
          'to fall back to the process group.',
      );
    }
    if (this.#closed) throw new TasklineError('session_closed', 'This shell is closed.');
    const run = this.#start(script, options, namespace);
    this.#running.add(run);
    try {
      return await run.done;
    } finally {
      this.#running.delete(run);
    }
  }

  #start(script: string, options: ExecOptions, namespace: string[] | undefined): Run {
    const began = performance.now();
    const token = randomUUID();
    const bash = ['bash', '-c', script, 'bash', ...(options.args ?? [])];
    const [file, ...args] = namespace ? ['unshare', ...namespace, '--', ...bash] : bash;
    const child = spawn(file as string, args, {
      cwd: options.cwd && options.cwd !== '/' ? options.cwd : this.cwd,
      env: { ...this.#env, ...options.env, [RUN_MARKER]: token },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    // The output pipes: whoever still holds one when the command ends is one of its processes.
    const pipes = new Set<string>();
    for (const fd of [1, 2]) {
      const pipe = child.pid ? pipeOf(child.pid, fd) : undefined;
      if (pipe) pipes.add(pipe);
    }
    const endAll = () => {
      killGroup(child.pid);
      if (!namespace) killMarked(token, pipes);
    };
    let stopped: 'timeout' | 'cancelled' | undefined;
    let stop: (why: 'timeout' | 'cancelled') => void = () => undefined;
    const done = new Promise<ExecResult>((resolve) => {
      const output = this.#collect(child);
      let drain: { cancel(): void } | undefined;
      let exitCode: number | null = null;
      let settled = false;
      const finish = (spawnError?: Error) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        drain?.cancel();
        options.signal?.removeEventListener('abort', onAbort);
        child.stdout?.destroy();
        child.stderr?.destroy();
        let stderr = output.stderr();
        if (spawnError) stderr += `bash: ${spawnError.message}\n`;
        if (stopped === 'timeout') {
          stderr += `bash: stopped after ${this.timeoutMs} ms: the time limit for one command\n`;
        } else if (stopped === 'cancelled') stderr += 'bash: cancelled\n';
        resolve({
          stdout: output.stdout(),
          stderr,
          exitCode: stopped
            ? stopped === 'timeout'
              ? 124
              : 130
            : spawnError
              ? 127
              : (exitCode ?? 1),
          durationMs: performance.now() - began,
          ...(output.dropped() ? { droppedBytes: output.dropped() } : {}),
          ...(stopped ? { stopped } : {}),
        });
      };
      /** Ends every process of the command; its output then closes, or is cut off soon after. */
      const end = () => {
        endAll();
        drain ??= this.#clock.setTimer(DRAIN_MS, () => {
          endAll();
          finish();
        });
      };
      stop = (why) => {
        if (settled || stopped) return;
        stopped = why;
        end();
      };
      const timer = this.#clock.setTimer(this.timeoutMs, () => stop('timeout'));
      const onAbort = () => stop('cancelled');
      options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) stop('cancelled');
      child.on('exit', (code, signal) => {
        exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
        // The command is over: whatever it left running ends with it.
        end();
      });
      child.on('close', () => finish());
      child.on('error', (err) => finish(err));
    });
    options.onStarted?.();
    return { stop: (why) => stop(why), done };
  }

  /** Collects a child's output up to the cap. */
  #collect(child: ChildProcess) {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    const into = (chunks: Buffer[]) => (buf: Buffer) => {
      const room = this.maxOutputBytes - kept;
      if (room <= 0) dropped += buf.length;
      else {
        const piece = buf.length <= room ? buf : buf.subarray(0, room);
        chunks.push(piece);
        kept += piece.length;
        dropped += buf.length - piece.length;
      }
    };
    child.stdout?.on('data', into(out));
    child.stderr?.on('data', into(err));
    return {
      stdout: () => Buffer.concat(out).toString('utf8'),
      stderr: () => Buffer.concat(err).toString('utf8'),
      dropped: () => dropped,
    };
  }

  /** Ends the commands in flight (all their processes) and waits for them; later ones are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running];
    for (const run of running) run.stop('cancelled');
    await Promise.all(running.map((r) => r.done));
  }
}
