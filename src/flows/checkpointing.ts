/**
 * A flow run's checkpoints: claiming the call for this session with one versioned write
 * (fresh, resumed, already completed, or lost to another session) and every later write,
 * each announced as a {@link CheckpointInfo}.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import { traceCheckpoint } from '../observability/flows.js';
import { CheckpointIO } from './checkpoint-io.js';
import type { CheckpointKey, CheckpointStore, FlowState } from './checkpoints/types.js';
import type { FlowDefinition } from './definition.js';
import { type Restored, storedSavedAt, storedStatus } from './restore.js';
import type { CheckpointRefusal, FlowStatus } from './types.js';

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

/** How a claim went: a new call, a resumed one, one already completed, refused, or lost. */
export type Claim = 'fresh' | 'resumed' | 'completed' | 'refused' | 'lost';

/** Resumes within this long of the last write unless the run says otherwise (30 minutes). */
export const DEFAULT_RESUME_WINDOW_MS = 30 * 60_000;

/** What {@link FlowCheckpoints.claim} needs from the runner. */
export interface ClaimOptions {
  /** A new call's state. */
  fresh: () => FlowState;
  /** A stored state, checked and re-walked for this flow's definition. */
  restore: (saved: unknown) => Promise<Restored | { ok: false; refusal: CheckpointRefusal }>;
  /** A checkpoint that already completed: start over (default) or return its result. */
  ifCompleted?: 'return' | 'restart';
  /** A checkpoint that cannot be trusted: fail with the refusal (default) or start over. */
  ifRefused?: 'fail' | 'restart';
  /** A checkpoint last written longer ago than this is not resumed: the call starts afresh. */
  resumeWindowMs?: number;
  /** Now, on the call's clock. */
  now: number;
}

/** What a claim hands back: the state to continue from (or report from) and what it found. */
export interface ClaimResult {
  claim: Claim;
  state: FlowState;
  /** Masked answers to ask again (resumed) or missing from the value (completed). */
  reask?: string[];
  /** Those of `reask` withheld from the checkpoint because they are secret. */
  secret?: string[];
  /** Where the caller was (resumed). */
  resumeAt?: string;
  /** Why the stored checkpoint was refused. */
  refusal?: CheckpointRefusal;
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
    private readonly clock: Clock,
    timeoutMs: number | undefined,
    private readonly onWrite: (info: CheckpointInfo) => void,
    /** The state as the store sees it (masked answers withheld or sealed). */
    private readonly toStored: (state: FlowState) => FlowState = (s) => s,
  ) {
    this.io = new CheckpointIO(store, key, clock, timeoutMs);
  }

  /**
   * Loads the call's checkpoint and claims it for this session with one versioned write.
   * A checkpoint older than the resume window, or completed (unless `ifCompleted: 'return'`),
   * starts the call afresh; one that does not hold up is refused (nothing is written). A
   * claim that loses to a session which has since stopped (its final write landed between
   * our read and our write) is retried; one that loses to a live session is lost.
   */
  async claim(initial: FlowState, options: ClaimOptions): Promise<ClaimResult> {
    const io = this.io;
    let state = initial;
    const window = options.resumeWindowMs ?? DEFAULT_RESUME_WINDOW_MS;
    for (let attempt = 0; ; attempt++) {
      const loaded = await io.load();
      if (io.failure) return { claim: 'lost', state };
      this.version = loaded?.version ?? 0;
      const raw: unknown = loaded?.state;
      const savedAt = loaded ? (storedSavedAt(raw) ?? loaded.updatedAt) : undefined;
      const usable =
        loaded !== undefined &&
        !(savedAt !== undefined && options.now - savedAt > window) &&
        !(storedStatus(raw) === 'completed' && options.ifCompleted !== 'return');
      let result: ClaimResult | undefined;
      if (usable) {
        const restored = await options.restore(raw);
        if (!restored.ok) {
          if (options.ifRefused !== 'restart') {
            return { claim: 'refused', state, refusal: restored.refusal };
          }
        } else if (restored.state.status === 'completed') {
          return { claim: 'completed', state: restored.state, reask: restored.reask };
        } else {
          result = {
            claim: 'resumed',
            state: restored.state,
            reask: restored.reask,
            secret: restored.secret,
            resumeAt: restored.resumeAt,
          };
        }
      }
      result ??= { claim: 'fresh', state: options.fresh() };
      state = result.state;
      state.owner = `${process.pid}:${randomUUID()}`;
      state.status = 'running';
      delete state.reason;
      delete state.step;
      delete state.endedAt;
      if (result.claim === 'resumed') state.resumes += 1;
      if (await this.persist(state)) return result;
      if (io.failure) return { claim: 'lost', state };
      const current = await io.load();
      if (io.failure || attempt >= 2 || !current || storedStatus(current.state) === 'running') {
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
    state.savedAt = this.clock.now();
    const stored = this.toStored(state);
    const written = await traceCheckpoint(this.key.flow, step, () => io.save(stored, this.version));
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
  const version = def.options.version;
  return {
    ...(version !== undefined ? { version } : {}),
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
