import { TasklineError } from '../../core/errors.js';
import type { FlowVersion } from '../definition.js';
import type { StepEntry } from '../graph.js';
import type { FlowStatus, StepRecord } from '../types.js';

/** Identifies one flow run: the flow's checkpoint key (its name by default) and the call. */
export interface CheckpointKey {
  flow: string;
  callId: string;
}

/**
 * Everything a flow needs to continue a call: where it is, the answers (typed values as
 * JSON), per-step visit counters and the step records for the report. Written whole, in
 * one transaction, after every step.
 */
export interface FlowState {
  flow: string;
  callId: string;
  status: FlowStatus | 'running';
  /** The next step to run (`'end'` once finished). */
  position: string;
  /** What each step left: a value or a skip. */
  entries: Record<string, StepEntry>;
  /** Steps on the current path, in order. */
  path: string[];
  /** Runs per step in this call. */
  visits: Record<string, number>;
  /** Every step run so far (for the report). */
  records: StepRecord[];
  backSteps: number;
  /** A go-back in progress: the step being revisited and the step the caller left. */
  revisit?: { step: string; returnTo: string };
  /** Sessions that resumed the call. */
  resumes: number;
  /** The session currently advancing the call. */
  owner: string;
  startedAt: number;
  endedAt?: number;
  /** Why the flow stopped, when it has. */
  reason?: string;
  /** The step it stopped on, when it failed there. */
  step?: string;
  /** The flow's version when the state was written (see FlowOptions.version). */
  version?: FlowVersion;
  /** When the state was written, on the call's clock (ms since epoch): resumes have a window. */
  savedAt?: number;
}

/** A stored checkpoint: the state and the version that guards it. */
export interface Checkpoint {
  key: CheckpointKey;
  /** Incremented by every write; a write must name the version it read. */
  version: number;
  /**
   * The state as stored. A flow never trusts it: it is checked field by field and re-walked
   * before a call resumes (a row edited in the database is refused, not thrown on).
   */
  state: FlowState;
  /** Wall-clock time of the write (ms since epoch). */
  updatedAt: number;
}

/**
 * Where flows keep their checkpoints. Writes are versioned: `save` succeeds only when
 * the stored version still equals `expectedVersion` (0 = nothing stored yet), so two
 * sessions racing on one call cannot both advance it.
 */
export interface CheckpointStore {
  /** "memory", "sqlite", "postgres", ... */
  readonly kind: string;
  /** The latest checkpoint of a flow run, if any. */
  load(key: CheckpointKey): Promise<Checkpoint | undefined>;
  /**
   * Writes `state` in one transaction if the stored version is `expectedVersion`, and
   * returns the new version. Throws {@link CheckpointConflictError} otherwise.
   */
  save(key: CheckpointKey, state: FlowState, expectedVersion: number): Promise<number>;
  /** Removes a flow run's checkpoint (no error if there is none). */
  delete(key: CheckpointKey): Promise<void>;
  /** Releases what the store opened (not what it was given). */
  close(): Promise<void>;
}

/** A versioned write lost: another session advanced the same call first. */
export class CheckpointConflictError extends TasklineError {
  readonly expectedVersion: number;
  readonly actualVersion: number | undefined;

  constructor(key: CheckpointKey, expectedVersion: number, actualVersion: number | undefined) {
    super(
      'conflict',
      `Call "${key.callId}" (flow "${key.flow}") was advanced by another session: this one expected checkpoint version ${expectedVersion} but found ${actualVersion ?? 'none'}. Only one session may run a call; this one stopped without changing it.`,
      { ...key, expectedVersion, actualVersion },
    );
    this.name = 'CheckpointConflictError';
    this.expectedVersion = expectedVersion;
    this.actualVersion = actualVersion;
  }
}

/** True when `err` is a lost versioned write. */
export function isCheckpointConflict(err: unknown): err is CheckpointConflictError {
  return err instanceof CheckpointConflictError;
}

/** Checks a checkpoint key before it reaches a database. */
export function checkKey(key: CheckpointKey): void {
  for (const [name, v] of [
    ['flow', key.flow],
    ['callId', key.callId],
  ] as const) {
    if (typeof v !== 'string' || v.length === 0 || v.length > 256) {
      throw new TasklineError(
        'invalid_argument',
        `Checkpoint ${name} must be a non-empty string of at most 256 characters (got ${JSON.stringify(v)}).`,
      );
    }
  }
}

/** Checks a version number a caller passes to `save`. */
export function checkVersion(expectedVersion: number): void {
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    throw new TasklineError(
      'invalid_argument',
      `expectedVersion must be a whole number >= 0 (got ${String(expectedVersion)}).`,
    );
  }
}
