import { type LogLevel, logLine } from '../../core/log.js';

/** Severity of a delegation log line. */
export type DelegationLogLevel = LogLevel;

/** Writes one delegation log line (PII masked) through upstream's logger. */
export function logDelegation(
  level: DelegationLogLevel,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  logLine('taskline.delegation', level, message, fields);
}

/** An error's message, for logs and stored failure results. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
