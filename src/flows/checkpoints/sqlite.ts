import { quoteIdentifier } from '../../core/sql/identifiers.js';
import {
  openSqlite,
  type SqliteHandle,
  type SqliteSource,
  sqliteRunner,
} from '../../core/sql/sqlite.js';
import { createTableSql } from '../../core/sql/tables.js';
import { CHECKPOINT_TABLE, DEFAULT_CHECKPOINT_TABLE, SqlCheckpointStore } from './table.js';

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
export class SqliteCheckpointStore extends SqlCheckpointStore {
  readonly kind = 'sqlite';

  /** Opens (and creates if needed) the checkpoint table; loads better-sqlite3 lazily. */
  static async open(options: SqliteCheckpointOptions): Promise<SqliteCheckpointStore> {
    const table = quoteIdentifier(options.table ?? DEFAULT_CHECKPOINT_TABLE);
    const handle = openSqlite(options, 'the SQLite checkpoint store');
    handle.db.exec(createTableSql('sqlite', table, CHECKPOINT_TABLE));
    return new SqliteCheckpointStore(handle, table);
  }

  private constructor(
    private readonly handle: SqliteHandle,
    table: string,
  ) {
    super('sqlite', table, sqliteRunner(handle.db));
  }

  async close(): Promise<void> {
    this.handle.close();
  }
}
