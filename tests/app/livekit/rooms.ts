/**
 * The rooms of a simulated LiveKit server and what its agents' connections see: who is
 * in a room, key presses, attribute changes, text messages, participants leaving and the
 * room closing, each delivered to a real rtc-node `Room` as the FFI events the native core
 * would emit. Agent connections are answered here too (connect, disconnect, attributes,
 * track publication). The server's HTTP API lives in `api.ts`.
 */
import * as pb from '@livekit/rtc-ffi-bindings';
import { DisconnectReason, ParticipantKind } from '@livekit/rtc-node';
import { TokenVerifier } from 'livekit-server-sdk';
import { ACK_CASES, ack, type FfiBoundary } from './ffi.js';

/** A participant of a simulated room. */
export interface SimParticipant {
  identity: string;
  kind: ParticipantKind;
  attributes: Record<string, string>;
  name?: string;
}

/** One agent's rtc-node Room connected to a simulated room. */
interface Connection {
  roomHandle: bigint;
  localHandle: bigint;
  identity: string;
  room: SimRoom;
  open: boolean;
}

/** A simulated room: its participants and the agents connected to it. */
export class SimRoom {
  readonly name: string;
  readonly sid: string;
  readonly participants = new Map<string, SimParticipant>();
  /** Agents connected now (their identities). */
  readonly agents = new Set<string>();
  /** True once the room was deleted. */
  deleted = false;
  /** Everything the agents published: attribute updates and tracks, in order. */
  readonly published: Array<{ kind: string; identity: string; detail?: unknown }> = [];

  constructor(name: string, sid: string) {
    this.name = name;
    this.sid = sid;
  }

  /** Identities of the (non-agent) participants in the room now. */
  get identities(): string[] {
    return [...this.participants.keys()];
  }
}

const CHAT_TOPIC = 'lk.chat';

/** The room side of a simulated LiveKit server. */
export class SimRooms {
  private readonly ffi: FfiBoundary;
  private readonly verifier: TokenVerifier;
  private readonly rooms = new Map<string, SimRoom>();
  private readonly connections = new Map<bigint, Connection>();
  private readonly readers = new Map<bigint, string>();
  private roomCount = 0;
  /** When set, the next agent connect fails with this message. */
  failNextConnect: string | undefined;

  constructor(ffi: FfiBoundary, apiKey: string, apiSecret: string) {
    this.ffi = ffi;
    this.verifier = new TokenVerifier(apiKey, apiSecret);
  }

  /** The room `name` (created empty on first use, as LiveKit does). */
  room(name: string): SimRoom {
    let room = this.rooms.get(name);
    if (!room) {
      this.roomCount += 1;
      room = new SimRoom(name, `RM_sim${this.roomCount}`);
      this.rooms.set(name, room);
    }
    return room;
  }

  /** Every room that was ever used. */
  get all(): SimRoom[] {
    return [...this.rooms.values()];
  }

  /** A participant joins `room` (a SIP caller, a web user, a human agent dialled in). */
  join(
    room: string,
    participant: Partial<SimParticipant> & Pick<SimParticipant, 'identity'>,
  ): SimParticipant {
    const r = this.room(room);
    const p: SimParticipant = {
      kind: ParticipantKind.SIP,
      attributes: {},
      ...participant,
    };
    r.participants.set(p.identity, p);
    for (const c of this.open(r)) {
      this.roomEvent(c, {
        case: 'participantConnected',
        value: new pb.ParticipantConnected({ info: this.owned(p) }),
      });
    }
    return p;
  }

  /** A participant leaves (hangs up, is moved, is removed). */
  leave(room: string, identity: string, reason = DisconnectReason.CLIENT_INITIATED): void {
    const r = this.room(room);
    if (!r.participants.delete(identity)) return;
    for (const c of this.open(r)) {
      this.roomEvent(c, {
        case: 'participantDisconnected',
        value: new pb.ParticipantDisconnected({
          participantIdentity: identity,
          disconnectReason: reason,
        }),
      });
    }
  }

  /**
   * `identity` presses `keys` (SIP INFO / RFC 4733 DTMF, delivered as `sipDtmf` data
   * packets). An identity not in the room is a sender rtc-node does not know.
   */
  press(room: string, identity: string, keys: string): void {
    for (const digit of keys) this.dtmf(room, identity, codeOf(digit), digit);
  }

  /** One raw DTMF event: the RFC 4733 `code` and the `digit` text (which may be empty). */
  dtmf(room: string, identity: string, code: number, digit: string): void {
    for (const c of this.open(this.room(room))) {
      this.roomEvent(c, {
        case: 'dataPacketReceived',
        value: new pb.DataPacketReceived({
          kind: pb.DataPacketKind.KIND_RELIABLE,
          participantIdentity: identity,
          value: { case: 'sipDtmf', value: new pb.SipDTMF({ code, digit }) },
        }),
      });
    }
  }

