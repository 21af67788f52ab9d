/**
 * A flow run's checkpoints: claiming the call for this session with one versioned write
 * (fresh, resumed, already completed, or lost to another session) and every later write,
 * each announced as a {@link CheckpointInfo}. Bounded store calls are ./checkpoint-io.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { traceCheckpoint } from '../observability/flows.js';
import { CheckpointIO } from './checkpoint-io.js';
import type { CheckpointKey, CheckpointStore, FlowState } from './checkpoints/types.js';
import type { FlowDefinition } from './definition.js';
import type { FlowStatus } from './types.js';

/** Emitted after every checkpoint write. */
export interface CheckpointInfo {
  flow: string;
  callId: string;
  version: number;
  status: FlowStatus | 'running';
  /** The next step to run (`'end'` once finished). */
  position: string;
  /** The step whose result the write recorded, if any. */
  step?: string;
}

/** How a claim went: a new call, a resumed one, one already completed, or lost. */
export type Claim = 'fresh' | 'resumed' | 'completed' | 'lost';

/** What {@link FlowCheckpoints.claim} needs from the runner. */
export interface ClaimOptions {
  /** A new call's state. */
  fresh: () => FlowState;
  /** A stored state, re-checked for this flow's definition. */
  restore: (saved: FlowState) => FlowState;
  /** A checkpoint that already completed: return its result (default) or start over. */
  ifCompleted?: 'return' | 'restart';
}

/** The checkpoint side of one flow run: its key, the version it holds, and its writes. */
export class FlowCheckpoints {
  /** The version this session last read or wrote (0 before anything is stored). */
  version = 0;
  /** The bounded store calls (its `failure` and `conflict` explain a lost claim or write). */
  readonly io: CheckpointIO;

  constructor(
    store: CheckpointStore | undefined,
    readonly key: CheckpointKey,
    clock: Clock,
    timeoutMs: number | undefined,
    private readonly onWrite: (info: CheckpointInfo) => void,
  ) {
    this.io = new CheckpointIO(store, key, clock, timeoutMs);
  }

  /**
   * Loads the call's checkpoint and claims it for this session with one versioned write.
   * A claim that loses to a session which has since stopped (its final write landed
   * between our read and our write) is retried; one that loses to a live session is lost.
   * Returns the state to continue from (or report from, when lost).
   */
  async claim(
    initial: FlowState,
    options: ClaimOptions,
  ): Promise<{ claim: Claim; state: FlowState }> {
    const io = this.io;
    let state = initial;
    for (let attempt = 0; ; attempt++) {
      const loaded = await io.load();
      if (io.failure) return { claim: 'lost', state };
      if (loaded?.state.status === 'completed' && options.ifCompleted !== 'restart') {
        this.version = loaded.version;
        return { claim: 'completed', state: loaded.state };
      }
      const resumed = loaded !== undefined && loaded.state.status !== 'completed';
      this.version = loaded?.version ?? 0;
      state = resumed ? options.restore(loaded.state) : options.fresh();
      state.owner = `${process.pid}:${randomUUID()}`;
      state.status = 'running';
      delete state.reason;
      delete state.step;
      delete state.endedAt;
      if (resumed) state.resumes += 1;
      if (await this.persist(state)) return { claim: resumed ? 'resumed' : 'fresh', state };
      if (io.failure) return { claim: 'lost', state };
      const current = await io.load();
      if (io.failure || attempt >= 2 || !current || current.state.status === 'running') {
        return { claim: 'lost', state };
      }
    }
  }

  /**
   * One versioned write; false when another session advanced the call first, or when the
   * store failed (see {@link CheckpointIO}). Without a store, true and nothing is written.
   */
  async persist(state: FlowState, step?: string): Promise<boolean> {
    const io = this.io;
    if (!io.enabled) return true;
    const written = await traceCheckpoint(this.key.flow, step, () => io.save(state, this.version));
    if (written === undefined) return false;
    this.version = written;
    const info: CheckpointInfo = {
      flow: this.key.flow,
      callId: this.key.callId,
      version: written,
      status: state.status,
      position: state.position,
      ...(step ? { step } : {}),
    };
    this.onWrite(info);
    return true;
  }
}

/** The state of a call that starts at the flow's first step. */
export function freshState(def: FlowDefinition, key: CheckpointKey, now: number): FlowState {
  return {
    flow: key.flow,
    callId: key.callId,
    status: 'running',
    position: def.steps[0]!.id,
    entries: {},
    path: [],
    visits: {},
    records: [],
    backSteps: 0,
    resumes: 0,
    owner: '',
    startedAt: now,
  };
}
