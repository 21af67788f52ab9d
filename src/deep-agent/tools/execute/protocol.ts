/**
 * Messages between a sandbox host (this process's main thread) and the worker or child
 * process that runs the untrusted code. Plain data only (structured clone / IPC).
 */

/** What one run produced, before the host caps and formats it. */
export interface RunOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Bytes of output dropped beyond the collection cap. */
  droppedBytes?: number;
}

/** Host → bash worker: run a script. */
export interface BashExecMessage {
  type: 'exec';
  id: number;
  script: string;
  cwd: string;
  env: Record<string, string>;
  args?: string[];
}

/** Host → worker: the answer to a file-system call. */
export interface FsReplyMessage {
  type: 'fs-result';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { code: string; message: string };
}

/** Worker → host: a file-system call. */
export interface FsCallMessage {
  type: 'fs';
  id: number;
  method: string;
  args: unknown[];
}

/** Worker → host: a run started (the host may now count on it being busy). */
export interface StartedMessage {
  type: 'started';
  id: number;
}

/** Worker → host: a run ended. */
export interface ResultMessage extends RunOutput {
  type: 'result';
  id: number;
}

/** Worker → host: the worker could not start (a missing package, a broken install). */
export interface FatalMessage {
  type: 'fatal';
  message: string;
  code?: string;
}

/** Everything a bash worker sends. */
export type BashWorkerMessage = FsCallMessage | StartedMessage | ResultMessage | FatalMessage;

/** One file moved into or out of the Python sandbox. */
export interface SyncedFile {
  path: string;
  /** UTF-8 text; absent when the file is binary (`binary` is then true). */
  content?: string;
  binary?: boolean;
}

/** Host → Python child: run code (after applying the file changes). */
export interface PythonRunMessage {
  type: 'run';
  id: number;
  code: string;
  /** `sys.argv` for a script run; `['-c']` style otherwise. */
  argv: string[];
  cwd: string;
  put: SyncedFile[];
  remove: string[];
  maxOutputBytes: number;
}

/** Python child → host: the run's output and the files it changed. */
export interface PythonResultMessage extends RunOutput {
  type: 'result';
  id: number;
  changed: SyncedFile[];
  removed: string[];
  /** Files the run left that are not handed back (symbolic links), with the reason. */
  skipped: { path: string; reason: string }[];
  /** Callbacks still scheduled when the code returned (asyncio tasks, timers): cleared. */
  pending: number;
  /** The interpreter failed fatally; it cannot run again. */
  crashed?: string;
  /** The code ended the interpreter itself (`os._exit`); it cannot run again. */
  ended?: boolean;
}

/**
 * Python child → host: after a result, the event loop turned over with the run's work
 * ended. `pending` counts callbacks cleared meanwhile; `resources` names event-loop
 * resources an idle child does not hold (the host replaces such a child).
 */
export interface PythonIdleMessage {
  type: 'idle';
  id: number;
  pending: number;
  resources: string[];
}

/** Python child → host: the interpreter is loaded. */
export interface PythonReadyMessage {
  type: 'ready';
  loadMs: number;
}

/** Everything a Python child sends. */
export type PythonChildMessage =
  | PythonReadyMessage
  | StartedMessage
  | PythonResultMessage
  | PythonIdleMessage
  | FatalMessage;

/** Top-level folders of the Python sandbox that belong to the interpreter, not the workspace. */
export const PYTHON_RESERVED_DIRS = ['/lib', '/dev', '/proc', '/sys'] as const;
