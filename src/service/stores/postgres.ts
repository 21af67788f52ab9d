import { randomUUID } from 'node:crypto';
import type { Pool, QueryResult, QueryResultRow } from 'pg';
import { type Clock, systemClock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { loadOptional } from '../../core/optional.js';
import {
  type BoundedClient,
  PgGate,
  type PostgresTimeouts,
  pgPoolTimeouts,
  quoteTable,
  resolvePgTimeouts,
} from '../../core/postgres.js';
import {
  type DelegationFilter,
  type DelegationPage,
  type DelegationPatch,
  type DelegationRecord,
  type DelegationState,
  epochSeconds,
  type OverdueRecord,
  type StageUpdate,
  type UpdateOptions,
} from '../../delegation/record.js';
import {
  applyPatch,
  applyStage,
  checkPrefix,
  deadlineWritten,
  dueStages,
  existsError,
  normalizeRecord,
  notFoundError,
  openDeadline,
  overdueBound,
  pageLimit,
  staleStages,
  toJson,
} from '../../delegation/stores/common.js';
import {
  compileFilterSql,
  decodeCursor,
  encodeCursor,
  parseDelegationFilter,
} from '../../delegation/stores/filter.js';
import type {
  DelegationChange,
  DurableDelegationStore,
  OutboxEntry,
  VersionedRecord,
} from './change.js';
import { createPgTables, type PgStatements, pgStatements, SELECT } from './postgres-schema.js';
import { type RecordRow, rowToChange, rowToRecord } from './rows.js';

/**
 * Options of {@link PostgresDelegationStore.open}: a pool or a URL, plus where the tables
 * live and how long to wait for the server (`connectTimeoutMs`, `queryTimeoutMs`).
 */
export interface PostgresDelegationStoreOptions extends PostgresTimeouts {
  /** A pool the caller owns (the store never ends it). */
  pool?: Pool;
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
export class PostgresDelegationStore implements DurableDelegationStore {
  /** Which backend this is (for logs and benches). */
  readonly kind = 'postgres';
  private readonly listeners = new Set<() => void>();
  private closed = false;
  private readonly sql: PgStatements;

  private constructor(
    private readonly pool: Pool,
    private readonly gate: PgGate,
    private readonly owned: boolean,
    private readonly table: string,
    private readonly outbox: string,
    private readonly clock: Clock,
  ) {
    this.sql = pgStatements(table, outbox);
  }

  /** Connects (pg loaded on first use) and creates the schema and tables if needed. */
  static async open(
    options: PostgresDelegationStoreOptions = {},
  ): Promise<PostgresDelegationStore> {
    const prefix = checkPrefix(options.prefix ?? 'taskline_');
    const schema = options.schema === undefined ? undefined : checkPrefix(options.schema);
    const timeouts = resolvePgTimeouts(options);
    let pool = options.pool;
    const owned = pool === undefined;
    if (!pool) {
      const pg = (await loadOptional(() => import('pg'), 'pg', 'the PostgreSQL delegation store'))
        .default;
      pool = new pg.Pool({
        connectionString:
          options.connectionString ??
          process.env.TASKLINE_PG_URL ??
          'postgres://postgres@127.0.0.1:5432/test',
        max: options.max ?? 16,
        ...pgPoolTimeouts(timeouts),
      });
    }
    const gate = new PgGate(pool, timeouts, 'delegation store');
    const q = (name: string) => quoteTable(schema ? `${schema}.${name}` : name);
    const table = q(`${prefix}delegations`);
    const outbox = q(`${prefix}delegation_outbox`);
    let client: Awaited<ReturnType<PgGate['connect']>>;
    try {
      client = await gate.connect();
    } catch (error) {
      if (owned) await pool.end().catch(() => {});
      throw error;
    }
    try {
      await client.query('BEGIN');
      await createPgTables(client, { schema, prefix, table, outbox });
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release();
      if (owned) await pool.end();
      throw error;
    }
    client.release();
    return new PostgresDelegationStore(
      pool,
      gate,
      owned,
      table,
      outbox,
      options.clock ?? systemClock,
    );
  }

  private now(): number {
    return this.clock.now();
  }

  private async run<R extends QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<QueryResult<R>> {
    try {
      return await this.gate.query<R>(text, values);
    } catch (error) {
      throw mapPgError(error);
    }
  }

  private notify(): void {
    for (const l of this.listeners) queueMicrotask(l);
  }

  private async load(id: string): Promise<VersionedRecord | undefined> {
    const { rows } = await this.run<RecordRow & QueryResultRow>(this.sql.get, [id]);
    return rows[0] ? rowToRecord(rows[0]) : undefined;
  }

  async create(input: DelegationRecord): Promise<DelegationRecord> {
    const record = normalizeRecord(input);
    const data = toJson(record.sub_task_data, 'sub_task_data');
    const incarnation = randomUUID();
    const stale = staleStages(record, 'all', this.now());
    const change: DelegationChange = {
      op: 'create',
      delegation_id: record.delegation_id,
      version: 1,
      incarnation,
      time: epochSeconds(this.now()),
      record,
    };
    const res = await this.run(this.sql.create, [
      record.delegation_id,
      record.task_id,
      record.sub_task_id,
      record.workflow_level,
      record.delegation_type,
      record.sender_subject_id,
      record.target_subject_id,
      JSON.stringify(record.status),
      data,
      openDeadline(record, stale),
      JSON.stringify(change),
      incarnation,
      JSON.stringify(stale),
    ]);
    if (res.rowCount === 0) throw existsError(record.delegation_id);
    this.notify();
    return record;
  }

  async get(id: string): Promise<DelegationRecord | undefined> {
    return (await this.load(id))?.record;
  }

  async getVersioned(id: string): Promise<VersionedRecord | undefined> {
    return this.load(id);
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
    let client: BoundedClient;
    try {
      client = await this.gate.connect();
    } catch (error) {
      throw mapPgError(error);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<RecordRow & QueryResultRow>(this.sql.lock, [id]);
      if (!rows[0]) throw notFoundError(id);
      const plan = build(rowToRecord(rows[0]), this.now());
      const res = await client.query(plan.sql, plan.values);
      if (res.rowCount === 0) {
        // Impossible while the row is locked; never report a write that did not happen.
        throw new TasklineError('conflict', `Delegation ${id} changed under its row lock.`, { id });
      }
      await client.query('COMMIT');
      return plan.record;
    } catch (error) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw mapPgError(error);
    } finally {
      client.release(broken);
    }
  }

  async setStage(id: string, stage: string, update: StageUpdate): Promise<DelegationRecord> {
    return this.mutate(id, (current, now) => {
      const { record, from } = applyStage(current.record, stage, update, now);
      const stale = staleStages(record, deadlineWritten(stage, update), now, current.stale);
      const version = current.version + 1;
      const change: DelegationChange = {
        op: 'stage',
        delegation_id: id,
        version,
        incarnation: current.incarnation,
        time: epochSeconds(now),
        record,
        stage,
        state: update.state as DelegationState,
        ...(from ? { from } : {}),
      };
      return {
        sql: this.sql.setStatus,
        values: [
          id,
          current.version,
          toJson(record.status, 'delegation_result'),
          openDeadline(record, stale),
          JSON.stringify(change),
          JSON.stringify(stale),
        ],
        record,
      };
    });
  }

  async update(
    id: string,
    patch: DelegationPatch,
    options: UpdateOptions = {},
  ): Promise<DelegationRecord> {
    return this.mutate(id, (current, now) => {
      const record = applyPatch(current.record, patch, options);
      const retarget = record.target_subject_id !== current.record.target_subject_id;
      const change: DelegationChange = {
        op: 'update',
        delegation_id: id,
        version: current.version + 1,
        incarnation: current.incarnation,
        time: epochSeconds(now),
        record,
        ...(retarget ? { previous_target: current.record.target_subject_id } : {}),
      };
      return {
        sql: this.sql.setData,
        values: [
          id,
          current.version,
          toJson(record.sub_task_data, 'sub_task_data'),
          record.target_subject_id,
          JSON.stringify(change),
          record.task_id,
          record.sub_task_id,
          record.workflow_level,
          record.delegation_type,
          record.sender_subject_id,
        ],
        record,
      };
    });
  }

  async delete(id: string): Promise<boolean> {
    try {
      await this.mutate(id, (current, now) => {
        const change: DelegationChange = {
          op: 'delete',
          delegation_id: id,
          version: current.version + 1,
          incarnation: current.incarnation,
          time: epochSeconds(now),
          record: current.record,
        };
        return {
          sql: this.sql.delete,
          values: [id, current.version, JSON.stringify(change)],
          record: current.record,
        };
      });
      return true;
    } catch (error) {
      if (error instanceof TasklineError && error.code === 'not_found') return false;
      throw error;
    }
  }

  async query(
    filter: DelegationFilter,
    page: { limit?: number; cursor?: string } = {},
  ): Promise<DelegationPage> {
    const node = parseDelegationFilter(filter);
    const limit = pageLimit(page.limit);
    const params: unknown[] = [];
    let where = compileFilterSql(node, 'postgres', params);
    if (page.cursor !== undefined) {
      params.push(decodeCursor(page.cursor));
      where = `(${where}) AND delegation_id > $${params.length}`;
    }
    params.push(limit + 1);
    const { rows } = await this.run<RecordRow & QueryResultRow>(
      `SELECT ${SELECT} FROM ${this.table} WHERE ${where} ORDER BY delegation_id LIMIT $${params.length}`,
      params,
    );
    const items = rows.slice(0, limit).map((r) => rowToRecord(r).record);
    const last = items[items.length - 1];
    return rows.length > limit && last
      ? { items, next: encodeCursor(last.delegation_id) }
      : { items };
  }

  async overdue(nowMs: number, limit = 100): Promise<OverdueRecord[]> {
    const { rows } = await this.run<RecordRow & QueryResultRow>(this.sql.overdue, [
      overdueBound(nowMs),
      pageLimit(limit),
    ]);
    return rows.map((r) => {
      const { record, stale } = rowToRecord(r);
      return { record, stages: dueStages(record, stale, nowMs) };
    });
  }

  async claimOutbox(limit: number, now: number, leaseUntil: number): Promise<OutboxEntry[]> {
    const { rows } = await this.run<{ seq: string; change: unknown }>(this.sql.claim, [
      leaseUntil,
      now,
      limit,
    ]);
    return rows
      .map((r) => ({ seq: Number(r.seq), change: rowToChange(r.change) }))
      .sort((a, b) => a.seq - b.seq);
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

  onOutboxWrite(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    if (this.owned) await this.pool.end();
  }

  /** Drops this store's tables (tests and benches clean up with it). */
  async dropTables(): Promise<void> {
    await this.run(`DROP TABLE IF EXISTS ${this.table}, ${this.outbox}`, []);
  }
}
