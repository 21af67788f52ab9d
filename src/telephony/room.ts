import { voice } from '@livekit/agents';
import { ParticipantKind, RoomEvent } from '@livekit/rtc-node';
import { callOf } from '../core/call.js';
import { dtmfFromEvent } from './keys.js';
import { logCall } from './log.js';

/** The participant fields the binding reads (a subset of rtc-node's RemoteParticipant). */
export interface ParticipantLike {
  readonly identity: string;
  readonly kind?: ParticipantKind;
}

/**
 * The room surface the binding needs: rtc-node's `Room` satisfies it, and a test can pass
 * an EventEmitter emitting the same events.
 */
export interface RoomLike {
  readonly remoteParticipants: ReadonlyMap<string, ParticipantLike>;
  on(
    event: RoomEvent.DtmfReceived,
    listener: (code: number, digit: string, participant: ParticipantLike) => void,
  ): unknown;
  on(
    event: RoomEvent.ParticipantDisconnected,
    listener: (participant: ParticipantLike) => void,
  ): unknown;
  off(
    event: RoomEvent.DtmfReceived,
    listener: (code: number, digit: string, participant: ParticipantLike) => void,
  ): unknown;
  off(
    event: RoomEvent.ParticipantDisconnected,
    listener: (participant: ParticipantLike) => void,
  ): unknown;
}

/** Options for {@link bindRoom}. */
export interface BindRoomOptions {
  /**
   * The caller's identity. Default: the participant the session's RoomIO is linked to,
   * else the first remote SIP or standard participant (already present, or the first
   * whose key press arrives).
   */
  callerIdentity?: string;
}

const CALLER_KINDS: ReadonlySet<ParticipantKind> = new Set([
  ParticipantKind.SIP,
  ParticipantKind.STANDARD,
]);

function isCallerKind(p: ParticipantLike): boolean {
  return p.kind === undefined || CALLER_KINDS.has(p.kind);
}

/**
 * Feeds a LiveKit room's caller into the session's call: `RoomEvent.DtmfReceived` from
 * the caller becomes `callOf(session).pushDtmf` (other participants — a transfer leg, a
 * second caller — are ignored), the caller's `ParticipantDisconnected` becomes
 * `call.hangup()`, and final speech transcripts mark the input as speech. Returns the
 * function that unbinds everything.
 */
export function bindRoom(
  session: voice.AgentSession,
  room: RoomLike,
  options: BindRoomOptions = {},
): () => void {
  const call = callOf(session);
  const initial =
    options.callerIdentity ??
    call.callerIdentity ??
    linkedIdentity(session) ??
    [...room.remoteParticipants.values()].find(isCallerKind)?.identity;
  if (initial !== undefined) call.setCaller(initial);

  const onDtmf = (code: number, digit: string, participant: ParticipantLike) => {
    if (call.callerIdentity === undefined) {
      if (!isCallerKind(participant)) return;
      call.setCaller(participant.identity);
    }
    if (participant.identity !== call.callerIdentity) {
      logCall(call, 'debug', 'dtmf ignored: not from the caller', {
        participant: participant.identity,
      });
      return;
    }
    const key = dtmfFromEvent(code, digit);
    if (key === undefined) return;
    call.pushDtmf(key, participant.identity);
  };
  const onDisconnected = (participant: ParticipantLike) => {
    if (participant.identity === call.callerIdentity) call.hangup('caller hung up');
  };
  const onTranscribed = (ev: voice.UserInputTranscribedEvent) => {
    if (ev.isFinal) call.noteInput('speech');
  };

  room.on(RoomEvent.DtmfReceived, onDtmf);
  room.on(RoomEvent.ParticipantDisconnected, onDisconnected);
  session.on(voice.AgentSessionEventTypes.UserInputTranscribed, onTranscribed);
  let bound = true;
  const unbind = () => {
    if (!bound) return;
    bound = false;
    room.off(RoomEvent.DtmfReceived, onDtmf);
    room.off(RoomEvent.ParticipantDisconnected, onDisconnected);
    session.off(voice.AgentSessionEventTypes.UserInputTranscribed, onTranscribed);
    session.off(voice.AgentSessionEventTypes.Close, unbind);
  };
  session.on(voice.AgentSessionEventTypes.Close, unbind);
  return unbind;
}

function linkedIdentity(session: voice.AgentSession): string | undefined {
  try {
    return session._roomIO?.linkedParticipant?.identity;
  } catch {
    return undefined;
  }
}
