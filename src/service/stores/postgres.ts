import type { QueryResult, QueryResultRow } from 'pg';
import { type Clock, systemClock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { checkPrefix, quoteTable } from '../../core/sql/identifiers.js';
import {
  createTablesOnce,
  inTransaction,
  openPgPool,
  type PgPool,
  type PgPoolOptions,
} from '../../core/sql/postgres.js';
import type {
  DelegationPatch,
  DelegationRecord,
  StageUpdate,
  UpdateOptions,
} from '../../delegation/record.js';
import { existsError, notFoundError } from '../../delegation/stores/common.js';
import type { DurableDelegationStore, OutboxEntry, VersionedRecord } from './change.js';
import { planCreate, planDelete, planStage, planUpdate, recordFields } from './plan.js';
import { createPgTables, type PgStatements, pgStatements } from './postgres-schema.js';
import { type RecordRow, rowToRecord } from './rows.js';
import { SqlDelegationStore, toOutbox } from './sql-store.js';

/**
 * Options of {@link PostgresDelegationStore.open}: a pool or a URL, plus where the tables
 * live and how long to wait for the server (`connectTimeoutMs`, `queryTimeoutMs`).
 */
export interface PostgresDelegationStoreOptions extends PgPoolOptions {
  /** A connection URL; the store then owns its pool (default `TASKLINE_PG_URL`). */
  connectionString?: string;
  /** Schema for the tables (created if missing); default the connection's search path. */
  schema?: string;
  /** Table-name prefix (default `taskline_`). */
  prefix?: string;
  /** Clock for stage times (default the system clock). */
  clock?: Clock;
  /** Pool size when the store creates its pool (default 16). */
  max?: number;
}

/** One write of a mutation: the statement, its values and the record it stores. */
interface MutationPlan {
  sql: string;
  values: unknown[];
  record: DelegationRecord;
}

/**
 * Maps Postgres data errors (class 22: a NUL byte in text, bad JSON escapes, out-of-range
 * numbers) to `invalid_argument`, so bad input never surfaces as an internal error.
 */
function mapPgError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('22')) {
    return new TasklineError(
      'invalid_argument',
      `The database rejected a value: ${(error as Error).message}. Remove NUL bytes and keep numbers in range.`,
      { pgCode: code },
    );
  }
  return error;
}

/**
 * The scale-out delegation store on PostgreSQL (`pg`): records with JSONB status, every write
 * and its outbox row in one statement (a CTE), and `FOR UPDATE SKIP LOCKED` outbox claims so
 * several publishers can drain in parallel. A change to a record first tries an optimistic write
 * (read, then write if the version is unchanged); when another writer got there first it takes
 * the row lock (`SELECT … FOR UPDATE`) and writes in turn, so concurrent writers are serialised
 * and none is refused.
 */
export class PostgresDelegationStore extends SqlDelegationStore implements DurableDelegationStore {
  /** Which backend this is (for logs and benches). */
  readonly kind = 'postgres';
  private readonly sql: PgStatements;

  private constructor(
    private readonly pool: PgPool,
    table: string,
    private readonly outbox: string,
    clock: Clock,
  ) {
    super('postgres', table, clock);
    this.sql = pgStatements(table, outbox);
  }

