/**
 * Delivery: every completion reaches the voice agent exactly once. A task's delivery is
 * claimed once — by the inline answer of its `task` call, by the call's final value, or
 * here, announced on the call's DeliveryChannel; completions ready within `coalesceMs` of
 * each other are released together so upstream speaks them in one deferred reply.
 */
import type { voice } from '@livekit/agents';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { logLine } from '../../core/log.js';
import { DeliveryChannel, type DeliveryEntry, type ReplyInstructions } from '../channel.js';
import type { Emit } from './events.js';
import type { TaskState } from './state.js';
import { deliveryText } from './wording.js';

interface Batch {
  release: () => void;
  released: Promise<void>;
  timer: TimerHandle | undefined;
}

/**
 * Tells the task's work it reached the caller, once (a durable delegation records it, so a
 * later job of the call never speaks it again); a failure to record is only logged.
 */
function receipt(task: TaskState): void {
  const done = task.receipt;
  task.receipt = undefined;
  if (!done) return;
  Promise.resolve()
    .then(done)
    .catch((error: unknown) =>
      logLine('taskline.delegation', 'warn', 'could not record that a result was delivered', {
        taskId: task.snap.id,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
}

/** The delivery side of one manager: its call's channel and the batch being gathered. */
export class Delivery {
  #channel: DeliveryChannel | undefined;
  #batch: Batch | undefined;

  constructor(
    private readonly clock: () => Clock,
    private readonly coalesceMs: number,
    private readonly emit: Emit,
  ) {}

  /** The channel of the attached call, once there is one. */
  get channel(): DeliveryChannel | undefined {
    return this.#channel;
  }

  /** Opens the channel into a newly attached call. */
  open(session: voice.AgentSession, instructions: ReplyInstructions | undefined): void {
    this.#channel = new DeliveryChannel(session, instructions);
  }

  /** Takes the task's delivery; false when someone already has. */
  claim(task: TaskState): boolean {
    if (task.claimed) return false;
    task.claimed = true;
    return true;
  }

  /** The model asked for the task's end (or nobody is to be told): nothing is spoken. */
  waive(task: TaskState): void {
    task.claimed = true;
    task.snap.delivery = 'none';
  }

  /** Records an answer given inside the `task` call itself. */
  inline(task: TaskState): void {
    if (!this.claim(task)) return;
    task.snap.delivery = 'inline';
    this.emit('delivered', task, 'inline');
    receipt(task);
  }

  /** After a task ended: speak it, unless a waiting tool call or an inline answer does. */
  afterFinish(task: TaskState): void {
    if (task.waiter || task.claimed || !task.settled) return;
    const channel = this.#channel;
    if (!task.notify || !channel || channel.closed) {
      this.waive(task);
      return;
    }
    this.claim(task);
    void this.joinBatch().then(() => {
      if (channel.closed) {
        task.snap.delivery = 'none';
        return;
      }
      void channel.announce(this.entry(task), task.origin);
    });
  }

  /** The channel entry that speaks a task's result and marks it delivered when spoken. */
  entry(task: TaskState): DeliveryEntry {
    return {
      taskId: task.snap.id,
      text: deliveryText(task.snap),
      onDelivered: () => {
        task.snap.delivery = 'spoken';
        this.emit('delivered', task, 'spoken');
        receipt(task);
      },
    };
  }

  /**
   * Resolves when the current delivery batch closes: the first completion opens a batch
   * of `coalesceMs` on the clock, later ones join it, and all are released in one tick so
   * upstream speaks them in one deferred reply.
   */
  joinBatch(): Promise<void> {
    if (this.coalesceMs === 0) return Promise.resolve();
    if (!this.#batch) {
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      const batch: Batch = { release, released, timer: undefined };
      batch.timer = this.clock().setTimer(this.coalesceMs, () => {
        if (this.#batch === batch) this.#batch = undefined;
        release();
      });
      this.#batch = batch;
    }
    return this.#batch.released;
  }

  /** Releases the batch now (the call or the manager is ending). */
  flushBatch(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    batch?.timer?.cancel();
    batch?.release();
  }

  /** Closes the channel: nothing more is delivered into the call. */
  async close(): Promise<void> {
    await this.#channel?.close();
  }
}
