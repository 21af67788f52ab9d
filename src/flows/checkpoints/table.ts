/**
 * The checkpoint table, the same on SQLite and PostgreSQL: one row per flow run, written by a
 * versioned write, so two sessions racing on one call cannot both advance it.
 */

import type { SqlDialect, SqlRunner } from '../../core/sql/runner.js';
import type { TableSpec } from '../../core/sql/tables.js';
import { VersionedTable } from '../../core/sql/versioned.js';
import {
  type Checkpoint,
  CheckpointConflictError,
  type CheckpointKey,
  type CheckpointStore,
  checkKey,
  checkVersion,
  type FlowState,
} from './types.js';

/** The table name when none is configured. */
export const DEFAULT_CHECKPOINT_TABLE = 'taskline_flow_checkpoints';

/** The checkpoint table's columns. */
export const CHECKPOINT_TABLE: TableSpec = {
  columns: {
    flow: 'text',
    call_id: 'text',
    version: 'integer',
    status: 'text',
    position: 'text',
    state: 'json',
    updated_at: 'bigint',
  },
  primaryKey: ['flow', 'call_id'],
};

/** A stored row as a driver returns it (`state` is text on SQLite, parsed JSON on PostgreSQL). */
interface Row {
  version: number;
  state: unknown;
  updated_at: string | number;
}

/**
 * A checkpoint store on one SQL table, in either dialect: loads, versioned saves and deletes.
 * The SQLite and PostgreSQL stores add only how they open and close.
 */
export abstract class SqlCheckpointStore implements CheckpointStore {
  abstract readonly kind: string;
  private readonly versioned: VersionedTable;
  private readonly loadSql: string;
  private readonly deleteSql: string;
  /** SQLite keeps JSON as text; PostgreSQL's driver parses JSONB itself. */
  private readonly jsonAsText: boolean;

  /** `table` is already quoted; `db` runs the statements. */
  protected constructor(
    dialect: SqlDialect,
    table: string,
    protected readonly db: SqlRunner,
  ) {
    this.jsonAsText = dialect === 'sqlite';
    this.versioned = new VersionedTable(
      dialect,
      table,
      ['flow', 'call_id'],
      ['status', 'position', 'state', 'updated_at'],
    );
    const where =
      dialect === 'postgres' ? 'flow = $1 AND call_id = $2' : 'flow = ? AND call_id = ?';
    this.loadSql = `SELECT version, state, updated_at FROM ${table} WHERE ${where}`;
    this.deleteSql = `DELETE FROM ${table} WHERE ${where}`;
  }

  /** The latest checkpoint of a flow run, if any. */
  async load(key: CheckpointKey): Promise<Checkpoint | undefined> {
    checkKey(key);
    const row = await this.db.get<Row>(this.loadSql, [key.flow, key.callId]);
    if (!row) return undefined;
    return {
      key: { ...key },
      version: Number(row.version),
      state: this.jsonAsText ? parseStored(String(row.state)) : (row.state as FlowState),
      updatedAt: Number(row.updated_at),
    };
  }

  /** Writes `state` if the stored version is `expectedVersion`; the new version, or a conflict. */
  async save(key: CheckpointKey, state: FlowState, expectedVersion: number): Promise<number> {
    checkKey(key);
    checkVersion(expectedVersion);
    const values = [state.status, state.position, JSON.stringify(state), Date.now()];
    const result = await this.versioned.write(
      this.db,
      [key.flow, key.callId],
      values,
      expectedVersion,
    );
    if (!result.written) throw new CheckpointConflictError(key, expectedVersion, result.actual);
    return result.version;
  }

  /** Removes a flow run's checkpoint (no error if there is none). */
  async delete(key: CheckpointKey): Promise<void> {
    checkKey(key);
    await this.db.run(this.deleteSql, [key.flow, key.callId]);
  }

  /** Releases what the store opened (not what it was given). */
  abstract close(): Promise<void>;
}

/**
 * The stored text as data; text that is not JSON comes back as itself, so the flow refuses
 * it as a corrupt checkpoint (it never trusts what a store returns) instead of failing the store.
 */
function parseStored(text: string): FlowState {
  try {
    return JSON.parse(text) as FlowState;
  } catch {
    return text as unknown as FlowState;
  }
}