  /** A participant's attributes change (LiveKit SIP reports `sip.callStatus` this way). */
  setAttributes(room: string, identity: string, changed: Record<string, string>): void {
    const p = this.room(room).participants.get(identity);
    if (!p) throw new Error(`${identity} is not in ${room}`);
    Object.assign(p.attributes, changed);
    for (const c of this.open(this.room(room))) {
      this.roomEvent(c, {
        case: 'participantAttributesChanged',
        value: new pb.ParticipantAttributesChanged({
          participantIdentity: identity,
          attributes: entries(p.attributes),
          changedAttributes: entries(changed),
        }),
      });
    }
  }

  /** `identity` sends a chat text (topic lk.chat), which RoomIO takes as typed input. */
  sendText(room: string, identity: string, text: string): void {
    for (const c of this.open(this.room(room))) {
      const handle = this.ffi.mintHandle();
      this.readers.set(handle, text);
      this.roomEvent(c, {
        case: 'textStreamOpened',
        value: new pb.TextStreamOpened({
          participantIdentity: identity,
          reader: new pb.OwnedTextStreamReader({
            handle: new pb.FfiOwnedHandle({ id: handle }),
            info: new pb.TextStreamInfo({
              streamId: `TS_${handle}`,
              timestamp: 0n,
              mimeType: 'text/plain',
              topic: CHAT_TOPIC,
              totalLength: BigInt(Buffer.byteLength(text)),
              operationType: pb.TextStreamInfo_OperationType.CREATE,
              encryptionType: pb.EncryptionType.NONE,
            }),
          }),
        }),
      });
    }
  }

  /** The room is deleted: every participant is hung up, every agent disconnected. */
  delete(room: string): void {
    const r = this.room(room);
    r.deleted = true;
    r.participants.clear();
    this.disconnectAgents(r, DisconnectReason.ROOM_DELETED);
  }

  /** The agents' connections to `room` drop (network loss, server shutdown). */
  disconnectAgents(r: SimRoom, reason: DisconnectReason): void {
    for (const c of this.open(r)) {
      c.open = false;
      r.agents.delete(c.identity);
      this.roomEvent(c, { case: 'disconnected', value: new pb.Disconnected({ reason }) });
    }
  }

  /** Resolves once every event sent to agents has been dispatched by rtc-node. */
  drained(): Promise<void> {
    return this.ffi.drained();
  }

  /** Answers the FFI requests of agent connections. */
  handle = (request: pb.FfiRequest): pb.FfiResponse['message'] | undefined => {
    const { case: kind, value } = request.message;
    if (kind === 'connect') return this.connect(value);
    if (kind === 'readyForRoomEvent') {
      return this.ffi.owns(value.roomHandle)
        ? { case: kind, value: new pb.ReadyForRoomEventResponse() }
        : undefined;
    }
    if (kind === 'disconnect') return this.disconnect(value);
    if (kind === 'publishTrack') return this.publishTrack(value);
    if (kind === 'textReadIncremental') return this.readText(value);
    if (kind && (ACK_CASES as readonly string[]).includes(kind)) {
      const v = value as { localParticipantHandle?: bigint; requestAsyncId?: bigint };
      const conn = this.byLocal(v.localParticipantHandle);
      if (!conn) return undefined;
      conn.room.published.push({ kind, identity: conn.identity, detail: value });
      return ack(this.ffi, kind as (typeof ACK_CASES)[number], v.requestAsyncId);
    }
    return undefined;
  };

  private connect(req: pb.ConnectRequest): pb.FfiResponse['message'] {
    const asyncId = this.ffi.asyncId();
    const failure = this.failNextConnect;
    this.failNextConnect = undefined;
    const answer = (message: pb.ConnectCallback['message']) =>
      this.ffi.emit({ case: 'connect', value: new pb.ConnectCallback({ asyncId, message }) });
    this.verifier
      .verify(req.token ?? '')
      .then((claims) => {
        if (failure) throw new Error(failure);
        const video = (claims as { video?: { room?: string; roomJoin?: boolean } }).video;
        if (!video?.roomJoin || !video.room) throw new Error('the token grants no room to join');
        answer({ case: 'result', value: this.open_(video.room, String(claims.sub)) });
      })
      .catch((error: Error) => answer({ case: 'error', value: error.message }));
    return { case: 'connect', value: new pb.ConnectResponse({ asyncId }) };
  }

  private open_(roomName: string, identity: string): pb.ConnectCallback_Result {
    const room = this.room(roomName);
    room.deleted = false;
    const conn: Connection = {
      roomHandle: this.ffi.mintHandle(),
      localHandle: this.ffi.mintHandle(),
      identity,
      room,
      open: true,
    };
    this.connections.set(conn.roomHandle, conn);
    room.agents.add(identity);
    return new pb.ConnectCallback_Result({
      room: new pb.OwnedRoom({
        handle: new pb.FfiOwnedHandle({ id: conn.roomHandle }),
        info: new pb.RoomInfo({
          sid: room.sid,
          name: room.name,
          metadata: '',
          lossyDcBufferedAmountLowThreshold: 0n,
          reliableDcBufferedAmountLowThreshold: 0n,
          emptyTimeout: 300,
          departureTimeout: 20,
          maxParticipants: 0,
          creationTime: 0n,
          numParticipants: room.participants.size,
          numPublishers: 0,
          activeRecording: false,
        }),
      }),
      localParticipant: new pb.OwnedParticipant({
        handle: new pb.FfiOwnedHandle({ id: conn.localHandle }),
        info: participantInfo({ identity, kind: ParticipantKind.AGENT, attributes: {} }),
      }),
      participants: [...room.participants.values()].map(
        (p) =>
          new pb.ConnectCallback_ParticipantWithTracks({
            participant: this.owned(p),
            publications: [],
          }),
      ),
    });
  }

