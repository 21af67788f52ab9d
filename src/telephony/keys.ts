import { type DtmfDigit, isDtmfDigit } from '../core/call.js';
import { TasklineError } from '../core/errors.js';

/** RFC 4733 event codes 0-15 in order: what a SIP trunk reports when `digit` is empty. */
const BY_CODE = '0123456789*#ABCD';

/** The key for a DTMF event, from its digit string or, failing that, its RFC 4733 code. */
export function dtmfFromEvent(code: number, digit: string): DtmfDigit | undefined {
  const d = digit.trim().toUpperCase();
  if (isDtmfDigit(d)) return d;
  const byCode = Number.isInteger(code) ? BY_CODE[code] : undefined;
  return byCode !== undefined && isDtmfDigit(byCode) ? byCode : undefined;
}

/** How a key is said in a prompt: "1", "star", "pound". */
export function spokenKey(key: string): string {
  if (key === '*') return 'star';
  if (key === '#') return 'pound';
  return key;
}

/**
 * Checks an option naming one key ('' allowed when `allowEmpty`); throws a clear
 * TasklineError at definition time otherwise.
 */
export function checkKey(name: string, key: string, allowEmpty = false): void {
  if (allowEmpty && key === '') return;
  if (!isDtmfDigit(key)) {
    throw new TasklineError(
      'invalid_argument',
      `${name} must be one phone key (0-9, *, #, A-D)${allowEmpty ? " or '' to turn it off" : ''}; got ${JSON.stringify(key)}.`,
    );
  }
}
