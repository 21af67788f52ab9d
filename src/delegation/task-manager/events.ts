/** The manager's task events: subscribers, and an emit that builds an event only when heard. */
import type { TaskEvent } from '../types.js';

/** Builds an event on demand (a snapshot copy costs; nobody may be listening). */
export type Emit = (make: () => TaskEvent) => void;

/** The subscribers of one manager. A subscriber that throws never breaks delegation. */
export class TaskEvents {
  readonly #listeners = new Set<(event: TaskEvent) => void>();

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells every subscriber; the event is only built when someone listens. */
  readonly emit: Emit = (make) => {
    if (this.#listeners.size === 0) return;
    const event = make();
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's bug must not break delegation.
      }
    }
  };
}
