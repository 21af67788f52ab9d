import { createHash } from 'node:crypto';
import { TasklineError } from '../../core/errors.js';

/**
 * An agent id as one NATS subject token / consumer-name part: kept as is when it is plain
 * (letters, digits, `_`, `-`, up to 64), else a stable hash — ids may contain dots or spaces.
 */
export function agentToken(agentId: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(agentId)) return agentId;
  return `h_${createHash('sha256').update(agentId, 'utf8').digest('hex').slice(0, 40)}`;
}

/** Validates a bus prefix (subject root and stream-name stem). */
export function checkBusPrefix(prefix: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(prefix)) {
    throw new TasklineError(
      'invalid_argument',
      `Bus prefix ${JSON.stringify(prefix)} is not allowed; use up to 64 letters, digits, "_" and "-".`,
    );
  }
  return prefix;
}
