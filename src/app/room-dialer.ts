import type { JobContext } from '@livekit/agents';
import type { Dialer, DialRequest, DialResult } from '../telephony/outbound/dialer.js';
import { SipDialer, type SipDialerOptions } from '../telephony/outbound/dialer.js';

/** How a room entry places outbound calls; every field has a default. */
export interface RoomDialOptions
  extends Pick<SipDialerOptions, 'trunkId' | 'fromNumber' | 'headers' | 'maxCallDurationMs'> {
  /** The identity the far end gets in the room (default "callee"). */
  calleeIdentity?: string;
}

/**
 * The real dialer of an outbound call in a LiveKit room: LiveKit SIP
 * (`SipClient.createSipParticipant`) into the job's own room, with the job's URL and API
 * credentials, the far end joining as `calleeIdentity` — the participant the room entry
 * binds the call and RoomIO to. Busy, no answer and failed come back typed with the SIP
 * status (see {@link SipDialer}).
 */
export class RoomDialer implements Dialer {
  readonly calleeIdentity: string;
  private readonly dialer: SipDialer;

  constructor(job: Pick<JobContext, 'info' | 'room'>, options: RoomDialOptions = {}) {
    const { calleeIdentity, ...sip } = options;
    this.calleeIdentity = calleeIdentity ?? 'callee';
    const { info, room } = job;
    this.dialer = new SipDialer({
      ...sip,
      roomName: room.name ?? info.job.room?.name ?? '',
      url: info.url,
      apiKey: info.apiKey,
      apiSecret: info.apiSecret,
    });
  }

  dial(request: DialRequest): Promise<DialResult> {
    return this.dialer.dial({ ...request, participantIdentity: this.calleeIdentity });
  }
}
