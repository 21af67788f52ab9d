/**
 * The guardian's judgement: told that a call's agent is gone (its lifeline broke, or the
 * server's webhook says it left without meaning to), it looks at the room and dispatches the
 * same agent name into it again — only while a caller is still there, never while another
 * agent of that name serves the room or one is already on its way, and at most
 * `maxRedispatches` times per call (counted from the room's own dispatches, so a restarted
 * guardian counts the same). Every decision is one {@link GuardianDecision}, logged with its
 * reason. Decisions about one room run one at a time.
 */
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import { redispatchMetadata, redispatchOf } from './protocol.js';
import { isCaller, KIND, type RoomMember, type ServerApi } from './server-api.js';

/** A call's agent that is gone, as a lifeline or a webhook reported it. */
export interface LostAgent {
  room: string;
  /** The lost agent's participant identity. */
  identity: string;
  agentName: string;
  /** The lost job, when known (the lifeline names it). */
  jobId?: string;
  /** How the guardian learned of it. */
  source: 'lifeline' | 'webhook';
  /** What happened, in words. */
  reason: string;
}

/** What the guardian decided about one lost agent. */
export interface GuardianDecision {
  room: string;
  agentName: string;
  /** The lost agent. */
  identity: string;
  source: LostAgent['source'];
  action: 'redispatched' | 'skipped' | 'failed';
  /** Why, in words. */
  reason: string;
  /** Which re-dispatch of the call this was (for `redispatched`). */
  attempt?: number;
  dispatchId?: string;
  /** When the guardian decided (clock time, ms). */
  at: number;
  /** Time from the report to the decision (ms). */
  tookMs: number;
}

/** Options for {@link Guardian}. */
export interface GuardianOptions {
  /** How the guardian reads and changes rooms. */
  server: ServerApi;
  /** Most re-dispatches per call (default 2). */
  maxRedispatches?: number;
  /** Only these agent names are re-dispatched (default: every agent). */
  agentNames?: readonly string[];
  /**
   * How long a re-dispatch may take to bring its agent into the room; meanwhile no other
   * report dispatches again (default 60,000 ms).
   */
  joinWithinMs?: number;
  /** Called with every decision (the CLI prints them). */
  onDecision?: (decision: GuardianDecision) => void;
  clock?: Clock;
  /** Rooms remembered at once (default 10,000; the oldest are forgotten first). */
  maxRooms?: number;
}

/** What the guardian remembers of a room. */
interface RoomWatch {
  /** Decisions run one at a time per room. */
  chain: Promise<unknown>;
  /** A re-dispatch whose agent has not joined yet. */
  pending?: { agentName: string; since: number };
  /** Re-dispatches made by this guardian (the room's dispatches are the durable count). */
  made: number;
  /** Agents that left on purpose, or whose loss was already judged. */
  settled: Set<string>;
}

/** Disconnect reasons that mean the agent left on purpose (or was removed by someone). */
const INTENTIONAL = new Set([
  'CLIENT_INITIATED',
  'DUPLICATE_IDENTITY',
  'SERVER_SHUTDOWN',
  'PARTICIPANT_REMOVED',
  'ROOM_DELETED',
  'MIGRATION',
  'ROOM_CLOSED',
]);

/** True when an agent that left for `reason` (a DisconnectReason name) meant to. */
export function leftOnPurpose(reason: string): boolean {
  return INTENTIONAL.has(reason);
}

/** The guardian's decisions over every room it hears of. */
export class Guardian {
  readonly #server: ServerApi;
  readonly #options: GuardianOptions;
  readonly #clock: Clock;
  readonly #rooms = new Map<string, RoomWatch>();
  readonly #max: number;

  constructor(options: GuardianOptions) {
    this.#options = options;
    this.#server = options.server;
    this.#clock = options.clock ?? systemClock;
    this.#max = options.maxRedispatches ?? 2;
  }

  /** Most re-dispatches per call. */
  get maxRedispatches(): number {
    return this.#max;
  }

  /** An agent of `agentName` joined `room` (a re-dispatch arrived, or the first job). */
  agentJoined(room: string, agentName: string): void {
    const watch = this.#rooms.get(room);
    if (watch?.pending?.agentName === agentName) delete watch.pending;
  }

  /** An agent left `room` on purpose: a later report of its loss is ignored. */
  agentLeft(room: string, identity: string): void {
    this.#watch(room).settled.add(identity);
  }

  /** The room ended: forget it. */
  roomFinished(room: string): void {
    this.#rooms.delete(room);
  }

