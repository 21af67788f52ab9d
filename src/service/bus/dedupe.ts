/**
 * A bounded set of recently seen keys (oldest evicted first): the consumer-side dedupe window
 * for at-least-once delivery, so memory stays bounded however long a process runs.
 */
export class RecentKeys {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Adds `key`; returns false if it was already present. */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
    return true;
  }
}

/** Runs at most `limit` async jobs at once; `run` waits for a slot. */
export class JobLimit {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  /** Jobs running now. */
  get busy(): number {
    return this.active;
  }
}
