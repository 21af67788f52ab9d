import { initializeLogger, log, loggerOptions } from '@livekit/agents';
import { TasklineError } from './errors.js';
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

/**
 * Initialises upstream's logger when nothing has yet (`new voice.AgentSession()` throws
 * "logger not initialized" otherwise): at `LOG_LEVEL`, or silent. An app's own
 * `initializeLogger` call, before or after, wins.
 */
export function ensureLogger(): void {
  if (loggerOptions()) return;
  initializeLogger({ pretty: false, level: logLevelFromEnv() });
}

/** The log levels `LOG_LEVEL` accepts (upstream's pino levels). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * The upstream log level taskline's runners use when they create the logger: `LOG_LEVEL`, or
 * `silent` so logs do not mix with a transcript. An unknown level is an error listing the
 * valid ones.
 */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const level = env.LOG_LEVEL?.trim().toLowerCase();
  if (!level) return 'silent';
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new TasklineError(
      'invalid_argument',
      `LOG_LEVEL=${env.LOG_LEVEL} is not a log level; use one of ${LOG_LEVELS.join(', ')}.`,
    );
  }
  return level;
}