  /** Judges a lost agent (one decision at a time per room); resolves the decision. */
  agentLost(lost: LostAgent): Promise<GuardianDecision> {
    const watch = this.#watch(lost.room);
    const started = this.#clock.now();
    const next = watch.chain.then(() =>
      this.#judge(lost, watch).then(
        (d) => this.#decide(lost, started, d),
        (error: unknown) =>
          this.#decide(lost, started, {
            action: 'failed',
            reason: `the server could not be asked: ${error instanceof Error ? error.message : String(error)}`,
          }),
      ),
    );
    watch.chain = next;
    return next;
  }

  async #judge(
    lost: LostAgent,
    watch: RoomWatch,
  ): Promise<Pick<GuardianDecision, 'action' | 'reason' | 'attempt' | 'dispatchId'>> {
    const names = this.#options.agentNames;
    if (names && !names.includes(lost.agentName)) {
      return { action: 'skipped', reason: `agent "${lost.agentName}" is not guarded` };
    }
    if (watch.settled.has(lost.identity)) {
      return { action: 'skipped', reason: 'this agent already left on purpose or was judged' };
    }
    // Both reads at once: every round trip to the server is time the caller hears silence.
    const [members, listed] = await Promise.all([
      this.#server.members(lost.room),
      this.#server.dispatches(lost.room),
    ]);
    if (!members) return this.#settle(watch, lost, 'the room is gone');
    const others = members.filter((m) => m.identity !== lost.identity);
    if (!others.some(isCaller)) return this.#settle(watch, lost, 'no caller is left in the room');
    const serving = others.find(
      (m) => m.kind === KIND.agent && !m.disconnected && sameAgent(m, lost.agentName),
    );
    if (serving) return this.#settle(watch, lost, `${serving.identity} already serves the call`);
    const now = this.#clock.now();
    const joinWithin = this.#options.joinWithinMs ?? 60_000;
    if (watch.pending?.agentName === lost.agentName && now - watch.pending.since < joinWithin) {
      return this.#settle(watch, lost, 'a re-dispatch is already on its way');
    }
    const dispatches = listed.filter((d) => d.agentName === lost.agentName);
    const made = Math.max(
      watch.made,
      ...dispatches.map((d) => redispatchOf(d.metadata)?.attempt ?? 0),
    );
    if (made >= this.#max) {
      return this.#settle(
        watch,
        lost,
        `the call was already re-dispatched ${made} time(s), the most allowed (${this.#max})`,
      );
    }
    // The lost agent may still be listed (the server takes ~20 s to notice a dead peer):
    // remove it, so the call never has two agents, whatever the truth about the old one.
    if (members.some((m) => m.identity === lost.identity)) {
      await this.#server.remove(lost.room, lost.identity);
    }
    const first = dispatches.find((d) => redispatchOf(d.metadata) === undefined);
    const attempt = made + 1;
    const dispatch = await this.#server.dispatch(
      lost.room,
      lost.agentName,
      redispatchMetadata({
        attempt,
        reason: lost.reason,
        ...(lost.jobId ? { previousJob: lost.jobId } : {}),
        original: first?.metadata ?? '',
      }),
    );
    watch.made = attempt;
    watch.pending = { agentName: lost.agentName, since: this.#clock.now() };
    watch.settled.add(lost.identity);
    return {
      action: 'redispatched',
      reason: `${lost.reason}; a caller is still in the room`,
      attempt,
      dispatchId: dispatch.id,
    };
  }

  #settle(watch: RoomWatch, lost: LostAgent, reason: string) {
    watch.settled.add(lost.identity);
    return { action: 'skipped' as const, reason };
  }

  #decide(
    lost: LostAgent,
    started: number,
    d: Pick<GuardianDecision, 'action' | 'reason' | 'attempt' | 'dispatchId'>,
  ): GuardianDecision {
    const at = this.#clock.now();
    const decision: GuardianDecision = {
      room: lost.room,
      agentName: lost.agentName,
      identity: lost.identity,
      source: lost.source,
      ...d,
      at,
      tookMs: at - started,
    };
    this.#options.onDecision?.(decision);
    return decision;
  }

  #watch(room: string): RoomWatch {
    let watch = this.#rooms.get(room);
    if (watch) return watch;
    watch = { chain: Promise.resolve(), made: 0, settled: new Set() };
    this.#rooms.set(room, watch);
    const max = this.#options.maxRooms ?? 10_000;
    for (const oldest of this.#rooms.keys()) {
      if (this.#rooms.size <= max) break;
      this.#rooms.delete(oldest);
    }
    return watch;
  }
}

function sameAgent(member: RoomMember, agentName: string): boolean {
  // An agent participant without the attribute (not started by an agents worker) is counted:
  // two voices in one call is the failure to avoid.
  return member.agentName === undefined || member.agentName === agentName;
}
