import { TasklineError } from '../../core/errors.js';
import { RecentKeys } from './dedupe.js';
import { channelOf, type DelegationChannel, type DelegationEvent, eventKey } from './events.js';
import { errorMessage, logDelegation } from './log.js';
import type { SelectionMessage } from './signals.js';
import type {
  BusSubscription,
  DelegationBus,
  DelegationEventHandler,
  PublishAck,
  SubscribeOptions,
  WatchOptions,
} from './types.js';

/** Bounds of an {@link InProcessDelegationBus}. */
export interface InProcessBusOptions {
  /** Events held per inbox while nobody subscribes (default 10,000); more is `limit_exceeded`. */
  maxBuffered?: number;
  /** Deliveries of one event before a failing handler's event is dropped (default 5). */
  maxDeliver?: number;
  /** Event keys remembered for publish-side dedupe (default 10,000). */
  dedupeWindow?: number;
}

interface Pending {
  event: DelegationEvent;
  attempt: number;
}

interface Sub {
  handler: DelegationEventHandler;
  concurrency: number;
  active: number;
}

interface Inbox {
  queue: Pending[];
  subs: Sub[];
  next: number;
}

/**
 * The default bus: every agent in one process. Same contract as the NATS bus — per-agent
 * inboxes that buffer while nobody listens, at-least-once delivery with redelivery on handler
 * failure, dedupe by event key — with no network, so it is also the test double.
 */
export class InProcessDelegationBus implements DelegationBus {
  private readonly inboxes = new Map<string, Inbox>();
  private readonly watchers = new Set<(event: DelegationEvent) => void>();
  private readonly signalHandlers = new Map<string, Set<(m: SelectionMessage) => void>>();
  private readonly published: RecentKeys;
  private readonly maxBuffered: number;
  private readonly maxDeliver: number;
  private readonly idleWaiters: Array<() => void> = [];
  private active = 0;
  private closed = false;

  constructor(options: InProcessBusOptions = {}) {
    this.maxBuffered = options.maxBuffered ?? 10_000;
    this.maxDeliver = options.maxDeliver ?? 5;
    this.published = new RecentKeys(options.dedupeWindow ?? 10_000);
  }

  private inbox(agentId: string, channel: DelegationChannel): Inbox {
    const key = `${channel}\u0000${agentId}`;
    let inbox = this.inboxes.get(key);
    if (!inbox) {
      inbox = { queue: [], subs: [], next: 0 };
      this.inboxes.set(key, inbox);
    }
    return inbox;
  }

  private assertOpen(): void {
    if (this.closed) throw new TasklineError('invalid_state', 'This delegation bus is closed.');
  }

  /** Answers at once while the bus is open (health checks). */
  async ping(): Promise<void> {
    this.assertOpen();
  }

  async publish(event: DelegationEvent): Promise<PublishAck> {
    this.assertOpen();
    const key = eventKey(event);
    if (this.published.has(key)) return { duplicate: true };
    const inbox = this.inbox(event.to, channelOf(event.event));
    if (inbox.queue.length >= this.maxBuffered) {
      throw new TasklineError(
        'limit_exceeded',
        `Inbox of ${event.to} holds ${this.maxBuffered} undelivered events; start its subscriber or raise maxBuffered.`,
      );
    }
    this.published.add(key);
    inbox.queue.push({ event, attempt: 1 });
    for (const w of this.watchers) {
      queueMicrotask(() => {
        try {
          w(event);
        } catch (error) {
          logDelegation('warn', 'delegation watcher failed', { error: errorMessage(error) });
        }
      });
    }
    this.pump(inbox);
    return { duplicate: false };
  }

  private pump(inbox: Inbox): void {
    while (inbox.queue.length > 0) {
      const sub = this.freeSub(inbox);
      if (!sub) return;
      const item = inbox.queue.shift()!;
      sub.active++;
      this.active++;
      void Promise.resolve()
        .then(() => sub.handler(item.event, { attempt: item.attempt }))
        .catch((error: unknown) => {
          if (item.attempt < this.maxDeliver && !this.closed) {
            inbox.queue.push({ event: item.event, attempt: item.attempt + 1 });
          } else {
            logDelegation('error', 'delegation event dropped after repeated handler failures', {
              key: eventKey(item.event),
              attempts: item.attempt,
              error: errorMessage(error),
            });
          }
        })
        .finally(() => {
          sub.active--;
          this.active--;
          this.pump(inbox);
          this.checkIdle();
        });
    }
  }

  private freeSub(inbox: Inbox): Sub | undefined {
    for (let i = 0; i < inbox.subs.length; i++) {
      const sub = inbox.subs[(inbox.next + i) % inbox.subs.length]!;
      if (sub.active < sub.concurrency) {
        inbox.next = (inbox.next + i + 1) % inbox.subs.length;
        return sub;
      }
    }
    return undefined;
  }

  private checkIdle(): void {
    if (this.active > 0) return;
    for (const inbox of this.inboxes.values()) {
      if (inbox.subs.length > 0 && inbox.queue.length > 0) return;
    }
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * Resolves once no handler is running and no subscribed inbox has queued events: lets tests
   * and shutdown wait for delivery to settle without sleeping.
   */
  idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      queueMicrotask(() => this.checkIdle());
    });
  }

  async subscribe(
    agentId: string,
    channel: DelegationChannel,
    handler: DelegationEventHandler,
    options: SubscribeOptions = {},
  ): Promise<BusSubscription> {
    this.assertOpen();
    const inbox = this.inbox(agentId, channel);
    const sub: Sub = { handler, concurrency: Math.max(1, options.concurrency ?? 1), active: 0 };
    inbox.subs.push(sub);
    queueMicrotask(() => this.pump(inbox));
    return {
      close: async () => {
        const i = inbox.subs.indexOf(sub);
        if (i >= 0) inbox.subs.splice(i, 1);
      },
    };
  }

  async watch(
    handler: (event: DelegationEvent) => void,
    options: WatchOptions = {},
  ): Promise<BusSubscription> {
    this.assertOpen();
    const to = options.to;
    const watcher = to === undefined ? handler : (e: DelegationEvent) => e.to === to && handler(e);
    this.watchers.add(watcher);
    return { close: async () => void this.watchers.delete(watcher) };
  }

  async signal(to: string, message: SelectionMessage): Promise<void> {
    this.assertOpen();
    for (const h of this.signalHandlers.get(to) ?? []) {
      queueMicrotask(() => {
        try {
          h(message);
        } catch (error) {
          logDelegation('warn', 'selection signal handler failed', { error: errorMessage(error) });
        }
      });
    }
  }

  async onSignal(
    agentId: string,
    handler: (message: SelectionMessage) => void,
  ): Promise<BusSubscription> {
    this.assertOpen();
    let set = this.signalHandlers.get(agentId);
    if (!set) {
      set = new Set();
      this.signalHandlers.set(agentId, set);
    }
    set.add(handler);
    return { close: async () => void set.delete(handler) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.inboxes.clear();
    this.watchers.clear();
    this.signalHandlers.clear();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
