/**
 * Task deadlines on one clock timer. A manager with a thousand tasks in flight arms one
 * timer (for the earliest deadline) instead of a thousand: per-task timers were a sixth of
 * the manager's CPU cost per task. Deadlines due at the same time fire in the order they
 * were added.
 */
import type { Clock, TimerHandle } from '../../core/clock.js';

/** One deadline; cancel it when its task ends first. */
export interface Deadline {
  readonly at: number;
  cancel(): void;
}

interface Entry extends Deadline {
  readonly seq: number;
  readonly fire: () => void;
  cancelled: boolean;
}

function earlier(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** The deadlines of the tasks started on one clock. */
export class Deadlines {
  readonly #heap: Entry[] = [];
  #timer: TimerHandle | undefined;
  #armedAt = Number.POSITIVE_INFINITY;
  #seq = 0;
  /** Deadlines neither fired nor cancelled; the timer is dropped when none is left. */
  #live = 0;

  constructor(readonly clock: Clock) {}

  /** Calls `fire` once `ms` have passed on the clock, unless cancelled first. */
  add(ms: number, fire: () => void): Deadline {
    const entry: Entry = {
      at: this.clock.now() + ms,
      seq: this.#seq++,
      fire,
      cancelled: false,
      cancel: () => {
        if (entry.cancelled) return;
        entry.cancelled = true;
        this.#live -= 1;
        if (this.#live === 0) this.#clear();
      },
    };
    this.#push(entry);
    this.#live += 1;
    if (entry.at < this.#armedAt) this.#arm();
    return entry;
  }

  #clear(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    this.#heap.length = 0;
  }

  #arm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    while (this.#heap[0]?.cancelled) this.#pop();
    const next = this.#heap[0];
    if (!next) return;
    this.#armedAt = next.at;
    this.#timer = this.clock.setTimer(Math.max(0, next.at - this.clock.now()), () => this.#fire());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (let next = this.#heap[0]; next && next.at <= now; next = this.#heap[0]) {
      this.#pop();
      if (next.cancelled) continue;
      next.cancelled = true;
      this.#live -= 1;
      next.fire();
    }
    if (this.#live === 0) this.#clear();
    else if (this.#timer === undefined) this.#arm();
  }

  #push(entry: Entry): void {
    const heap = this.#heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (!earlier(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (!last || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) break;
      const r = l + 1;
      const c = r < heap.length && earlier(heap[r]!, heap[l]!) ? r : l;
      if (!earlier(heap[c]!, last)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = last;
  }
}
