/** Stable machine-readable codes for every error taskline raises. */
export type TasklineErrorCode =
  | 'invalid_argument'
  | 'invalid_state'
  | 'not_found'
  | 'timeout'
  | 'cancelled'
  | 'script_exhausted'
  | 'script_mismatch'
  | 'expectation_failed'
  | 'session_closed'
  | 'limit_exceeded'
  | 'conflict'
  | 'missing_dependency'
  | 'call_failed'
  /** A model call failed (before, during or after streaming); nothing it said was used. */
  | 'model_error'
  | 'invalid_scenario'
  /** A flow document (YAML/JSON) that cannot be loaded: its message starts with file:line. */
  | 'invalid_flow';

/**
 * The one error class taskline throws: a stable `code` to branch on and a message that
 * says what to do about it.
 */
export class TasklineError extends Error {
  readonly code: TasklineErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: TasklineErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'TasklineError';
    this.code = code;
    this.details = details;
  }
}

/** True when `err` is a TasklineError, optionally with the given code. */
export function isTasklineError(err: unknown, code?: TasklineErrorCode): err is TasklineError {
  return err instanceof TasklineError && (code === undefined || err.code === code);
}
