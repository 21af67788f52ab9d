import { log } from '@livekit/agents';

/** Severity of a delegation log line. */
export type DelegationLogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Writes one delegation log line through upstream's logger (component `taskline.delegation`);
 * does nothing when the process has no logger, so library code never fails on logging.
 */
export function logDelegation(
  level: DelegationLogLevel,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  let logger: ReturnType<typeof log>;
  try {
    logger = log();
  } catch {
    return;
  }
  logger[level]({ ...fields, component: 'taskline.delegation' }, message);
}

/** An error's message, for logs and stored failure results. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
