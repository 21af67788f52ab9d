/**
 * The console's live calls: voice processes `POST /calls/events` (any API key) with a call's
 * current flow, step or task and last outcome (and, for flows, the Mermaid diagram with the
 * call's trace and its per-step report). The board keeps the latest state per call in memory,
 * scoped by who reported it: a call is `(owner, call_id)`, so one key can neither overwrite nor
 * hide another key's call with the same id. Each owner has its own cap (its least recently
 * updated call goes first), so no key can evict another's calls by flooding; calls not heard
 * from within a TTL are dropped. Every change is pushed to the WebSocket clients allowed to see
 * it (the reporting key's holder, and admins).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod/v4';
import { CallEventBody } from '../../app/call-event.js';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import { type Identity, ownerOf } from './auth.js';
import { parsePart } from './envelope.js';

/** A call as the console shows it. */
export interface CallView extends z.output<typeof CallEventBody> {
  /** Agent (or admin name) whose key reported it. */
  reporter: string;
  /** Who owns the call on the board: `agent:<id>` or `admin:<name>` (a call is owner + call_id). */
  owner: string;
  /** Epoch seconds of the first and latest event. */
  started_at: number;
  updated_at: number;
}

/** A board message on the WebSocket: the call's new state, or `gone` when it was dropped. */
export type CallMessage =
  | { type: 'call'; data: CallView }
  | { type: 'call_gone'; data: { call_id: string; owner: string; reporter: string } };

/** Options of {@link CallBoard}. */
export interface CallBoardOptions {
  /** A call not heard from for this long is dropped (default 10 min). */
  ttlMs?: number;
  /**
   * Most calls kept in all (default 10,000); past it, the least recently updated call of the
   * owner with the most calls is dropped, so a flood only ever evicts the flooder's calls.
   */
  maxCalls?: number;
  /** Most calls one owner (key holder) keeps; its least recently updated goes first (default 1,000). */
  maxCallsPerOwner?: number;
  clock?: Clock;
}

const nameOf = (identity: Identity) => (identity.admin ? identity.name : identity.agent);

/** In-memory latest state of each reported call (see the module comment). */
export class CallBoard {
  /** Owner → call_id → call, each map in order of last update. */
  private readonly owners = new Map<string, Map<string, CallView>>();
  private size = 0;
  private readonly ttlMs: number;
  private readonly maxCalls: number;
  private readonly maxPerOwner: number;
  private readonly clock: Clock;
  private sweeper?: TimerHandle;
  private closed = false;

  constructor(
    private readonly push: (
      message: CallMessage,
      visibleTo: (identity: Identity) => boolean,
    ) => void,
    options: CallBoardOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10 * 60_000;
    this.maxPerOwner = Math.max(1, options.maxCallsPerOwner ?? 1_000);
    this.maxCalls = Math.max(1, options.maxCalls ?? 10_000);
    this.clock = options.clock ?? systemClock;
    this.schedule();
  }

  /** Records an event from `identity`; returns the call's new state. */
  report(identity: Identity, event: z.output<typeof CallEventBody>): CallView {
    const now = Math.floor(this.clock.now() / 1000);
    const owner = ownerOf(identity);
    let calls = this.owners.get(owner);
    if (!calls) {
      calls = new Map();
      this.owners.set(owner, calls);
    }
    const before = calls.get(event.call_id);
    const view: CallView = {
      ...(before ?? {}),
      ...event,
      reporter: nameOf(identity),
      owner,
      started_at: before?.started_at ?? now,
      updated_at: now,
    };
    if (before) {
      calls.delete(event.call_id);
      this.size -= 1;
    }
    calls.set(event.call_id, view);
    this.size += 1;
    while (calls.size > this.maxPerOwner) this.drop(owner, calls.keys().next().value as string);
    while (this.size > this.maxCalls) this.evictFromLargest();
    this.push({ type: 'call', data: view }, (who) => this.visible(who, view));
    return view;
  }

  /** The calls `identity` may see, most recently updated first. */
  list(identity: Identity): CallView[] {
    this.sweep();
    const out: CallView[] = [];
    for (const calls of this.owners.values()) {
      for (const call of calls.values()) if (this.visible(identity, call)) out.push(call);
    }
    return out.sort((a, b) => b.updated_at - a.updated_at);
  }

  /** Calls kept in all. */
  get count(): number {
    return this.size;
  }

  /** Stops the TTL sweeper. */
  close(): void {
    this.closed = true;
    this.sweeper?.cancel();
  }

  private visible(identity: Identity, call: CallView): boolean {
    return identity.admin || ownerOf(identity) === call.owner;
  }

  private evictFromLargest(): void {
    let largest: string | undefined;
    let most = 0;
    for (const [owner, calls] of this.owners) {
      if (calls.size > most) {
        most = calls.size;
        largest = owner;
      }
    }
    const calls = largest === undefined ? undefined : this.owners.get(largest);
    if (!calls || calls.size === 0) return;
    this.drop(largest!, calls.keys().next().value as string);
  }

  private drop(owner: string, callId: string): void {
    const calls = this.owners.get(owner);
    const call = calls?.get(callId);
    if (!calls || !call) return;
    calls.delete(callId);
    this.size -= 1;
    if (calls.size === 0) this.owners.delete(owner);
    this.push(
      { type: 'call_gone', data: { call_id: call.call_id, owner, reporter: call.reporter } },
      (who) => this.visible(who, call),
    );
  }

  private sweep(): void {
    const cutoff = (this.clock.now() - this.ttlMs) / 1000;
    for (const [owner, calls] of [...this.owners]) {
      for (const [id, call] of [...calls]) {
        if (call.updated_at >= cutoff) break; // ordered by last update
        this.drop(owner, id);
      }
    }
  }

  private schedule(): void {
    if (this.closed) return;
    this.sweeper = this.clock.setTimer(Math.min(this.ttlMs, 30_000), () => {
      this.sweep();
      this.schedule();
    });
  }
}

/** Registers `POST /calls/events` and `GET /calls` on `app`. */
export function registerCallRoutes(
  app: FastifyInstance,
  board: CallBoard,
  identityOf: (request: FastifyRequest) => Identity,
): void {
  app.post('/calls/events', async (request) => {
    const event = parsePart(request, 'body', CallEventBody);
    const view = board.report(identityOf(request), event);
    return { success: true, message: 'Call event recorded', data: view };
  });
  app.get('/calls', async (request) => ({ success: true, data: board.list(identityOf(request)) }));
}
