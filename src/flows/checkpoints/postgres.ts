import { quoteTable } from '../../core/sql/identifiers.js';
import {
  createTablesOnce,
  openPgPool,
  type PgPool,
  type PgPoolOptions,
  pgRunner,
} from '../../core/sql/postgres.js';
import { createTableSql } from '../../core/sql/tables.js';
import { CHECKPOINT_TABLE, DEFAULT_CHECKPOINT_TABLE, SqlCheckpointStore } from './table.js';

/**
 * Options of {@link PostgresCheckpointStore.connect}: a pool you own, or a URL, and how long
 * to wait for the server (`connectTimeoutMs`, `queryTimeoutMs`; they bound your pool too).
 */
export interface PostgresCheckpointOptions extends PgPoolOptions {
  /** Table, optionally schema-qualified ("app.checkpoints"). Default `taskline_flow_checkpoints`. */
  table?: string;
}

/**
 * Checkpoints in PostgreSQL (`pg`), for many processes or machines. Every write names the
 * version it replaces, so a racing session loses cleanly. `pg` is loaded on first use, never
 * by `import 'taskline'`.
 */
export class PostgresCheckpointStore extends SqlCheckpointStore {
  readonly kind = 'postgres';
  /** The quoted table name. */
  readonly table: string;
  private closed = false;

  /** Opens a pool if needed and creates the table if missing. */
  static async connect(options: PostgresCheckpointOptions): Promise<PostgresCheckpointStore> {
    const table = quoteTable(options.table ?? DEFAULT_CHECKPOINT_TABLE);
    const pool = await openPgPool(options, 'the PostgreSQL checkpoint store', { max: 8 });
    try {
      await createTablesOnce(pool.gate, table, async (client) => {
        await client.query(createTableSql('postgres', table, CHECKPOINT_TABLE));
      });
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresCheckpointStore(pool, table);
  }

  private constructor(
    private readonly pool: PgPool,
    table: string,
  ) {
    super('postgres', table, pgRunner(pool.gate));
    this.table = table;
  }

  /** Drops the table (tests and teardown). */
  async drop(): Promise<void> {
    await this.db.run(`DROP TABLE IF EXISTS ${this.table}`, []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
