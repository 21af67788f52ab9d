import type { Pool } from 'pg';
import { TasklineError } from '../../core/errors.js';
import { loadOptional } from '../../core/optional.js';
import {
  PgGate,
  type PostgresTimeouts,
  pgPoolTimeouts,
  quoteTable,
  resolvePgTimeouts,
} from '../../core/postgres.js';
import {
  type Checkpoint,
  CheckpointConflictError,
  type CheckpointKey,
  type CheckpointStore,
  checkKey,
  checkVersion,
  type FlowState,
} from './types.js';

/**
 * Options of {@link PostgresCheckpointStore.connect}: a pool you own, or a URL, and how long
 * to wait for the server (`connectTimeoutMs`, `queryTimeoutMs`; they bound your pool too).
 */
export interface PostgresCheckpointOptions extends PostgresTimeouts {
  /** A pg pool; the store never ends it. */
  pool?: Pool;
  /** A connection string; the store opens (and on close ends) its own pool. */
  connectionString?: string;
  /** Table, optionally schema-qualified ("app.checkpoints"). Default `taskline_flow_checkpoints`. */
  table?: string;
}

interface Row {
  version: number;
  state: FlowState;
  updated_at: string;
}

/**
 * Checkpoints in PostgreSQL (`pg`), for many processes or machines. Each write is one
 * transaction whose UPDATE names the version it replaces, so a racing session loses
 * cleanly. `pg` is loaded on first use, never by `import 'taskline'`.
 */
export class PostgresCheckpointStore implements CheckpointStore {
  readonly kind = 'postgres';
  /** The quoted table name. */
  readonly table: string;
  private readonly pool: Pool;
  private readonly gate: PgGate;
  private readonly owned: boolean;
  private closed = false;

  /** Opens a pool if needed and creates the table if missing. */
  static async connect(options: PostgresCheckpointOptions): Promise<PostgresCheckpointStore> {
    const table = quoteTable(options.table ?? 'taskline_flow_checkpoints');
    const timeouts = resolvePgTimeouts(options);
    let pool = options.pool;
    let owned = false;
    if (!pool) {
      if (!options.connectionString) {
        throw new TasklineError(
          'invalid_argument',
          'PostgresCheckpointStore needs `pool` or `connectionString`.',
        );
      }
      const { default: pg } = await loadOptional(
        () => import('pg'),
        'pg',
        'the PostgreSQL checkpoint store',
      );
      pool = new pg.Pool({
        connectionString: options.connectionString,
        max: 8,
        ...pgPoolTimeouts(timeouts),
      });
      owned = true;
    }
    const store = new PostgresCheckpointStore(
      pool,
      new PgGate(pool, timeouts, 'checkpoint store'),
      table,
      owned,
    );
    try {
      await store.init();
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  private constructor(pool: Pool, gate: PgGate, table: string, owned: boolean) {
    this.pool = pool;
    this.gate = gate;
    this.table = table;
    this.owned = owned;
  }

  private async init(): Promise<void> {
    const client = await this.gate.connect();
    try {
      await client.query('BEGIN');
      // Concurrent CREATE TABLE IF NOT EXISTS can collide in the catalog; serialize it.
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `taskline_flow_checkpoints_ddl:${this.table}`,
      ]);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
        flow text NOT NULL,
        call_id text NOT NULL,
        version integer NOT NULL,
        status text NOT NULL,
        position text NOT NULL,
        state jsonb NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (flow, call_id)
      )`);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async load(key: CheckpointKey): Promise<Checkpoint | undefined> {
    checkKey(key);
    const { rows } = await this.gate.query<Row>(
      `SELECT version, state, updated_at FROM ${this.table} WHERE flow = $1 AND call_id = $2`,
      [key.flow, key.callId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      key: { ...key },
      version: row.version,
      state: row.state,
      updatedAt: Number(row.updated_at),
    };
  }

  async save(key: CheckpointKey, state: FlowState, expectedVersion: number): Promise<number> {
    checkKey(key);
    checkVersion(expectedVersion);
    const json = JSON.stringify(state);
    const now = Date.now();
    const client = await this.gate.connect();
    try {
      await client.query('BEGIN');
      const result =
        expectedVersion === 0
          ? await client.query<{ version: number }>(
              `INSERT INTO ${this.table} (flow, call_id, version, status, position, state, updated_at)
               VALUES ($1, $2, 1, $3, $4, $5::jsonb, $6)
               ON CONFLICT (flow, call_id) DO NOTHING RETURNING version`,
              [key.flow, key.callId, state.status, state.position, json, now],
            )
          : await client.query<{ version: number }>(
              `UPDATE ${this.table} SET version = version + 1, status = $3, position = $4,
               state = $5::jsonb, updated_at = $6
               WHERE flow = $1 AND call_id = $2 AND version = $7 RETURNING version`,
              [key.flow, key.callId, state.status, state.position, json, now, expectedVersion],
            );
      const written = result.rows[0]?.version;
      if (written === undefined) {
        const { rows } = await client.query<{ version: number }>(
          `SELECT version FROM ${this.table} WHERE flow = $1 AND call_id = $2`,
          [key.flow, key.callId],
        );
        await client.query('ROLLBACK');
        throw new CheckpointConflictError(key, expectedVersion, rows[0]?.version);
      }
      await client.query('COMMIT');
      return written;
    } catch (err) {
      if (!(err instanceof CheckpointConflictError)) {
        await client.query('ROLLBACK').catch(() => {});
      }
      throw err;
    } finally {
      client.release();
    }
  }

  async delete(key: CheckpointKey): Promise<void> {
    checkKey(key);
    await this.gate.query(`DELETE FROM ${this.table} WHERE flow = $1 AND call_id = $2`, [
      key.flow,
      key.callId,
    ]);
  }

  /** Drops the table (tests and teardown). */
  async drop(): Promise<void> {
    await this.gate.query(`DROP TABLE IF EXISTS ${this.table}`);
  }

  async close(): Promise<void> {
    if (!this.owned || this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