  /** Connects (pg loaded on first use) and creates the schema and tables if needed. */
  static async open(
    options: PostgresDelegationStoreOptions = {},
  ): Promise<PostgresDelegationStore> {
    const prefix = checkPrefix(options.prefix ?? 'taskline_');
    const schema = options.schema === undefined ? undefined : checkPrefix(options.schema);
    const q = (name: string) => quoteTable(schema ? `${schema}.${name}` : name);
    const table = q(`${prefix}delegations`);
    const outbox = q(`${prefix}delegation_outbox`);
    const pool = await openPgPool(options, 'the PostgreSQL delegation store', {
      max: options.max ?? 16,
      fallbackUrl: process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    });
    try {
      await createTablesOnce(pool.gate, table, (client) =>
        createPgTables(client, { schema, prefix, table, outbox }),
      );
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new PostgresDelegationStore(pool, table, outbox, options.clock ?? systemClock);
  }

  private async run<R extends QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<QueryResult<R>> {
    try {
      return await this.pool.gate.query<R>(text, values);
    } catch (error) {
      throw mapPgError(error);
    }
  }

  private notify(): void {
    this.listeners.notify();
  }

  protected async rows<R>(sql: string, values: unknown[]): Promise<R[]> {
    return (await this.run(sql, values)).rows as R[];
  }

  protected async end(): Promise<void> {
    await this.pool.end();
  }

  async create(input: DelegationRecord): Promise<DelegationRecord> {
    const plan = planCreate(input, this.now());
    const { record, change } = plan;
    const res = await this.run(this.sql.create, [
      record.delegation_id,
      ...recordFields(record),
      plan.status,
      plan.data,
      plan.openDeadline,
      JSON.stringify(change),
      change.incarnation,
      plan.stale,
    ]);
    if (res.rowCount === 0) throw existsError(record.delegation_id);
    this.notify();
    return record;
  }

  /**
   * Read, change in memory, write if the version is unchanged. When another writer changed the
   * record in between, lock the row (`FOR UPDATE`), read it again and write under the lock:
   * concurrent writers queue on the row lock instead of failing.
   */
  private async mutate(
    id: string,
    build: (current: VersionedRecord, nowMs: number) => MutationPlan,
  ): Promise<DelegationRecord> {
    const current = await this.load(id);
    if (!current) throw notFoundError(id);
    const plan = build(current, this.now());
    const res = await this.run(plan.sql, plan.values);
    if (res.rowCount !== 0) {
      this.notify();
      return plan.record;
    }
    const record = await this.locked(id, build);
    this.notify();
    return record;
  }

  private async locked(
    id: string,
    build: (current: VersionedRecord, nowMs: number) => MutationPlan,
  ): Promise<DelegationRecord> {
    try {
      return await inTransaction(this.pool.gate, async (client) => {
        const { rows } = await client.query<RecordRow & QueryResultRow>(this.sql.lock, [id]);
        if (!rows[0]) throw notFoundError(id);
        const plan = build(rowToRecord(rows[0]), this.now());
        const res = await client.query(plan.sql, plan.values);
        if (res.rowCount === 0) {
          // Impossible while the row is locked; never report a write that did not happen.
          throw new TasklineError('conflict', `Delegation ${id} changed under its row lock.`, {
            id,
          });
        }
        return plan.record;
      });
    } catch (error) {
      throw mapPgError(error);
    }
  }

  async setStage(id: string, stage: string, update: StageUpdate): Promise<DelegationRecord> {
    return this.mutate(id, (current, now) => {
      const plan = planStage(current, stage, update, now);
      return {
        sql: this.sql.setStatus,
        values: [
          id,
          current.version,
          plan.status,
          plan.openDeadline,
          JSON.stringify(plan.change),
          plan.stale,
        ],
        record: plan.record,
      };
    });
  }

  async update(
    id: string,
    patch: DelegationPatch,
    options: UpdateOptions = {},
  ): Promise<DelegationRecord> {
    return this.mutate(id, (current, now) => {
      const plan = planUpdate(current, patch, options, now);
      const { record } = plan;
      return {
        sql: this.sql.setData,
        values: [
          id,
          current.version,
          ...recordFields(record),
          plan.data,
          JSON.stringify(plan.change),
        ],
        record,
      };
    });
  }

  async delete(id: string): Promise<boolean> {
    try {
      await this.mutate(id, (current, now) => {
        const plan = planDelete(current, now);
        return {
          sql: this.sql.delete,
          values: [id, current.version, JSON.stringify(plan.change)],
          record: plan.record,
        };
      });
      return true;
    } catch (error) {
      if (error instanceof TasklineError && error.code === 'not_found') return false;
      throw error;
    }
  }

  async claimOutbox(limit: number, now: number, leaseUntil: number): Promise<OutboxEntry[]> {
    const { rows } = await this.run<{ seq: string; change: unknown }>(this.sql.claim, [
      leaseUntil,
      now,
      limit,
    ]);
    return toOutbox(rows);
  }

  async ackOutbox(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) await this.run(this.sql.ack, [seqs]);
  }

  async releaseOutbox(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) await this.run(this.sql.release, [seqs]);
  }

  async outboxSize(): Promise<number> {
    const { rows } = await this.run<{ n: number }>(this.sql.size, []);
    return Number(rows[0]?.n ?? 0);
  }

  /** Drops this store's tables (tests and benches clean up with it). */
  async dropTables(): Promise<void> {
    await this.run(`DROP TABLE IF EXISTS ${this.table}, ${this.outbox}`, []);
  }
}
