/**
 * What the guardian asks the LiveKit server, in the few shapes it needs: who is in a room,
 * which dispatches the room has, removing a participant, dispatching an agent. Built on
 * livekit-server-sdk's RoomServiceClient and AgentDispatchClient, every request bounded.
 */
import type { AgentDispatch, ParticipantInfo } from 'livekit-server-sdk';
import { loadOptional } from '../../core/optional.js';

/** A participant of a room, as the guardian judges it. */
export interface RoomMember {
  identity: string;
  /** LiveKit's participant kind: 0 standard, 1 ingress, 2 egress, 3 SIP, 4 agent, 7 connector. */
  kind: number;
  /** The agent name a worker stamped on its participant (`lk.agent.name`), for agents. */
  agentName?: string;
  /** A hidden participant (an observer, a recorder) is never the caller. */
  hidden: boolean;
  /** True once the server knows the participant disconnected. */
  disconnected: boolean;
}

/** One dispatch of a room. */
export interface RoomDispatch {
  id: string;
  agentName: string;
  metadata: string;
}

/** The server operations the guardian uses. */
export interface ServerApi {
  /** The room's participants; undefined when the room does not exist. */
  members(room: string): Promise<RoomMember[] | undefined>;
  dispatches(room: string): Promise<RoomDispatch[]>;
  /** Removes a participant; resolves also when it was already gone. */
  remove(room: string, identity: string): Promise<void>;
  dispatch(room: string, agentName: string, metadata: string): Promise<RoomDispatch>;
}

/** The participant attribute an agent worker stamps with its agent name. */
export const AGENT_NAME_ATTRIBUTE = 'lk.agent.name';

/** LiveKit's participant kinds the guardian cares about. */
export const KIND = { standard: 0, sip: 3, agent: 4, connector: 7 } as const;

/** True when `member` can be the caller of a call (as RoomIO picks one: SIP, standard, connector). */
export function isCaller(member: RoomMember): boolean {
  return (
    !member.hidden &&
    !member.disconnected &&
    (member.kind === KIND.standard || member.kind === KIND.sip || member.kind === KIND.connector)
  );
}

/** The guardian's view of a participant from the server's `ParticipantInfo`. */
export function memberOf(p: ParticipantInfo): RoomMember {
  const agentName = p.attributes?.[AGENT_NAME_ATTRIBUTE];
  return {
    identity: p.identity,
    kind: p.kind,
    ...(agentName ? { agentName } : {}),
    hidden: p.permission?.hidden === true,
    // ParticipantInfo_State.DISCONNECTED
    disconnected: p.state === 3,
  };
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; status?: unknown };
  return e?.code === 'not_found' || e?.status === 404;
}

/** The server API over livekit-server-sdk (loaded on first use), requests bounded by `timeoutMs`. */
export async function liveKitServerApi(options: {
  url: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs?: number;
}): Promise<ServerApi> {
  const sdk = await loadOptional(
    () => import('livekit-server-sdk'),
    'livekit-server-sdk',
    'the guardian (re-dispatching calls)',
  );
  const host = options.url.replace(/^ws(s?):\/\//, 'http$1://');
  const clientOptions = {
    requestTimeout: Math.max(1, Math.ceil((options.timeoutMs ?? 5_000) / 1000)),
  };
  const rooms = new sdk.RoomServiceClient(host, options.apiKey, options.apiSecret, clientOptions);
  const agents = new sdk.AgentDispatchClient(
    host,
    options.apiKey,
    options.apiSecret,
    clientOptions,
  );
  const toDispatch = (d: AgentDispatch): RoomDispatch => ({
    id: d.id,
    agentName: d.agentName,
    metadata: d.metadata,
  });
  return {
    async members(room) {
      try {
        return (await rooms.listParticipants(room)).map(memberOf);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    async dispatches(room) {
      try {
        return (await agents.listDispatch(room)).map(toDispatch);
      } catch (error) {
        if (isNotFound(error)) return [];
        throw error;
      }
    },
    async remove(room, identity) {
      try {
        await rooms.removeParticipant(room, identity);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    async dispatch(room, agentName, metadata) {
      return toDispatch(await agents.createDispatch(room, agentName, { metadata }));
    },
  };
}
