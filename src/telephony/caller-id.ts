import { ParticipantKind } from '@livekit/rtc-node';
import { phoneLib } from '../tasks/parsers/phone-lib.js';

/** The participant fields caller ID is read from (a subset of rtc-node's RemoteParticipant). */
export interface CallerIdSource {
  readonly kind?: ParticipantKind;
  readonly attributes?: Readonly<Record<string, string>>;
}

const E164 = /^\+[1-9][0-9]{6,14}$/;

/**
 * The caller's phone number as the SIP trunk presented it (`sip.phoneNumber`), only when
 * it is a valid E.164 number on a SIP participant. Withheld and anonymous callers
 * ("anonymous", "restricted", ""), numbers without a country code and attributes set by a
 * non-SIP participant all give `undefined`: nothing may be keyed on them. Caller ID is
 * what the network says, not proof of identity — use it to resume, not to authenticate.
 */
export function callerNumber(participant: CallerIdSource | undefined): string | undefined {
  if (participant?.kind !== ParticipantKind.SIP) return undefined;
  const raw = participant.attributes?.['sip.phoneNumber']?.trim();
  if (!raw || !E164.test(raw)) return undefined;
  return phoneLib().isValidPhoneNumber(raw) ? raw : undefined;
}
