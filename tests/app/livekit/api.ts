/**
 * The HTTP API of the simulated LiveKit server: the Twirp endpoints livekit-server-sdk
 * calls (RoomService DeleteRoom / MoveParticipant / RemoveParticipant, SIP
 * TransferSIPParticipant / CreateSIPParticipant), on 127.0.0.1. Requests are
 * authenticated like the server does (a JWT signed with the API secret) and recorded;
 * their effect on rooms goes through `SimRooms`, so agents see it as FFI events.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DisconnectReason, ParticipantKind } from '@livekit/rtc-node';
import { TokenVerifier } from 'livekit-server-sdk';
import type { SimRooms } from './rooms.js';

/** One API call the server received. */
export interface ApiCall {
  /** "RoomService/DeleteRoom", "SIP/TransferSIPParticipant", ... */
  method: string;
  body: Record<string, unknown>;
}

/** How the simulated SIP service answers a transfer or a dial-out. */
export type SipAnswer =
  /** Accepted; with `leaveFirst`, the caller's leg leaves the room before the API answers. */
  | { ok: true; leaveFirst?: boolean }
  /** A SIP failure, as LiveKit reports it (e.g. 486 Busy Here). */
  | { ok: false; status: number; reason: string };

/** The simulated server's HTTP side. */
export class SimApi {
  readonly calls: ApiCall[] = [];
  /** How the far end answers a REFER (cold transfer). Default: accepted. */
  onTransfer: (body: Record<string, unknown>) => SipAnswer = () => ({ ok: true });
  /** How the dialled human answers (warm transfer). Default: answered. */
  onDial: (body: Record<string, unknown>) => SipAnswer = () => ({ ok: true });
  /** Calls the server fails (503, after recording them). Default: none. */
  refuse: (call: ApiCall) => boolean = () => false;
  /**
   * Whether MoveParticipant works (LiveKit Cloud); false answers it as a self-hosted
   * livekit-server v1.13.5 does: 500, twirp code `unknown`, "not implemented".
   */
  moveImplemented = true;
  private readonly rooms: SimRooms;
  private readonly verifier: TokenVerifier;
  private server: Server | undefined;
  private base = '';
  private readonly waiters: Array<{
    match: (call: ApiCall) => boolean;
    resolve: (call: ApiCall) => void;
  }> = [];

  constructor(rooms: SimRooms, apiKey: string, apiSecret: string) {
    this.rooms = rooms;
    this.verifier = new TokenVerifier(apiKey, apiSecret);
  }

  /** The server's URL (ws:// as agents are given it; the SDK switches to http). */
  get url(): string {
    return this.base;
  }

  /** Calls of one method, in order. */
  callsTo(method: string): ApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** The calls that concern room `name` (as `room`, `roomName` or `destinationRoom`). */
  about(name: string): ApiCall[] {
    return this.calls.filter((c) => roomsOf(c).includes(name));
  }

  /** The first call of `method` about room `name`, now or when it arrives. */
  next(method: string, name: string): Promise<ApiCall> {
    const match = (c: ApiCall) => c.method === method && roomsOf(c).includes(name);
    const seen = this.calls.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.serve(req, res).catch((error: Error) => twirpError(res, 500, 'internal', error.message));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.base = `ws://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = /^\/twirp\/livekit\.(\w+)\/(\w+)$/.exec(req.url ?? '');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || !match) return twirpError(res, 404, 'bad_route', req.url ?? '');
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    try {
      await this.verifier.verify(token ?? '');
    } catch {
      return twirpError(res, 401, 'unauthenticated', 'invalid token');
    }
    const method = `${match[1]}/${match[2]}`;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<
      string,
      unknown
    >;
    const call = { method, body };
    this.calls.push(call);
    for (const w of this.waiters.filter((x) => x.match(call))) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(call);
    }
    if (this.refuse(call)) return twirpError(res, 503, 'unavailable', 'simulated outage');
    const str = (key: string) => String(body[key] ?? '');
    switch (method) {
      case 'RoomService/DeleteRoom':
        this.rooms.delete(str('room'));
        return json(res, {});
      case 'RoomService/RemoveParticipant':
        this.rooms.leave(str('room'), str('identity'), DisconnectReason.PARTICIPANT_REMOVED);
        return json(res, {});
      case 'RoomService/MoveParticipant': {
        if (!this.moveImplemented) return twirpError(res, 500, 'unknown', 'not implemented');
        const from = this.rooms.room(str('room'));
        const p = from.participants.get(str('identity'));
        if (!p) return twirpError(res, 404, 'not_found', 'participant not found');
        this.rooms.leave(from.name, p.identity, DisconnectReason.MIGRATION);
        this.rooms.join(str('destinationRoom'), p);
        return json(res, {});
      }
      case 'SIP/TransferSIPParticipant': {
        const answer = this.onTransfer(body);
        if (!answer.ok) return sipError(res, answer);
        // After an accepted REFER the caller's leg leaves LiveKit for the new destination.
        const leave = () => this.rooms.leave(str('roomName'), str('participantIdentity'));
        if (answer.leaveFirst) {
          leave();
          await this.rooms.drained();
        }
        json(res, {});
        if (!answer.leaveFirst) leave();
        return;
      }
      case 'SIP/CreateSIPParticipant': {
        const answer = this.onDial(body);
        if (!answer.ok) return sipError(res, answer);
        const identity = str('participantIdentity') || 'sip-participant';
        this.rooms.join(str('roomName'), {
          identity,
          kind: ParticipantKind.SIP,
          attributes: { 'sip.callStatus': 'active', 'sip.phoneNumber': str('sipCallTo') },
        });
        return json(res, {
          participantId: `PA_${identity}`,
          participantIdentity: identity,
          roomName: str('roomName'),
          sipCallId: 'SCL_sim',
        });
      }
      default:
        return twirpError(res, 501, 'unimplemented', `${method} is not simulated`);
    }
  }
}

function roomsOf(call: ApiCall): unknown[] {
  return [call.body.room, call.body.roomName, call.body.destinationRoom];
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function twirpError(res: ServerResponse, status: number, code: string, msg: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, msg }));
}

function sipError(res: ServerResponse, answer: { status: number; reason: string }): void {
  res.writeHead(424, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      code: 'failed_precondition',
      msg: answer.reason,
      meta: { sip_status_code: String(answer.status), sip_status: answer.reason },
    }),
  );
}
