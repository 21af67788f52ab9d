import { TasklineError } from '../core/errors.js';
import { checkRange, wholeSeconds } from '../core/options.js';

/** A transfer destination, read from a phone number, a `tel:` URI or a `sip:` URI. */
export type Destination =
  | { kind: 'tel' /** Digits with an optional leading "+" ("+15550100"). */; number: string }
  | {
      kind: 'sip';
      /** The user part ("desk" in sip:desk@pbx.example). */
      user: string;
      /** Host, with its port when given ("pbx.example:5061"). */
      host: string;
      /** The URI as given, trimmed ("sips:desk@pbx.example:5061;transport=tls"). */
      uri: string;
    };

const TEL_URI = /^tel:(.+)$/i;
const SIP_URI = /^(sips?):([^@\s;?]+)@([^;?\s]+)((?:[;?].*)?)$/i;
const NUMBER = /^\+?[0-9][0-9 ().-]*$/;

/**
 * Reads a transfer destination: "+1 (555) 010-0100", "tel:+15550100100" or
 * "sip:desk@pbx.example[:port][;params]". A bare "user@host" is read as a SIP URI. Throws a
 * TasklineError (`invalid_argument`) for anything else, and for a `tel:` URI with
 * parameters (";ext=12"): an extension is dialled as DTMF, not guessed.
 */
export function parseDestination(to: string): Destination {
  const t = to.trim();
  const tel = TEL_URI.exec(t);
  if (tel) {
    const body = tel[1]!;
    if (body.includes(';')) {
      throw new TasklineError(
        'invalid_argument',
        `Cannot dial ${JSON.stringify(t)}: tel: URI parameters are not supported; give the number alone and dial an extension as DTMF.`,
      );
    }
    return { kind: 'tel', number: telNumber(body, t) };
  }
  if (NUMBER.test(t)) return { kind: 'tel', number: telNumber(t, t) };
  const sip = SIP_URI.exec(/^sips?:/i.test(t) ? t : `sip:${t}`);
  if (sip) {
    return { kind: 'sip', user: sip[2]!, host: sip[3]!, uri: /^sips?:/i.test(t) ? t : `sip:${t}` };
  }
  throw new TasklineError(
    'invalid_argument',
    `Cannot dial ${JSON.stringify(t)}: use a phone number ("+15550100"), a tel: URI or a sip:user@host URI.`,
  );
}

function telNumber(raw: string, original: string): string {
  const digits = raw.replace(/[ ().-]/g, '');
  if (!/^\+?[0-9]{3,20}$/.test(digits)) {
    throw new TasklineError(
      'invalid_argument',
      `Cannot dial ${JSON.stringify(original)}: a phone number has 3 to 20 digits, optionally after "+".`,
    );
  }
  return digits;
}

/** The SIP REFER target of a destination: "tel:+15550100" or the SIP URI as given. */
export function sipTarget(to: string): string {
  const d = parseDestination(to);
  return d.kind === 'tel' ? `tel:${d.number}` : d.uri;
}

/**
 * The accepted `ringingTimeoutMs` of a transfer or a dial: 1 s to 10 minutes, a whole number
 * of seconds (LiveKit SIP counts ringing in seconds).
 */
export const RINGING_TIMEOUT = wholeSeconds(1_000, 600_000);

/**
 * The ringing timeout of a transferer's or a dial's options (`ringingTimeoutMs`) as the
 * whole seconds LiveKit SIP takes. Both transfer kinds use milliseconds (as upstream's
 * WarmTransferTask does); a value outside {@link RINGING_TIMEOUT} — or not a whole number of
 * seconds — is refused (`invalid_argument`, naming `owner`) rather than rounded silently or
 * thrown by livekit-server-sdk's BigInt conversion mid-call, and the old `ringingTimeout`
 * key is refused by name.
 */
export function ringingSeconds(
  options: { ringingTimeoutMs?: number },
  owner: string,
): number | undefined {
  if ('ringingTimeout' in options) {
    throw new TasklineError(
      'invalid_argument',
      `${owner}: \`ringingTimeout\` is now \`ringingTimeoutMs\` (milliseconds, for cold and warm transfers alike).`,
    );
  }
  const ms = checkRange('ringingTimeoutMs', options.ringingTimeoutMs, RINGING_TIMEOUT, {
    owner,
    why: 'LiveKit SIP counts ringing in whole seconds',
  });
  return ms === undefined ? undefined : ms / 1000;
}
