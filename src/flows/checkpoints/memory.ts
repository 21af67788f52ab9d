import type { Checkpoint, CheckpointKey, CheckpointStore, FlowState } from './types.js';
import { CheckpointConflictError, checkKey, checkVersion } from './types.js';

/**
 * Checkpoints in process memory: for tests, demos, and flows that need go-back and
 * conflict safety but not survival across restarts. States are copied on the way in and
 * out, so callers never share objects with the store.
 */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly kind = 'memory';
  private readonly rows = new Map<string, { version: number; json: string; updatedAt: number }>();

  async load(key: CheckpointKey): Promise<Checkpoint | undefined> {
    checkKey(key);
    const row = this.rows.get(rowKey(key));
    if (!row) return undefined;
    return {
      key: { ...key },
      version: row.version,
      state: JSON.parse(row.json) as FlowState,
      updatedAt: row.updatedAt,
    };
  }

  async save(key: CheckpointKey, state: FlowState, expectedVersion: number): Promise<number> {
    checkKey(key);
    checkVersion(expectedVersion);
    const id = rowKey(key);
    const current = this.rows.get(id)?.version ?? 0;
    if (current !== expectedVersion) {
      throw new CheckpointConflictError(key, expectedVersion, current || undefined);
    }
    const version = expectedVersion + 1;
    this.rows.set(id, { version, json: JSON.stringify(state), updatedAt: Date.now() });
    return version;
  }

  async delete(key: CheckpointKey): Promise<void> {
    this.rows.delete(rowKey(key));
  }

  async close(): Promise<void> {}

  /** Number of stored flow runs. */
  get size(): number {
    return this.rows.size;
  }
}

function rowKey(key: CheckpointKey): string {
  return `${key.flow}\u0000${key.callId}`;
}
