import { EventEmitter } from 'node:events';
import { ParticipantKind, RoomEvent } from '@livekit/rtc-node';
import type { ParticipantLike, RoomLike } from '../../src/telephony/room.js';

/**
 * A stand-in for rtc-node's Room: an EventEmitter with `remoteParticipants` that emits
 * the same events with the same arguments (`DtmfReceived(code, digit, participant)`,
 * `ParticipantDisconnected(participant)`), so room bindings run without a server.
 */
export class FakeRoom extends EventEmitter implements RoomLike {
  readonly name: string;
  readonly remoteParticipants = new Map<string, ParticipantLike>();

  constructor(name = 'call-room') {
    super();
    this.name = name;
  }

  /** A participant joins. */
  join(identity: string, kind: ParticipantKind = ParticipantKind.SIP): ParticipantLike {
    const participant = { identity, kind };
    this.remoteParticipants.set(identity, participant);
    this.emit(RoomEvent.ParticipantConnected, participant);
    return participant;
  }

  /** `identity` presses keys; `code` is the RFC 4733 event code. */
  press(identity: string, keys: string): void {
    const participant = this.remoteParticipants.get(identity);
    if (!participant) throw new Error(`${identity} is not in the room`);
    for (const digit of keys) this.emit(RoomEvent.DtmfReceived, codeOf(digit), digit, participant);
  }

  /** A participant leaves. */
  leave(identity: string): void {
    const participant = this.remoteParticipants.get(identity);
    if (!participant) return;
    this.remoteParticipants.delete(identity);
    this.emit(RoomEvent.ParticipantDisconnected, participant);
  }
}

/** RFC 4733 code of a key. */
export function codeOf(digit: string): number {
  return '0123456789*#ABCD'.indexOf(digit);
}
