/**
 * The console's live calls: voice processes `POST /calls/events` (any API key) with a call's
 * current flow, step or task and last outcome (and, for flows, the Mermaid diagram with the
 * call's trace and its per-step report). The board keeps the latest state per call in memory,
 * bounded in count, drops calls not heard from within a TTL, and pushes every change to the
 * WebSocket clients allowed to see it (the reporting agent, and admins).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod/v4';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import type { Identity } from './auth.js';
import { parsePart } from './envelope.js';

const Id = z.string().min(1).max(200);
/** The body of `POST /calls/events`. */
export const CallEventBody = z.strictObject({
  call_id: Id,
  state: z.enum(['active', 'ended']).default('active'),
  flow: Id.optional(),
  step: Id.optional(),
  task: Id.optional(),
  outcome: z.string().max(200).optional(),
  /** The flow's Mermaid source, with this call's trace highlighted (`toMermaid(flow, {trace})`). */
  diagram: z
    .string()
    .max(64 * 1024)
    .optional(),
  /** The flow's per-call report (`FlowReport`) so far. */
  report: z.record(z.string(), z.unknown()).optional(),
});
/** A call event as a voice process sends it. */
export type CallEvent = z.input<typeof CallEventBody>;

/** A call as the console shows it. */
export interface CallView extends z.output<typeof CallEventBody> {
  /** Agent (or admin name) whose key reported it. */
  reporter: string;
  /** Epoch seconds of the first and latest event. */
  started_at: number;
  updated_at: number;
}

/** A board message on the WebSocket: the call's new state, or `gone` when it was dropped. */
export type CallMessage =
  | { type: 'call'; data: CallView }
  | { type: 'call_gone'; data: { call_id: string } };

/** Options of {@link CallBoard}. */
export interface CallBoardOptions {
  /** A call not heard from for this long is dropped (default 10 min). */
  ttlMs?: number;
  /** Most calls kept; the least recently updated is dropped first (default 1,000). */
  maxCalls?: number;
  clock?: Clock;
}

const nameOf = (identity: Identity) => (identity.admin ? identity.name : identity.agent);

/** In-memory latest state of each reported call (see the module comment). */
export class CallBoard {
  private readonly calls = new Map<string, CallView>();
  private readonly ttlMs: number;
  private readonly maxCalls: number;
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
    this.maxCalls = options.maxCalls ?? 1_000;
    this.clock = options.clock ?? systemClock;
    this.schedule();
  }

  /** Records an event from `identity`; returns the call's new state. */
  report(identity: Identity, event: z.output<typeof CallEventBody>): CallView {
    const now = Math.floor(this.clock.now() / 1000);
    const key = event.call_id;
    const before = this.calls.get(key);
    const reporter = nameOf(identity);
    const view: CallView = {
      ...(before && before.reporter === reporter ? before : {}),
      ...event,
      reporter,
      started_at: before?.started_at ?? now,
      updated_at: now,
    };
    this.calls.delete(key);
    this.calls.set(key, view);
    while (this.calls.size > this.maxCalls) {
      const oldest = this.calls.keys().next().value as string;
      this.drop(oldest);
    }
    this.push({ type: 'call', data: view }, (who) => this.visible(who, view));
    return view;
  }

  /** The calls `identity` may see, most recently updated first. */
  list(identity: Identity): CallView[] {
    this.sweep();
    return [...this.calls.values()].filter((c) => this.visible(identity, c)).reverse();
  }

  /** Stops the TTL sweeper. */
  close(): void {
    this.closed = true;
    this.sweeper?.cancel();
  }

  private visible(identity: Identity, call: CallView): boolean {
    return identity.admin || identity.agent === call.reporter;
  }

  private drop(key: string): void {
    const call = this.calls.get(key);
    if (!call) return;
    this.calls.delete(key);
    this.push({ type: 'call_gone', data: { call_id: call.call_id } }, (who) =>
      this.visible(who, call),
    );
  }

  private sweep(): void {
    const cutoff = (this.clock.now() - this.ttlMs) / 1000;
    for (const [key, call] of this.calls) {
      if (call.updated_at >= cutoff) break; // ordered by last update
      this.drop(key);
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
