/**
 * The manager's task events. Parts of the manager report a change with the live task; the
 * public {@link TaskEvent} (with its snapshot copy) is only built when someone subscribed,
 * and the manager's own observer (its spans and metrics) reads the live snapshot in place.
 * A thousand tasks in flight emit thousands of events: nothing is copied for nobody.
 */
import type { TaskEvent, TaskSnapshot } from '../types.js';
import { snapshotOf, type TaskState } from './state.js';

/** What changed in a task's life. */
export type TaskChange = TaskEvent['type'];

/** Reports a change: `detail` is the delivery route (`delivered`) or the error (`store_error`). */
export type Emit = {
  (type: 'queued' | 'started' | 'released' | 'finished', task: TaskState): void;
  (type: 'delivered', task: TaskState, via: 'inline' | 'spoken'): void;
  (type: 'store_error', task: TaskState, error: unknown): void;
};

/**
 * Sees every change first, synchronously, with the task's live snapshot: read it during the
 * call (or later, knowing it keeps changing), never write to it.
 */
export type TaskObserver = (
  type: TaskChange,
  task: Readonly<TaskSnapshot>,
  detail?: unknown,
) => void;

/** The subscribers of one manager. A subscriber that throws never breaks delegation. */
export class TaskEvents {
  readonly #listeners = new Set<(event: TaskEvent) => void>();

  constructor(private readonly observer?: TaskObserver) {}

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: TaskEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells the observer, then every subscriber (the event is only built when someone listens). */
  readonly emit: Emit = (type: TaskChange, task: TaskState, detail?: unknown): void => {
    if (this.observer) {
      try {
        this.observer(type, task.snap, detail);
      } catch {
        // Instrumentation must not break delegation.
      }
    }
    if (this.#listeners.size === 0) return;
    const event = publicEvent(type, task, detail);
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's bug must not break delegation.
      }
    }
  };
}

function publicEvent(type: TaskChange, task: TaskState, detail: unknown): TaskEvent {
  switch (type) {
    case 'store_error':
      return { type, taskId: task.snap.id, error: detail };
    case 'delivered':
      return { type, task: snapshotOf(task), via: detail as 'inline' | 'spoken' };
    default:
      return { type, task: snapshotOf(task) };
  }
}
