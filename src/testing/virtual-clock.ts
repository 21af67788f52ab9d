import { type Clock, sleepOn, type TimerHandle } from '../core/clock.js';

interface PendingTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets queued promise callbacks and immediates run, so work a timer started can settle. */
export async function flushAsync(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * A clock that only moves when a test says so. Timers fire in time order (ties in the
 * order they were set) as `advance()` passes them, with pending async work settled after
 * each, so time-driven paths (no-input, inter-digit timeouts) run instantly and repeatably.
 */
export class VirtualClock implements Clock {
  private current: number;
  private timers: PendingTimer[] = [];
  private nextId = 1;

  /** @param start the initial time, ms since epoch (a fixed date by default, never "now"). */
  constructor(start: number = Date.UTC(2026, 0, 5, 9, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: PendingTimer = { id: this.nextId++, at: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return {
      cancel: () => {
        this.timers = this.timers.filter((t) => t !== timer);
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Number of timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Time of the next pending timer, if any. */
  nextTimerAt(): number | undefined {
    let next: number | undefined;
    for (const t of this.timers) if (next === undefined || t.at < next) next = t.at;
    return next;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way. After each
   * timer, `settle` runs (by default a few event-loop turns) so timers set by the work it
   * started are seen before the next step.
   */
  async advance(ms: number, settle: () => Promise<void> = () => flushAsync()): Promise<void> {
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      throw new RangeError(`advance(ms) needs a finite, non-negative number, got ${ms}`);
    }
    const target = this.current + ms;
    await settle();
    for (;;) {
      const due = this.popDue(target);
      if (!due) break;
      this.current = due.at;
      due.fn();
      await settle();
    }
    this.current = target;
  }

  private popDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    if (best) this.timers = this.timers.filter((t) => t !== best);
    return best;
  }
}
