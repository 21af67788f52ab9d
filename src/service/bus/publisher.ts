import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import type { DurableDelegationStore, OutboxEntry } from '../stores/change.js';
import { eventsForChange } from './events.js';
import { errorMessage, logDelegation } from './log.js';
import type { DelegationBus } from './types.js';

/** Options of {@link startOutboxPublisher}. */
export interface OutboxPublisherOptions {
  store: DurableDelegationStore;
  bus: DelegationBus;
  /** Clock for leases and polling (default the system clock). */
  clock?: Clock;
  /** Poll interval for changes written by other processes (default 1 s; 0 = no polling). */
  pollMs?: number;
  /** Entries claimed per round (default 100). */
  batch?: number;
  /** How long a claim hides entries from other publishers (default 30 s). */
  leaseMs?: number;
  /** Drain on every local write (default true). */
  drainOnWrite?: boolean;
}

/** A running outbox publisher. */
export interface OutboxPublisher {
  /**
   * Publishes everything in the outbox that no other publisher holds, until it is empty;
   * resolves with how many changes were published. Concurrent calls share one loop.
   */
  drain(): Promise<number>;
  /** Stops polling and waits for a running drain. */
  close(): Promise<void>;
}

/**
 * Turns outbox entries into bus events, at least once: claim a batch for a lease, publish
 * every event of every change in order, acknowledge what was published, release the rest. A
 * process that dies after writing (or mid-publish) loses nothing: the entries stay (or their
 * lease lapses) and the next publisher — in any process on the same database — sends them.
 */
export function startOutboxPublisher(options: OutboxPublisherOptions): OutboxPublisher {
  const { store, bus } = options;
  const clock = options.clock ?? systemClock;
  const batch = options.batch ?? 100;
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 1_000;
  let running: Promise<number> | undefined;
  let again = false;
  let closed = false;
  let timer: TimerHandle | undefined;

  const publishBatch = async (entries: OutboxEntry[]): Promise<number> => {
    const done: number[] = [];
    let failed: unknown;
    for (const entry of entries) {
      if (failed !== undefined) break;
      try {
        for (const event of eventsForChange(entry.change)) await bus.publish(event);
        done.push(entry.seq);
      } catch (error) {
        failed = error;
      }
    }
    await store.ackOutbox(done);
    if (failed !== undefined) {
      const rest = entries.filter((e) => !done.includes(e.seq)).map((e) => e.seq);
      await store.releaseOutbox(rest).catch(() => {});
      throw failed;
    }
    return done.length;
  };

  const loop = async (): Promise<number> => {
    let total = 0;
    try {
      for (;;) {
        again = false;
        const now = clock.now();
        const entries = await store.claimOutbox(batch, now, now + leaseMs);
        if (entries.length > 0) {
          total += await publishBatch(entries);
          continue;
        }
        if (!again || closed) break;
      }
    } finally {
      // Cleared before the promise settles, so a drain() called from now on starts a new loop
      // instead of joining one that has already looked at the outbox for the last time.
      running = undefined;
    }
    return total;
  };

  const drain = (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = loop();
    return running;
  };

  const background = () => {
    drain().catch((error: unknown) => {
      logDelegation('warn', 'outbox publish failed; will retry', { error: errorMessage(error) });
    });
  };

  // Local writes wake the publisher on the next turn of the event loop, so a burst of writes
  // is claimed and acknowledged as one batch instead of one claim per write.
  let wakeScheduled = false;
  const wake = () => {
    if (wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      if (!closed) background();
    });
  };

  const schedule = () => {
    if (closed || pollMs <= 0) return;
    timer = clock.setTimer(pollMs, () => {
      background();
      schedule();
    });
  };

  const off = options.drainOnWrite === false ? undefined : store.onOutboxWrite(wake);
  schedule();
  background();

  return {
    drain,
    async close() {
      closed = true;
      off?.();
      timer?.cancel();
      await running?.catch(() => 0);
    },
  };
}
