import { voice } from '@livekit/agents';
import { DisconnectReason, ParticipantKind, RoomEvent } from '@livekit/rtc-node';
import { callOf } from '../core/call.js';
import { type Clock, systemClock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { checkOptions, millis, type OptionTable } from '../core/options.js';
import { linkedParticipantIdentity } from '../upstream/internals.js';
import { dtmfFromEvent } from './keys.js';
import { logCall } from './log.js';

/** The participant fields the binding reads (a subset of rtc-node's RemoteParticipant). */
export interface ParticipantLike {
  readonly identity: string;
  readonly kind?: ParticipantKind;
  readonly attributes?: Readonly<Record<string, string>>;
}

type DtmfListener = (code: number, digit: string, participant: ParticipantLike | undefined) => void;
type ParticipantListener = (participant: ParticipantLike) => void;
type AttributesListener = (changed: Record<string, string>, participant: ParticipantLike) => void;
type DisconnectedListener = (reason: DisconnectReason) => void;

/**
 * The room surface the binding needs: rtc-node's `Room` satisfies it (tests drive a real
 * one through its own FFI event dispatch).
 */
export interface RoomLike {
  readonly remoteParticipants: ReadonlyMap<string, ParticipantLike>;
  on(event: RoomEvent.DtmfReceived, listener: DtmfListener): unknown;
  on(event: RoomEvent.ParticipantConnected, listener: ParticipantListener): unknown;
  on(event: RoomEvent.ParticipantDisconnected, listener: ParticipantListener): unknown;
  on(event: RoomEvent.ParticipantAttributesChanged, listener: AttributesListener): unknown;
  on(event: RoomEvent.Disconnected, listener: DisconnectedListener): unknown;
  off(event: RoomEvent.DtmfReceived, listener: DtmfListener): unknown;
  off(event: RoomEvent.ParticipantConnected, listener: ParticipantListener): unknown;
  off(event: RoomEvent.ParticipantDisconnected, listener: ParticipantListener): unknown;
  off(event: RoomEvent.ParticipantAttributesChanged, listener: AttributesListener): unknown;
  off(event: RoomEvent.Disconnected, listener: DisconnectedListener): unknown;
}

/** Options for {@link bindRoom}. */
export interface BindRoomOptions {
  /**
   * The caller's identity. Default: the participant the session's RoomIO is linked to,
   * else the first remote caller (SIP, standard or connector participant) already present
   * or the first whose key press arrives.
   */
  callerIdentity?: string;
}

/**
 * The participant kinds that can be the caller: the ones upstream's RoomIO links to by
 * default (`DEFAULT_PARTICIPANT_KINDS`), so the call and RoomIO never pick different people.
 */
export const CALLER_KINDS: ReadonlySet<ParticipantKind> = new Set([
  ParticipantKind.SIP,
  ParticipantKind.STANDARD,
  ParticipantKind.CONNECTOR,
]);

/** True when `p` may be the caller (a kind RoomIO accepts, or no kind known). */
export function isCallerKind(p: ParticipantLike): boolean {
  return p.kind === undefined || CALLER_KINDS.has(p.kind);
}

/** What a room's own disconnect means for the caller, in words for the hang-up reason. */
function roomGone(reason: DisconnectReason): string {
  const name = DisconnectReason[reason] ?? String(reason);
  return `the room disconnected (${name})`;
}

/**
 * Feeds a LiveKit room's caller into the session's call: `RoomEvent.DtmfReceived` from
 * the caller becomes `callOf(session).pushDtmf` (other participants — a transfer leg, a
 * second caller, a sender rtc-node does not know — are ignored); the caller leaving, their
 * `sip.callStatus` turning to `hangup`, or the agent's own room disconnecting (room deleted,
 * network lost) becomes `call.hangup()`, so running tasks end `hangup`, not `cancelled`;
 * final speech transcripts mark the input as speech. Returns the function that unbinds
 * everything (also called when the session closes).
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
    linkedParticipantIdentity(session) ??
    [...room.remoteParticipants.values()].find(isCallerKind)?.identity;
  if (initial !== undefined) call.setCaller(initial);

  const onDtmf: DtmfListener = (code, digit, participant) => {
    // rtc-node passes `undefined` for a sender it does not know (e.g. a server SDK).
    if (!participant) {
      logCall(call, 'debug', 'dtmf ignored: unknown sender');
      return;
    }
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
  const onDisconnected: ParticipantListener = (participant) => {
    // A callee leaving while the bot still dials them rejected or missed the call: the dial's
    // result (busy, no answer) says so, not a hang-up.
    if (participant.identity === call.callerIdentity && !call.isDialing) {
      call.hangup('caller hung up');
    }
  };
  const onAttributes: AttributesListener = (changed, participant) => {
    // LiveKit SIP reports the hang-up on the caller's attributes, sometimes before the
    // participant leaves the room.
    if (participant.identity === call.callerIdentity && changed['sip.callStatus'] === 'hangup') {
      call.hangup('caller hung up');
    }
  };
  const onRoomGone: DisconnectedListener = (reason) => call.hangup(roomGone(reason));

  room.on(RoomEvent.DtmfReceived, onDtmf);
  room.on(RoomEvent.ParticipantDisconnected, onDisconnected);
  room.on(RoomEvent.ParticipantAttributesChanged, onAttributes);
  room.on(RoomEvent.Disconnected, onRoomGone);
  let bound = true;
  const unbind = () => {
    if (!bound) return;
    bound = false;
    room.off(RoomEvent.DtmfReceived, onDtmf);
    room.off(RoomEvent.ParticipantDisconnected, onDisconnected);
    room.off(RoomEvent.ParticipantAttributesChanged, onAttributes);
    room.off(RoomEvent.Disconnected, onRoomGone);
    session.off(voice.AgentSessionEventTypes.Close, unbind);
  };
  session.on(voice.AgentSessionEventTypes.Close, unbind);
  return unbind;
}

/** Options for {@link waitForCaller}. */
export interface WaitForCallerOptions {
  /**
   * Give up after this long: 1,000 to 900,000 ms (1 s to 15 minutes; default 30 s). A
   * dispatched job nobody joins must end.
   */
  timeoutMs?: number;
  /** The clock the timeout runs on (the wall clock by default). */
  clock?: Clock;
}

/** How long {@link waitForCaller} may wait for a caller: 1 s to 15 minutes. */
export const CALLER_WAIT = millis(1_000, 900_000);

/** The wait of {@link WaitForCallerOptions}, with its accepted range and default. */
const CALLER_WAIT_OPTIONS = {
  timeoutMs: { range: CALLER_WAIT, default: 30_000 },
} as const satisfies OptionTable;

/**
 * The room's caller: the first remote participant of a kind upstream's RoomIO links to
 * (SIP, standard, connector), already present or the next to join — unlike upstream's
 * `waitForParticipant`, which takes any non-agent (an egress or ingress participant too).
 * Rejects with a TasklineError (`timeout`) after `timeoutMs`, (`cancelled`) when the room
 * disconnects first, and (`invalid_argument`) at once for a `timeoutMs` outside its range.
 */
export async function waitForCaller<P extends ParticipantLike>(
  room: RoomLike & { readonly remoteParticipants: ReadonlyMap<string, P> },
  options: WaitForCallerOptions = {},
): Promise<P> {
  const { timeoutMs } = checkOptions(CALLER_WAIT_OPTIONS, options, { owner: 'waitForCaller' });
  const participants: ReadonlyMap<string, P> = room.remoteParticipants;
  const present = [...participants.values()].find(isKnownCallerKind);
  if (present) return present;
  const clock = options.clock ?? systemClock;
  return new Promise<P>((resolve, reject) => {
    const done = () => {
      timer.cancel();
      room.off(RoomEvent.ParticipantConnected, onJoined);
      room.off(RoomEvent.Disconnected, onGone);
    };
    const onJoined: ParticipantListener = (participant) => {
      if (!isKnownCallerKind(participant)) return;
      done();
      resolve(participant as P);
    };
    const onGone: DisconnectedListener = (reason) => {
      done();
      reject(new TasklineError('cancelled', `No caller joined: ${roomGone(reason)}.`));
    };
    const timer = clock.setTimer(timeoutMs, () => {
      done();
      reject(
        new TasklineError('timeout', `No caller joined the room within ${timeoutMs} ms.`, {
          timeoutMs,
        }),
      );
    });
    room.on(RoomEvent.ParticipantConnected, onJoined);
    room.on(RoomEvent.Disconnected, onGone);
  });
}

function isKnownCallerKind(p: ParticipantLike): boolean {
  return p.kind !== undefined && CALLER_KINDS.has(p.kind);
}
