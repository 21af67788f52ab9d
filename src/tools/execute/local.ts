/**
 * The unsandboxed local shell: real `bash -c` processes on this machine, in one directory.
 * Off unless the app opts in with `dangerouslyAllowUnsandboxed: true`: a model (or whoever
 * steers it through what the caller says) could then run anything this process may run.
 * Bounded all the same: a time limit (the whole process group is killed) and an output cap.
 */
import { spawn } from 'node:child_process';
import { type Clock, systemClock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_BYTES,
  type ExecOptions,
  type ExecResult,
  positiveOption,
} from './bash.js';

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
  clock?: Clock;
}

/** A local, unsandboxed shell (see the module comment). */
export class LocalShell {
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly #env: Record<string, string>;
  readonly #clock: Clock;

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
    this.cwd = options.cwd;
    this.timeoutMs = positiveOption('timeoutMs', options.timeoutMs, DEFAULT_EXEC_TIMEOUT_MS);
    this.maxOutputBytes = positiveOption(
      'maxOutputBytes',
      options.maxOutputBytes,
      DEFAULT_MAX_OUTPUT_BYTES,
    );
    this.#env = options.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.cwd };
    this.#clock = options.clock ?? systemClock;
  }

  /** Runs `bash -c script`; resolves with its output. */
  exec(script: string, options: ExecOptions = {}): Promise<ExecResult> {
    const began = performance.now();
    return new Promise((resolve) => {
      const child = spawn('bash', ['-c', script, 'bash', ...(options.args ?? [])], {
        cwd: options.cwd && options.cwd !== '/' ? options.cwd : this.cwd,
        env: { ...this.#env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      const chunks: { out: Buffer[]; err: Buffer[] } = { out: [], err: [] };
      let kept = 0;
      let dropped = 0;
      let stopped: ExecResult['stopped'];
      const collect = (into: Buffer[]) => (buf: Buffer) => {
        const room = this.maxOutputBytes - kept;
        if (room <= 0) dropped += buf.length;
        else {
          const piece = buf.length <= room ? buf : buf.subarray(0, room);
          into.push(piece);
          kept += piece.length;
          dropped += buf.length - piece.length;
        }
      };
      child.stdout.on('data', collect(chunks.out));
      child.stderr.on('data', collect(chunks.err));
      const kill = (why: 'timeout' | 'cancelled') => {
        stopped = why;
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const timer = this.#clock.setTimer(this.timeoutMs, () => kill('timeout'));
      const onAbort = () => kill('cancelled');
      options.signal?.addEventListener('abort', onAbort, { once: true });
      options.onStarted?.();
      child.on('close', (code) => {
        timer.cancel();
        options.signal?.removeEventListener('abort', onAbort);
        let stderr = Buffer.concat(chunks.err).toString('utf8');
        if (stopped === 'timeout') {
          stderr += `bash: stopped after ${this.timeoutMs} ms: the time limit for one command\n`;
        }
        resolve({
          stdout: Buffer.concat(chunks.out).toString('utf8'),
          stderr,
          exitCode: stopped ? (stopped === 'timeout' ? 124 : 130) : (code ?? 1),
          durationMs: performance.now() - began,
          ...(dropped ? { droppedBytes: dropped } : {}),
          ...(stopped ? { stopped } : {}),
        });
      });
      child.on('error', (err) => {
        timer.cancel();
        resolve({
          stdout: '',
          stderr: `bash: ${err.message}\n`,
          exitCode: 127,
          durationMs: performance.now() - began,
        });
      });
    });
  }

  /** Nothing to release; present so every shell closes the same way. */
  async close(): Promise<void> {}
}
