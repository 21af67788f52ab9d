import type { Clock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import {
  type Checkpoint,
  type CheckpointKey,
  type CheckpointStore,
  type FlowState,
  isCheckpointConflict,
} from './checkpoints/types.js';

/** Longest wait for one checkpoint read or write unless the flow says otherwise. */
export const DEFAULT_CHECKPOINT_TIMEOUT_MS = 10_000;

/**
 * A flow run's side of its CheckpointStore: every load and save is bounded on the call's
 * clock, a store that fails or stays silent is remembered in `failure` (the flow then ends
 * `failed` with it) instead of throwing through the call, and a lost version race is kept
 * apart in `conflict`.
 */
export class CheckpointIO {
  /** The store's failure, once it failed; later calls are not attempted. */
  failure: Error | undefined;
  /** The conflict that lost this session the call, if it did. */
  conflict: Error | undefined;

  constructor(
    private readonly store: CheckpointStore | undefined,
    private readonly key: CheckpointKey,
    private readonly clock: Clock,
    private readonly timeoutMs = DEFAULT_CHECKPOINT_TIMEOUT_MS,
  ) {}

  /** False when the flow runs without checkpoints. */
  get enabled(): boolean {
    return this.store !== undefined;
  }

  /** The stored checkpoint; undefined when there is none, no store, or the store failed. */
  async load(): Promise<Checkpoint | undefined> {
    const store = this.store;
    if (!store || this.failure) return undefined;
    return this.bounded('load', () => store.load(this.key));
  }

  /** Writes `state` over `version`: the new version, or undefined (a conflict or a failure). */
  async save(state: FlowState, version: number): Promise<number | undefined> {
    const store = this.store;
    if (!store || this.failure) return undefined;
    return this.bounded('save', () => store.save(this.key, state, version));
  }

  /** The failure as a flow result's `error`: a stable code and the store's message. */
  errorInfo(): { code: string; message: string } | undefined {
    const failure = this.failure;
    if (!failure) return undefined;
    const code = (failure as { code?: unknown }).code;
    return {
      code: typeof code === 'string' && code ? code : 'store_error',
      message: failure.message,
    };
  }

  private async bounded<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
    const ms = this.timeoutMs;
    let timer: { cancel(): void } | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = this.clock.setTimer(ms, () =>
        reject(
          new TasklineError(
            'timeout',
            `The checkpoint store did not answer a ${what} within ${ms} ms. Check the store (is the database up?), or raise checkpointTimeoutMs.`,
          ),
        ),
      );
    });
    const work = Promise.resolve().then(fn);
    work.catch(() => undefined);
    try {
      return await Promise.race([work, silent]);
    } catch (error) {
      if (isCheckpointConflict(error)) this.conflict = error;
      else this.failure = error instanceof Error ? error : new Error(String(error));
      return undefined;
    } finally {
      timer?.cancel();
    }
  }
}
