import { log } from '@livekit/agents';
import { maskFields, maskPII } from './pii.js';

/** Severity of a taskline log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Writes one log line through upstream's logger, tagged with `component`, with every
 * string passed through {@link maskPII} first, so a card number or a registered secret (a
 * masked PIN) never reaches a log from any part of taskline. Does nothing when the process
 * has no logger yet, so library code never fails on logging.
 */
export function logLine(
  component: string,
  level: LogLevel,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  let logger: ReturnType<typeof log>;
  try {
    logger = log();
  } catch {
    return;
  }
  const record = maskFields({ ...fields, component }) as Record<string, unknown>;
  logger[level](record, maskPII(message));
}
