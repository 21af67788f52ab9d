/**
 * Placing the call: the {@link Dialer} interface (LiveKit SIP in a room, a linked test line,
 * a recorder for demos) and its LiveKit implementation on livekit-server-sdk's
 * `SipClient.createSipParticipant`, waiting until the far end answers. Like a Transferer, a
 * dialer never throws for an expected failure: busy, no answer and failed come back typed,
 * with the SIP status.
 */
import type { CreateSipParticipantOptions, SipClient } from 'livekit-server-sdk';
import { TasklineError } from '../../core/errors.js';
import { checkRange, wholeSeconds } from '../../core/options.js';
import { parseDestination, ringingSeconds } from '../sip-address.js';
import { connectSipClient } from '../sip-client.js';
import { type DialFailure, dialFailureFromError } from './sip-status.js';

/** Who to call and how long to let it ring. */
export interface DialRequest {
  /** The number to call ("+15550100" or a tel: URI). */
  to: string;
  /** Identity the far end's participant gets in the room (default "callee"). */
  participantIdentity?: string;
  /**
   * How long it may ring, ms: 1,000 to 600,000 (1 s to 10 minutes), a whole number of seconds
   * as LiveKit SIP counts them (default 30,000). `callOut` refuses another value at once.
   */
  ringingTimeoutMs?: number;
  /** Keys dialled once answered, before anything is heard (an extension; "w" waits 0.5 s). */
  dtmf?: string;
}

/** How placing the call ended. */
export type DialResult =
  | {
      status: 'answered';
      to: string;
      /** The far end's participant identity in the room. */
      participantIdentity: string;
      /** LiveKit SIP's call id, when known. */
      sipCallId?: string;
    }
  | (DialFailure & { to: string });

/** Anything that places a call and reports how it went. */
export interface Dialer {
  dial(request: DialRequest): Promise<DialResult>;
}

/** The one SipClient method dialling uses (a fake in tests). */
export type SipDialClient = Pick<SipClient, 'createSipParticipant'>;

/** Options for {@link SipDialer}. */
export interface SipDialerOptions {
  /** The room the far end joins (the agent's room). */
  roomName: string;
  /** The outbound trunk (default env LIVEKIT_SIP_OUTBOUND_TRUNK). */
  trunkId?: string;
  /** Caller id presented to the far end (default: the trunk's number). */
  fromNumber?: string;
  /** LiveKit URL (default env LIVEKIT_URL). */
  url?: string;
  /** Default env LIVEKIT_API_KEY. */
  apiKey?: string;
  /** Default env LIVEKIT_API_SECRET. */
  apiSecret?: string;
  /** Extra SIP headers on the INVITE. */
  headers?: Record<string, string>;
  /**
   * Hang up after this long, ms: 1,000 to 86,400,000 (1 s to 24 hours), a whole number of
   * seconds as LiveKit SIP counts them (default: no limit). Checked by the constructor.
   */
  maxCallDurationMs?: number;
  /** Builds the client; defaults to livekit-server-sdk's SipClient (created on first use). */
  createClient?: () => SipDialClient | Promise<SipDialClient>;
}

/** The accepted {@link SipDialerOptions.maxCallDurationMs}: 1 s to 24 hours, in whole seconds. */
export const MAX_CALL_DURATION = wholeSeconds(1_000, 86_400_000);

const DEFAULT_RINGING_MS = 30_000;

/**
 * Dials through LiveKit SIP: `SipClient.createSipParticipant` with `waitUntilAnswered`, so
 * the request resolves when the far end picks up and fails with the SIP status when it does
 * not (busy, no answer, not found, …). The far end then is a SIP participant in the room.
 * Needs an outbound trunk (`trunkId` or env LIVEKIT_SIP_OUTBOUND_TRUNK).
 */
export class SipDialer implements Dialer {
  private readonly options: SipDialerOptions;
  private client: SipDialClient | undefined;

  constructor(options: SipDialerOptions) {
    if (!options.roomName) {
      throw new TasklineError('invalid_argument', 'SipDialer needs the room the call joins.');
    }
    checkRange('maxCallDurationMs', options.maxCallDurationMs, MAX_CALL_DURATION, {
      owner: 'SipDialer',
      why: 'LiveKit SIP counts call length in whole seconds',
    });
    this.options = options;
  }

  async dial(request: DialRequest): Promise<DialResult> {
    const to = request.to;
    let number: string;
    let ringing: number;
    try {
      number = dialNumber(to);
      ringing =
        ringingSeconds(
          { ringingTimeoutMs: request.ringingTimeoutMs ?? DEFAULT_RINGING_MS },
          'SipDialer',
        ) ?? 30;
    } catch (error) {
      return { status: 'failed', to, reason: (error as Error).message };
    }
    const trunkId = this.options.trunkId ?? process.env.LIVEKIT_SIP_OUTBOUND_TRUNK;
    if (!trunkId) {
      return {
        status: 'failed',
        to,
        reason:
          'no outbound SIP trunk: set LIVEKIT_SIP_OUTBOUND_TRUNK or pass { trunkId } (create one with `lk sip outbound create`)',
      };
    }
    const identity = request.participantIdentity ?? 'callee';
    const opts: CreateSipParticipantOptions = {
      participantIdentity: identity,
      waitUntilAnswered: true,
      ringingTimeout: ringing,
      playDialtone: false,
    };
    if (this.options.fromNumber) opts.fromNumber = this.options.fromNumber;
    if (this.options.headers) opts.headers = this.options.headers;
    if (request.dtmf) opts.dtmf = request.dtmf;
    if (this.options.maxCallDurationMs) {
      opts.maxCallDuration = this.options.maxCallDurationMs / 1000;
    }
    try {
      const client = await this.sipClient();
      const info = await client.createSipParticipant(trunkId, number, this.options.roomName, opts);
      return {
        status: 'answered',
        to,
        participantIdentity: info.participantIdentity || identity,
        ...(info.sipCallId ? { sipCallId: info.sipCallId } : {}),
      };
    } catch (error) {
      return { ...dialFailureFromError(error), to };
    }
  }

  private async sipClient(): Promise<SipDialClient> {
    if (this.client) return this.client;
    if (this.options.createClient) {
      this.client = await this.options.createClient();
      return this.client;
    }
    this.client = await connectSipClient(this.options, 'Dialling out');
    return this.client;
  }
}

/** The number an outbound trunk dials for `to`; a SIP URI is refused with what to do instead. */
function dialNumber(to: string): string {
  const dest = parseDestination(to);
  if (dest.kind === 'sip') {
    throw new TasklineError(
      'invalid_argument',
      `Cannot dial ${JSON.stringify(to)}: dial out takes a phone number through the outbound trunk; configure the trunk's address for ${dest.host} and dial its number.`,
    );
  }
  return dest.number;
}

/**
 * A dialer for demos and tests: records every request and answers with `respond` (default:
 * answered, the far end joining as "callee").
 */
export class RecordingDialer implements Dialer {
  /** Every request, in order. */
  readonly requests: DialRequest[] = [];
  private readonly respond: ((request: DialRequest) => DialResult) | undefined;

  constructor(respond?: (request: DialRequest) => DialResult) {
    this.respond = respond;
  }

  async dial(request: DialRequest): Promise<DialResult> {
    this.requests.push(request);
    return (
      this.respond?.(request) ?? {
        status: 'answered',
        to: request.to,
        participantIdentity: request.participantIdentity ?? 'callee',
      }
    );
  }
}
