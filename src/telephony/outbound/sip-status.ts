/**
 * What a failed dial-out means for the bot: the far end was busy, nobody answered, or the
 * call failed — read from the SIP status LiveKit SIP reports. livekit-server-sdk throws a
 * Twirp error (`SipCallError` from 2.19 on) whose metadata carries `sip_status_code` and
 * `sip_status`; a ringing timeout has no SIP status at all (livekit-sip cancels the INVITE
 * and answers Twirp `canceled`, "sip request timed out").
 */

/** How a dial-out that never reached a conversation ended. */
export type DialFailureStatus = 'busy' | 'no_answer' | 'failed';

/** A dial-out that failed, with the SIP status when the far end (or a carrier) gave one. */
export interface DialFailure {
  status: DialFailureStatus;
  /** The SIP response code (486, 480, 404, …), when there was one. */
  sipStatusCode?: number;
  /** The SIP reason phrase ("Busy Here"), when there was one. */
  sipStatus?: string;
  /** What happened, in words for a log or a report. */
  reason: string;
}

/** 486 Busy Here, 600 Busy Everywhere, 603 Decline: the callee cannot take the call now. */
const BUSY = new Set([486, 600, 603]);
/** 408 Request Timeout, 480 Temporarily Unavailable, 487 Request Terminated (ringing cut off). */
const NO_ANSWER = new Set([408, 480, 487]);

const NAMES: Readonly<Record<number, string>> = {
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  480: 'Temporarily Unavailable',
  484: 'Address Incomplete',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  500: 'Server Internal Error',
  503: 'Service Unavailable',
  600: 'Busy Everywhere',
  603: 'Decline',
  604: 'Does Not Exist Anywhere',
};

/**
 * The failure a SIP final response means: busy (486, 600, 603), no answer (408, 480, 487),
 * failed for everything else (404 Not Found, 484 Address Incomplete, 403, 5xx, …).
 */
export function dialFailureFromSip(code: number, phrase?: string): DialFailure {
  const sipStatus = phrase?.trim() || NAMES[code];
  const said = `${code}${sipStatus ? ` ${sipStatus}` : ''}`;
  const status: DialFailureStatus = BUSY.has(code)
    ? 'busy'
    : NO_ANSWER.has(code)
      ? 'no_answer'
      : 'failed';
  const what =
    status === 'busy'
      ? code === 603
        ? 'the callee declined the call'
        : 'the line is busy'
      : status === 'no_answer'
        ? 'nobody answered'
        : 'the call could not be connected';
  return {
    status,
    sipStatusCode: code,
    ...(sipStatus ? { sipStatus } : {}),
    reason: `${what} (SIP ${said})`,
  };
}

/** The fields of a Twirp error livekit-server-sdk throws (ServerError / SipCallError). */
interface TwirpLike {
  message?: unknown;
  code?: unknown;
  status?: unknown;
  metadata?: unknown;
}

/**
 * The failure behind an error thrown by `SipClient.createSipParticipant`: its SIP status
 * from the Twirp metadata when there is one; a ringing timeout (Twirp `canceled`, "sip
 * request timed out") as no answer; anything else — a network error, a refused request, a
 * missing trunk — as failed, with the error's message.
 */
export function dialFailureFromError(error: unknown): DialFailure {
  const e = (typeof error === 'object' && error !== null ? error : {}) as TwirpLike;
  const meta = (typeof e.metadata === 'object' && e.metadata !== null ? e.metadata : {}) as Record<
    string,
    unknown
  >;
  const code = Number(meta.sip_status_code);
  if (Number.isInteger(code) && code >= 300 && code < 700) {
    return dialFailureFromSip(code, typeof meta.sip_status === 'string' ? meta.sip_status : '');
  }
  const message = error instanceof Error ? error.message : String(error);
  if (e.code === 'canceled' && /timed out/i.test(message)) {
    return {
      status: 'no_answer',
      reason: `nobody answered before the ringing timeout (${message})`,
    };
  }
  return { status: 'failed', reason: message || 'the dial-out failed' };
}
