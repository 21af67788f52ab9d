/**
 * Delivery: every completion reaches the voice agent exactly once. A task's delivery is
 * claimed once — by the inline answer of its `task` call, or here, handed to the call's
 * DeliveryChannel, which holds it until a safe moment and speaks it then. Completions that
 * finish close together are handed over together (one reply): the first opens a window of
 * `coalesceMs`, and the window closes early once no other task is queued or running, since
 * nothing else could join it (so a single result never waits on a clock that may not move).
 */
import type { voice } from '@livekit/agents';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { logLine } from '../../core/log.js';
import { DeliveryChannel, type DeliveryEntry, type ReplyInstructions } from '../channel.js';
import type { DeliverAt } from '../floor.js';
import type { TaskSnapshot } from '../types.js';
import type { Emit } from './events.js';
import type { TaskState } from './state.js';
import { deliveryText } from './wording.js';

interface Batch {
  entries: DeliveryEntry[];
  timer: TimerHandle | undefined;
}

/** What the delivery side needs from its manager. */
export interface DeliveryHost {
  clock(): Clock;
  /** True while any task is queued or running (it could still join the open batch). */
  othersRunning(): boolean;
  /** The manager's default result line (`TaskManagerOptions.resultLine`). */
  resultLine?: (task: TaskSnapshot) => string | undefined;
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
    private readonly host: DeliveryHost,
    private readonly coalesceMs: number,
    private readonly emit: Emit,
  ) {}

  /** The channel of the attached call, once there is one. */
  get channel(): DeliveryChannel | undefined {
    return this.#channel;
  }

  /** Opens the channel into a newly attached call. */
  open(
    session: voice.AgentSession,
    instructions: ReplyInstructions | undefined,
    deliverAt: DeliverAt | undefined,
  ): void {
    this.#channel = new DeliveryChannel(session, instructions, deliverAt);
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
    this.#join(this.entry(task));
  }

  /** The channel entry that speaks a task's result and marks it delivered when spoken. */
  entry(task: TaskState): DeliveryEntry {
    const line = (task.resultLine ?? this.host.resultLine)?.(task.snap);
    return {
      taskId: task.snap.id,
      text: deliveryText(task.snap),
      ...(line ? { line } : {}),
      ...(task.origin ? { origin: task.origin } : {}),
      onDelivered: () => {
        task.snap.delivery = 'spoken';
        this.emit('delivered', task, 'spoken');
        receipt(task);
      },
      onDropped: () => {
        task.snap.delivery = 'none';
      },
    };
  }

  /** Adds an entry to the open batch (opening one), releasing it when nothing else can join. */
  #join(entry: DeliveryEntry): void {
    if (!this.#batch) {
      const batch: Batch = { entries: [], timer: undefined };
      if (this.coalesceMs > 0) {
        batch.timer = this.host.clock().setTimer(this.coalesceMs, () => this.#release(batch));
      }
      this.#batch = batch;
    }
    const batch = this.#batch;
    batch.entries.push(entry);
    if (this.coalesceMs === 0 || !this.host.othersRunning()) this.#release(batch);
  }

  #release(batch: Batch): void {
    if (this.#batch === batch) this.#batch = undefined;
    batch.timer?.cancel();
    const channel = this.#channel;
    const entries = batch.entries.splice(0);
    if (!channel || channel.closed) {
      for (const e of entries) e.onDropped?.();
      return;
    }
    channel.deliver(entries);
  }

  /** Hands the open batch over now (the call or the manager is ending). */
  flushBatch(): void {
    const batch = this.#batch;
    if (batch) this.#release(batch);
  }

  /** Closes the channel: nothing more is delivered; what was still held is marked `none`. */
  async close(): Promise<void> {
    for (const entry of (await this.#channel?.close()) ?? []) entry.onDropped?.();
  }
}
