import type { CallContext } from '../core/call.js';
import { type LogLevel, logLine } from '../core/log.js';

/** Severity of a telephony log line. */
export type TelephonyLogLevel = Exclude<LogLevel, 'error'>;

/** Writes one telephony log line (PII masked), tagged with the call's id. */
export function logCall(
  call: CallContext | undefined,
  level: TelephonyLogLevel,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  logLine('taskline.telephony', level, message, { ...fields, callId: call?.callId });
}
