import type Database from 'better-sqlite3';
import { type Clock, systemClock } from '../../core/clock.js';
import { checkPrefix, quoteTable } from '../../core/sql/identifiers.js';
import { openSqlite, type SqliteHandle, sqliteRunner } from '../../core/sql/sqlite.js';
import type {
  DelegationPatch,
  DelegationRecord,
  StageUpdate,
  UpdateOptions,
} from '../../delegation/record.js';
import { existsError, notFoundError, oldTablesError } from '../../delegation/stores/common.js';
import type {
  DelegationChange,
  DurableDelegationStore,
  OutboxEntry,
  VersionedRecord,
} from './change.js';
import { planCreate, planDelete, planStage, planUpdate, recordFields } from './plan.js';
import { delegationTablesSql, type RecordRow, rowToRecord } from './rows.js';
import { SqlDelegationStore, toOutbox } from './sql-store.js';

/** Options of {@link SqliteDelegationStore.open}. */
export interface SqliteDelegationStoreOptions {
  /** Database file (created if missing) opened in WAL mode; ":memory:" for a throwaway store. */
  path?: string;
  /** An open better-sqlite3 handle instead of `path`; the caller keeps ownership. */
  db?: Database.Database;
  /** Table-name prefix (default `taskline_`): tables `<prefix>delegations`, `<prefix>delegation_outbox`. */
  prefix?: string;
  /** Clock for stage times (default the system clock). */
  clock?: Clock;
}

type Stmt = Database.Statement;

/**
 * The embedded delegation store on SQLite (better-sqlite3, WAL): every write and its outbox row
 * commit in one immediate transaction, so several processes can share the file and a crash
 * between a write and its publish loses nothing. better-sqlite3 is loaded on first open.
 */
export class SqliteDelegationStore extends SqlDelegationStore implements DurableDelegationStore {
  /** Which backend this is (for logs and benches). */
  readonly kind = 'sqlite';
  /** Reads whose text varies (a query's filter), each prepared once and kept. */
  private readonly queries: ReturnType<typeof sqliteRunner>;
  private readonly s: Record<keyof ReturnType<typeof sqliteStatements>, Stmt>;
  /** Runs a function in an IMMEDIATE transaction (built once; better-sqlite3 wrappers are not free). */
  private readonly tx: (fn: () => unknown) => unknown;

