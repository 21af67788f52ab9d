import { quoteIdentifier } from '../../core/sql/identifiers.js';
import {
  openSqlite,
  type SqliteHandle,
  type SqliteSource,
  sqliteRunner,
} from '../../core/sql/sqlite.js';
import { createTableSql } from '../../core/sql/tables.js';
import type { SqlRunner } from '../../core/sql/versioned.js';
import { CHECKPOINT_TABLE, CheckpointTable, DEFAULT_CHECKPOINT_TABLE } from './table.js';
import type { Checkpoint, CheckpointKey, CheckpointStore, FlowState } from './types.js';

/** Options of {@link SqliteCheckpointStore.open}: a database file, or an open handle. */
export type SqliteCheckpointOptions = {
  /** Table name (letters, digits, "_"). Default `taskline_flow_checkpoints`. */
  table?: string;
} & SqliteSource;

/**
 * Checkpoints in an embedded SQLite file (better-sqlite3, WAL): the default store. Every
 * write names the version it replaces, so several processes may share the file and a racing
 * session loses cleanly. better-sqlite3 is loaded on first use, never by `import 'taskline'`.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly kind = 'sqlite';
  private readonly db: SqlRunner;
  private readonly rows: CheckpointTable;

  /** Opens (and creates if needed) the checkpoint table; loads better-sqlite3 lazily. */
  static async open(options: SqliteCheckpointOptions): Promise<SqliteCheckpointStore> {
    const table = quoteIdentifier(options.table ?? DEFAULT_CHECKPOINT_TABLE);
    return new SqliteCheckpointStore(openSqlite(options, 'the SQLite checkpoint store'), table);
  }

  private constructor(
    private readonly handle: SqliteHandle,
    table: string,
  ) {
    handle.db.exec(createTableSql('sqlite', table, CHECKPOINT_TABLE));
    this.db = sqliteRunner(handle.db);
    this.rows = new CheckpointTable('sqlite', table);
  }

  async load(key: CheckpointKey): Promise<Checkpoint | undefined> {
    return this.rows.load(this.db, key);
  }

  async save(key: CheckpointKey, state: FlowState, expectedVersion: number): Promise<number> {
    return this.rows.save(this.db, key, state, expectedVersion);
  }

  async delete(key: CheckpointKey): Promise<void> {
    await this.rows.delete(this.db, key);
  }

  async close(): Promise<void> {
    this.handle.close();
  }
}
