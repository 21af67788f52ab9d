import { initializeLogger, log, loggerOptions } from '@livekit/agents';
import { loggerDestinationKey } from '../upstream/internals.js';
import { TasklineError } from './errors.js';
import { maskFields, maskLogLine, maskPII } from './pii.js';

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
 * "logger not initialized" otherwise): at `LOG_LEVEL`, or silent, masked (see
 * {@link startLogger}). An app's own `initializeLogger` call, before or after, wins.
 */
export function ensureLogger(): void {
  if (loggerOptions()) return;
  startLogger({ level: logLevelFromEnv() });
}

/**
 * Initialises upstream's logger — the one every upstream and taskline line goes through — and
 * masks what it writes: a card number or a registered secret in any field of any line
 * (upstream's own debug lines carry tool arguments and transcripts in `lk.pii.*` fields) is
 * masked on the way out, and while a call collects a secret every `lk.pii.*` field is. Every
 * logger taskline starts is started here.
 */
export function startLogger(options: { level: string; pretty?: boolean }): void {
  initializeLogger({ pretty: options.pretty ?? false, level: options.level });
  maskLogOutput(log());
}

/**
 * Masks the lines of the logger upstream already started in this process (a room worker's job
 * process, whose logger upstream's CLI creates): see {@link maskLogOutput}. Does nothing when no
 * logger exists yet; never throws.
 */
export function maskStartedLogger(): void {
  if (!loggerOptions()) return;
  try {
    maskLogOutput(log());
  } catch {
    // no logger to mask
  }
}

/** Marks a destination already wrapped by {@link maskLogOutput}. */
const MASKED = Symbol.for('taskline.maskedLogDestination');

/** What pino calls on its destination; the rest passes through unchanged. */
interface Destination {
  write(chunk: string): unknown;
}

/**
 * Masks every line a pino logger (upstream's) writes, by wrapping its destination: the
 * logger and all its children, created before or after, write through the wrapper. Returns
 * false when the logger does not have the shape this relies on (a pino version that keeps
 * its destination elsewhere); tests/upstream pins it. Idempotent.
 */
export function maskLogOutput(logger: object): boolean {
  // pino keeps its destination under a private symbol (pino.symbols.streamSym); children
  // inherit it through their prototype, so replacing it on the root covers them too.
  const key = loggerDestinationKey(logger);
  if (key === undefined) return false;
  const holder = logger as Record<symbol, Destination | undefined>;
  const destination = holder[key];
  if (destination === undefined || typeof destination.write !== 'function') return false;
  if ((destination as unknown as Record<symbol, unknown>)[MASKED]) return true;
  const write = (chunk: string) => destination.write(maskLogLine(String(chunk)));
  holder[key] = new Proxy(destination, {
    get(target, prop) {
      if (prop === 'write') return write;
      if (prop === MASKED) return true;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return true;
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