  private constructor(
    private readonly handle: SqliteHandle,
    table: string,
    outbox: string,
    clock: Clock,
  ) {
    super('sqlite', table, clock);
    const { db } = handle;
    this.queries = sqliteRunner(db);
    this.tx = db.transaction((fn: () => unknown) => fn()).immediate;
    const sql = sqliteStatements(table, outbox);
    this.s = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, db.prepare(text)]),
    ) as typeof this.s;
  }

  /** Opens (and creates if needed) the store's tables. */
  static async open(options: SqliteDelegationStoreOptions = {}): Promise<SqliteDelegationStore> {
    const prefix = checkPrefix(options.prefix ?? 'taskline_');
    const table = quoteTable(`${prefix}delegations`, { schema: false });
    const outbox = quoteTable(`${prefix}delegation_outbox`, { schema: false });
    const handle = openSqlite(
      options.db ? { db: options.db } : { path: options.path ?? ':memory:' },
      'the SQLite delegation store',
    );
    handle.db.exec(delegationTablesSql('sqlite', { prefix, table, outbox }).join(';\n'));
    const columns = handle.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{
      name: string;
    }>;
    if (!columns.some((c) => c.name === 'stale_stages')) {
      handle.close();
      throw oldTablesError(table);
    }
    return new SqliteDelegationStore(handle, table, outbox, options.clock ?? systemClock);
  }

  private write<T>(fn: () => T): T {
    const result = this.tx(fn) as T;
    this.listeners.notify();
    return result;
  }

  private addOutbox(change: DelegationChange): void {
    this.s.insertOutbox.run(change.delegation_id, change.version, JSON.stringify(change));
  }

  /** The record as stored, read synchronously (inside a write's transaction). */
  private read(id: string): VersionedRecord | undefined {
    const row = this.queries.prepared(this.selectOne).get(id) as RecordRow | undefined;
    return row ? rowToRecord(row) : undefined;
  }

  protected async rows<R>(sql: string, values: unknown[]): Promise<R[]> {
    return this.queries.prepared(sql).all(...values) as R[];
  }

  protected async end(): Promise<void> {
    this.handle.close();
  }

  async create(input: DelegationRecord): Promise<DelegationRecord> {
    const plan = planCreate(input, this.now());
    const { record, change } = plan;
    this.write(() => {
      const info = this.s.insert.run(
        record.delegation_id,
        1,
        change.incarnation,
        ...recordFields(record),
        plan.status,
        plan.data,
        plan.openDeadline,
        plan.stale,
      );
      if (info.changes === 0) throw existsError(record.delegation_id);
      this.addOutbox(change);
    });
    return record;
  }

  async setStage(id: string, stage: string, update: StageUpdate): Promise<DelegationRecord> {
    return this.change(id, (current, now) => {
      const plan = planStage(current, stage, update, now);
      this.s.updateStatus.run(plan.status, plan.openDeadline, plan.stale, plan.change.version, id);
      return plan;
    });
  }

  async update(
    id: string,
    patch: DelegationPatch,
    options: UpdateOptions = {},
  ): Promise<DelegationRecord> {
    return this.change(id, (current, now) => {
      const plan = planUpdate(current, patch, options, now);
      const { record } = plan;
      this.s.updateRecord.run(...recordFields(record), plan.data, plan.change.version, id);
      return plan;
    });
  }

  async delete(id: string): Promise<boolean> {
    try {
      await this.change(id, (current, now) => {
        this.s.delete.run(id);
        return planDelete(current, now);
      });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * Reads the record, writes what `apply` plans and its outbox row, all in one IMMEDIATE
   * transaction (other processes wait on the write lock, so no version check is needed).
   */
  private change(
    id: string,
    apply: (
      current: VersionedRecord,
      nowMs: number,
    ) => { record: DelegationRecord; change: DelegationChange },
  ): DelegationRecord {
    const now = this.now();
    return this.write(() => {
      const current = this.read(id);
      if (!current) throw notFoundError(id);
      const { record, change } = apply(current, now);
      this.addOutbox(change);
      return record;
    });
  }

  async claimOutbox(limit: number, now: number, leaseUntil: number): Promise<OutboxEntry[]> {
    const rows = this.tx(() => this.s.claim.all(leaseUntil, now, limit));
    return toOutbox(rows as Array<{ seq: number; change: string }>);
  }

  async ackOutbox(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) this.s.ack.run(JSON.stringify(seqs));
  }

  async releaseOutbox(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) this.s.release.run(JSON.stringify(seqs));
  }

  async outboxSize(): Promise<number> {
    return Number((this.s.size.get() as { n: number }).n);
  }
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'not_found';
}

/** Every statement the store prepares, by name (table and outbox already quoted). */
function sqliteStatements(t: string, o: string) {
  return {
    insert: `INSERT INTO ${t} (delegation_id, version, incarnation, task_id, sub_task_id, workflow_level,
        delegation_type, sender_subject_id, target_subject_id, status, sub_task_data, open_deadline,
        stale_stages)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (delegation_id) DO NOTHING`,
    insertOutbox: `INSERT INTO ${o} (delegation_id, version, change) VALUES (?, ?, ?)`,
    updateStatus: `UPDATE ${t} SET status = ?, open_deadline = ?, stale_stages = ?, version = ? WHERE delegation_id = ?`,
    updateRecord: `UPDATE ${t} SET task_id = ?, sub_task_id = ?, workflow_level = ?, delegation_type = ?,
        sender_subject_id = ?, target_subject_id = ?, sub_task_data = ?, version = ?
       WHERE delegation_id = ?`,
    delete: `DELETE FROM ${t} WHERE delegation_id = ?`,
    claim: `UPDATE ${o} SET lease_until = ? WHERE seq IN
        (SELECT seq FROM ${o} WHERE lease_until <= ? ORDER BY seq LIMIT ?) RETURNING seq, change`,
    ack: `DELETE FROM ${o} WHERE seq IN (SELECT value FROM json_each(?))`,
    release: `UPDATE ${o} SET lease_until = 0 WHERE seq IN (SELECT value FROM json_each(?))`,
    size: `SELECT count(*) AS n FROM ${o}`,
  };
}
