import { log } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import { maskFields, maskPII } from './pii.js';

/** Severity of a telephony log line. */
export type TelephonyLogLevel = 'debug' | 'info' | 'warn';

/**
 * Writes one telephony log line through upstream's logger with every string passed
 * through {@link maskPII} first, so a card number or a masked PIN never reaches a log.
 * Silently does nothing when the process has no logger yet.
 */
export function logCall(
  call: CallContext | undefined,
  level: TelephonyLogLevel,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  let logger: ReturnType<typeof log>;
  try {
    logger = log();
  } catch {
    return;
  }
  const record = maskFields({ ...fields, callId: call?.callId, component: 'taskline.telephony' });
  logger[level](record as Record<string, unknown>, maskPII(message));
}
