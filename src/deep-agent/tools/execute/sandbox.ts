/**
 * One agent's code execution: a bash sandbox and a Python sandbox over the same file backend
 * (or, only when explicitly allowed, a local shell), created on first use and closed with the
 * agent. Both are optional peers: asking for one that is not installed fails at once with
 * `missing_dependency`, naming the package to install.
 */
import type { Clock } from '../../../core/clock.js';
import { TasklineError } from '../../../core/errors.js';
import type { FileBackend } from '../files/backend.js';
import { normalizePath } from '../files/paths.js';
import {
  BashSandbox,
  type BashSandboxOptions,
  type ExecOptions,
  type ExecResult,
  resolveJustBash,
} from './bash.js';
import { LocalShell, type LocalShellOptions } from './local.js';
import {
  type PythonRunResult,
  PythonSandbox,
  type PythonSandboxOptions,
  resolvePyodide,
} from './python.js';

/** Options for {@link ExecutionSandbox}. */
export interface ExecutionOptions {
  /** The workspace: the same backend as the file tools'. */
  backend: FileBackend;
  /** The bash sandbox (just-bash): on by default; `false` to leave `execute` out. */
  bash?: boolean | Omit<BashSandboxOptions, 'backend' | 'clock'>;
  /** The Python sandbox (pyodide): on by default; `false` to leave `execute_python` out. */
  python?: boolean | (Omit<PythonSandboxOptions, 'backend' | 'clock'> & { prewarm?: boolean });
  /**
   * An unsandboxed local shell instead of just-bash for `execute`. Refused unless
   * `dangerouslyAllowUnsandboxed: true`.
   */
  local?: Omit<LocalShellOptions, 'clock'>;
  /** Clock of the time limits (default: the wall clock). */
  clock?: Clock;
}

/** The shells one agent runs code in (see the module comment). */
export class ExecutionSandbox {
  readonly backend: FileBackend;
  /** The shell behind `execute`: just-bash, or the local shell when allowed. */
  readonly shell: BashSandbox | LocalShell | undefined;
  readonly python: PythonSandbox | undefined;
  /** Load the Python interpreter when the agent starts (default false). */
  readonly prewarmPython: boolean;

  constructor(options: ExecutionOptions) {
    if (!options || typeof options.backend !== 'object') {
      throw new TasklineError('invalid_argument', 'Execution needs the file backend it works on.');
    }
    this.backend = options.backend;
    const clock = options.clock ? { clock: options.clock } : {};
    if (options.local) {
      this.shell = new LocalShell({ ...options.local, ...clock });
    } else if (options.bash !== false) {
      resolveJustBash();
      this.shell = new BashSandbox({
        ...(typeof options.bash === 'object' ? options.bash : {}),
        backend: options.backend,
        ...clock,
      });
    }
    if (options.python !== false) {
      resolvePyodide();
      const { prewarm, ...rest } = typeof options.python === 'object' ? options.python : {};
      this.python = new PythonSandbox({ ...rest, backend: options.backend, ...clock });
      this.prewarmPython = prewarm === true;
    } else {
      this.prewarmPython = false;
    }
  }

  /** Starts what should be ready before the first call (the Python interpreter if asked). */
  async warm(): Promise<void> {
    if (this.prewarmPython) await this.python?.warm();
  }

  /** Runs a bash script in the shell. */
  exec(script: string, options?: ExecOptions): Promise<ExecResult> {
    if (!this.shell) {
      return Promise.reject(new TasklineError('invalid_state', 'No shell is configured.'));
    }
    return this.shell.exec(script, options);
  }

  /** Runs Python code. */
  runPython(
    code: string,
    options?: { argv?: string[]; cwd?: string; signal?: AbortSignal },
  ): Promise<PythonRunResult> {
    if (!this.python) {
      return Promise.reject(new TasklineError('invalid_state', 'Python is not configured.'));
    }
    return this.python.run(code, options);
  }

  /**
   * Runs a workspace file as a program: `.py` in Python, anything else with bash; `args` are
   * passed as they are (no shell parsing). Used by skills' `run_script`.
   */
  async runFile(
    path: string,
    args: readonly string[],
    signal?: AbortSignal,
  ): Promise<ExecResult | PythonRunResult> {
    const p = normalizePath(path);
    const dir = p.slice(0, p.lastIndexOf('/')) || '/';
    if (p.endsWith('.py')) {
      const code = await this.backend.read(p);
      return this.runPython(code, { argv: [p, ...args], cwd: '/', ...(signal ? { signal } : {}) });
    }
    if (this.shell instanceof LocalShell) {
      throw new TasklineError(
        'invalid_state',
        'Scripts from the workspace do not run on the local shell; use the bash sandbox.',
      );
    }
    return this.exec(`bash '${p.replace(/'/g, `'\\''`)}'`, {
      args: [...args],
      cwd: dir,
      ...(signal ? { signal } : {}),
    });
  }

  /** Stops every sandbox. */
  async close(): Promise<void> {
    await Promise.all([this.shell?.close(), this.python?.close()]);
  }
}