  private disconnect(req: pb.DisconnectRequest): pb.FfiResponse['message'] | undefined {
    const conn = req.roomHandle === undefined ? undefined : this.connections.get(req.roomHandle);
    if (!conn) return undefined;
    conn.open = false;
    conn.room.agents.delete(conn.identity);
    const asyncId = req.requestAsyncId ?? this.ffi.asyncId();
    this.ffi.emit({ case: 'disconnect', value: new pb.DisconnectCallback({ asyncId }) });
    return { case: 'disconnect', value: new pb.DisconnectResponse({ asyncId }) };
  }

  private publishTrack(req: pb.PublishTrackRequest): pb.FfiResponse['message'] | undefined {
    const conn = this.byLocal(req.localParticipantHandle);
    if (!conn) return undefined;
    const asyncId = this.ffi.asyncId();
    const sid = `TR_sim${asyncId}`;
    conn.room.published.push({ kind: 'publishTrack', identity: conn.identity, detail: sid });
    this.ffi.emit({
      case: 'publishTrack',
      value: new pb.PublishTrackCallback({
        asyncId,
        message: {
          case: 'publication',
          value: new pb.OwnedTrackPublication({
            handle: new pb.FfiOwnedHandle({ id: this.ffi.mintHandle() }),
            info: new pb.TrackPublicationInfo({
              sid,
              name: 'roomio_audio',
              kind: pb.TrackKind.KIND_AUDIO,
              source: pb.TrackSource.SOURCE_MICROPHONE,
              simulcasted: false,
              width: 0,
              height: 0,
              mimeType: 'audio/opus',
              muted: false,
              remote: false,
              encryptionType: pb.EncryptionType.NONE,
            }),
          }),
        },
      }),
    });
    // The caller's phone (or the human's) subscribes to what the agent publishes.
    this.roomEvent(conn, {
      case: 'localTrackSubscribed',
      value: new pb.LocalTrackSubscribed({ trackSid: sid }),
    });
    return { case: 'publishTrack', value: new pb.PublishTrackResponse({ asyncId }) };
  }

  private readText(
    req: pb.TextStreamReaderReadIncrementalRequest,
  ): pb.FfiResponse['message'] | undefined {
    const handle = req.readerHandle;
    const text = handle === undefined ? undefined : this.readers.get(handle);
    if (handle === undefined || text === undefined) return undefined;
    this.readers.delete(handle);
    for (const detail of [
      { case: 'chunkReceived', value: new pb.TextStreamReaderChunkReceived({ content: text }) },
      { case: 'eos', value: new pb.TextStreamReaderEOS() },
    ] as const) {
      this.ffi.emit({
        case: 'textStreamReaderEvent',
        value: new pb.TextStreamReaderEvent({ readerHandle: handle, detail }),
      });
    }
    // The native reader is consumed by this request; its handle is released with it.
    new pb.FfiHandle(handle).dispose();
    return { case: 'textReadIncremental', value: new pb.TextStreamReaderReadIncrementalResponse() };
  }

  private byLocal(handle: bigint | undefined): Connection | undefined {
    for (const c of this.connections.values()) if (c.localHandle === handle && c.open) return c;
    return undefined;
  }

  private open(room: SimRoom): Connection[] {
    return [...this.connections.values()].filter((c) => c.open && c.room === room);
  }

  private owned(p: SimParticipant): pb.OwnedParticipant {
    return new pb.OwnedParticipant({
      handle: new pb.FfiOwnedHandle({ id: this.ffi.mintHandle() }),
      info: participantInfo(p),
    });
  }

  private roomEvent(c: Connection, message: pb.RoomEvent['message']): void {
    this.ffi.emit({
      case: 'roomEvent',
      value: new pb.RoomEvent({ roomHandle: c.roomHandle, message }),
    });
  }
}

function participantInfo(p: SimParticipant): pb.ParticipantInfo {
  return new pb.ParticipantInfo({
    sid: `PA_${p.identity}`,
    name: p.name ?? '',
    identity: p.identity,
    state: pb.ParticipantState.ACTIVE,
    metadata: '',
    attributes: { ...p.attributes },
    kind: p.kind,
    disconnectReason: DisconnectReason.UNKNOWN_REASON,
    joinedAt: 0n,
    clientProtocol: 0,
  });
}

function entries(attributes: Record<string, string>): pb.AttributesEntry[] {
  return Object.entries(attributes).map(([key, value]) => new pb.AttributesEntry({ key, value }));
}

/** RFC 4733 event code of a key. */
export function codeOf(digit: string): number {
  return '0123456789*#ABCD'.indexOf(digit);
}
