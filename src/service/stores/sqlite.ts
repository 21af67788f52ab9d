import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { type Clock, systemClock } from '../../core/clock.js';
import { loadOptional } from '../../core/optional.js';
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
  oldTablesError,
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
import { type RecordRow, rowToChange, rowToRecord } from './rows.js';

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

const SELECT = `delegation_id, version, incarnation, task_id, sub_task_id, workflow_level, delegation_type,
  sender_subject_id, target_subject_id, status, sub_task_data, stale_stages`;

/**
 * The embedded delegation store on SQLite (better-sqlite3, WAL): every write and its outbox row
 * commit in one immediate transaction, so several processes can share the file and a crash
 * between a write and its publish loses nothing. better-sqlite3 is loaded on first open.
 */
export class SqliteDelegationStore implements DurableDelegationStore {
  /** Which backend this is (for logs and benches). */
  readonly kind = 'sqlite';
  private readonly listeners = new Set<() => void>();
  private readonly queryCache = new Map<string, Stmt>();
  private readonly s: Record<
    | 'insert'
    | 'insertOutbox'
    | 'get'
    | 'updateStatus'
    | 'updateRecord'
    | 'delete'
    | 'overdue'
    | 'claim'
    | 'ack'
    | 'release'
    | 'size',
    Stmt
  >;
  private closed = false;
  /** Runs a function in an IMMEDIATE transaction (built once; better-sqlite3 wrappers are not free). */
  private readonly tx: (fn: () => unknown) => unknown;

  private constructor(
    private readonly db: Database.Database,
    private readonly owned: boolean,
    private readonly table: string,
    outbox: string,
    private readonly clock: Clock,
  ) {
    const t = `"${table}"`;
    const o = `"${outbox}"`;
    this.tx = db.transaction((fn: () => unknown) => fn()).immediate;
    this.s = {
      insert: db.prepare(
        `INSERT INTO ${t} (delegation_id, version, incarnation, task_id, sub_task_id, workflow_level,
          delegation_type, sender_subject_id, target_subject_id, status, sub_task_data, open_deadline,
          stale_stages)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (delegation_id) DO NOTHING`,
      ),
      insertOutbox: db.prepare(
        `INSERT INTO ${o} (delegation_id, version, change) VALUES (?, ?, ?)`,
      ),
      get: db.prepare(`SELECT ${SELECT} FROM ${t} WHERE delegation_id = ?`),
      updateStatus: db.prepare(
        `UPDATE ${t} SET status = ?, open_deadline = ?, stale_stages = ?, version = ? WHERE delegation_id = ?`,
      ),
      updateRecord: db.prepare(
        `UPDATE ${t} SET task_id = ?, sub_task_id = ?, workflow_level = ?, delegation_type = ?,
          sender_subject_id = ?, target_subject_id = ?, sub_task_data = ?, version = ?
         WHERE delegation_id = ?`,
      ),
      delete: db.prepare(`DELETE FROM ${t} WHERE delegation_id = ?`),
      overdue: db.prepare(
        `SELECT ${SELECT} FROM ${t} WHERE open_deadline IS NOT NULL AND open_deadline <= ?
         ORDER BY open_deadline, delegation_id LIMIT ?`,
      ),
      claim: db.prepare(
        `UPDATE ${o} SET lease_until = ? WHERE seq IN
          (SELECT seq FROM ${o} WHERE lease_until <= ? ORDER BY seq LIMIT ?) RETURNING seq, change`,
      ),
      ack: db.prepare(`DELETE FROM ${o} WHERE seq IN (SELECT value FROM json_each(?))`),
      release: db.prepare(
        `UPDATE ${o} SET lease_until = 0 WHERE seq IN (SELECT value FROM json_each(?))`,
      ),
      size: db.prepare(`SELECT count(*) AS n FROM ${o}`),
    };
  }

  /** Opens (and creates if needed) the store's tables. */
  static async open(options: SqliteDelegationStoreOptions = {}): Promise<SqliteDelegationStore> {
    const prefix = checkPrefix(options.prefix ?? 'taskline_');
    let db = options.db;
    const owned = db === undefined;
    if (!db) {
      const Driver = (
        await loadOptional(
          () => import('better-sqlite3'),
          'better-sqlite3',
          'the SQLite delegation store',
        )
      ).default;
      db = new Driver(options.path ?? ':memory:');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
    }
    const table = `${prefix}delegations`;
    const outbox = `${prefix}delegation_outbox`;
    db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (
      delegation_id TEXT PRIMARY KEY,
      version INTEGER NOT NULL,
      incarnation TEXT NOT NULL,
      task_id TEXT NOT NULL,
      sub_task_id TEXT NOT NULL,
      workflow_level INTEGER NOT NULL,
      delegation_type TEXT NOT NULL,
      sender_subject_id TEXT NOT NULL,
      target_subject_id TEXT NOT NULL,
      status TEXT NOT NULL,
      sub_task_data TEXT NOT NULL,
      open_deadline INTEGER,
      stale_stages TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX IF NOT EXISTS "${table}_sender" ON "${table}" (sender_subject_id);
    CREATE INDEX IF NOT EXISTS "${table}_target" ON "${table}" (target_subject_id);
    CREATE INDEX IF NOT EXISTS "${table}_task" ON "${table}" (task_id);
    CREATE INDEX IF NOT EXISTS "${table}_deadline" ON "${table}" (open_deadline)
      WHERE open_deadline IS NOT NULL;
    CREATE TABLE IF NOT EXISTS "${outbox}" (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      delegation_id TEXT NOT NULL,
      version INTEGER NOT NULL,
      change TEXT NOT NULL,
      lease_until INTEGER NOT NULL DEFAULT 0
    );`);
    const columns = db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'stale_stages')) {
      if (owned) db.close();
      throw oldTablesError(table);
    }
    return new SqliteDelegationStore(db, owned, table, outbox, options.clock ?? systemClock);
  }

  private now(): number {
    return this.clock.now();
  }

  private write<T>(fn: () => T): T {
    const result = this.tx(fn) as T;
    for (const l of this.listeners) queueMicrotask(l);
    return result;
  }

  private addOutbox(change: DelegationChange): void {
    this.s.insertOutbox.run(change.delegation_id, change.version, JSON.stringify(change));
  }

  private load(id: string): VersionedRecord | undefined {
    const row = this.s.get.get(id) as RecordRow | undefined;
    return row ? rowToRecord(row) : undefined;
  }

  async create(input: DelegationRecord): Promise<DelegationRecord> {
    const record = normalizeRecord(input);
    const status = toJson(record.status, 'status');
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
    this.write(() => {
      const info = this.s.insert.run(
        record.delegation_id,
        1,
        incarnation,
        record.task_id,
        record.sub_task_id,
        record.workflow_level,
        record.delegation_type,
        record.sender_subject_id,
        record.target_subject_id,
        status,
        data,
        openDeadline(record, stale),
        JSON.stringify(stale),
      );
      if (info.changes === 0) throw existsError(record.delegation_id);
      this.addOutbox(change);
    });
    return record;
  }

  async get(id: string): Promise<DelegationRecord | undefined> {
    return this.load(id)?.record;
  }

  async getVersioned(id: string): Promise<VersionedRecord | undefined> {
    return this.load(id);
  }

  async setStage(id: string, stage: string, update: StageUpdate): Promise<DelegationRecord> {
    const now = this.now();
    return this.write(() => {
      const current = this.load(id);
      if (!current) throw notFoundError(id);
      const { record, from } = applyStage(current.record, stage, update, now);
      const version = current.version + 1;
      const status = toJson(record.status, 'delegation_result');
      const stale = staleStages(record, deadlineWritten(stage, update), now, current.stale);
      this.s.updateStatus.run(
        status,
        openDeadline(record, stale),
        JSON.stringify(stale),
        version,
        id,
      );
      this.addOutbox({
        op: 'stage',
        delegation_id: id,
        version,
        incarnation: current.incarnation,
        time: epochSeconds(now),
        record,
        stage,
        state: update.state as DelegationState,
        ...(from ? { from } : {}),
      });
      return record;
    });
  }

  async update(
    id: string,
    patch: DelegationPatch,
    options: UpdateOptions = {},
  ): Promise<DelegationRecord> {
    const now = this.now();
    return this.write(() => {
      const current = this.load(id);
      if (!current) throw notFoundError(id);
      const record = applyPatch(current.record, patch, options);
      const version = current.version + 1;
      this.s.updateRecord.run(
        record.task_id,
        record.sub_task_id,
        record.workflow_level,
        record.delegation_type,
        record.sender_subject_id,
        record.target_subject_id,
        toJson(record.sub_task_data, 'sub_task_data'),
        version,
        id,
      );
      const retarget = record.target_subject_id !== current.record.target_subject_id;
      this.addOutbox({
        op: 'update',
        delegation_id: id,
        version,
        incarnation: current.incarnation,
        time: epochSeconds(now),
        record,
        ...(retarget ? { previous_target: current.record.target_subject_id } : {}),
      });
      return record;
    });
  }

  async delete(id: string): Promise<boolean> {
    const now = this.now();
    return this.write(() => {
      const current = this.load(id);
      if (!current) return false;
      this.s.delete.run(id);
      this.addOutbox({
        op: 'delete',
        delegation_id: id,
        version: current.version + 1,
        incarnation: current.incarnation,
        time: epochSeconds(now),
        record: current.record,
      });
      return true;
    });
  }

  async query(
    filter: DelegationFilter,
    page: { limit?: number; cursor?: string } = {},
  ): Promise<DelegationPage> {
    const node = parseDelegationFilter(filter);
    const limit = pageLimit(page.limit);
    const params: unknown[] = [];
    let where = compileFilterSql(node, 'sqlite', params);
    if (page.cursor !== undefined) {
      where = `(${where}) AND delegation_id > ?`;
      params.push(decodeCursor(page.cursor));
    }
    params.push(limit + 1);
    const sql = `SELECT ${SELECT} FROM "${this.table}" WHERE ${where} ORDER BY delegation_id LIMIT ?`;
    let stmt = this.queryCache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      if (this.queryCache.size > 200) this.queryCache.clear();
      this.queryCache.set(sql, stmt);
    }
    const rows = stmt.all(...params) as RecordRow[];
    const items = rows.slice(0, limit).map((r) => rowToRecord(r).record);
    const last = items[items.length - 1];
    return rows.length > limit && last
      ? { items, next: encodeCursor(last.delegation_id) }
      : { items };
  }

  async overdue(nowMs: number, limit = 100): Promise<OverdueRecord[]> {
    const rows = this.s.overdue.all(overdueBound(nowMs), pageLimit(limit)) as RecordRow[];
    return rows.map((r) => {
      const { record, stale } = rowToRecord(r);
      return { record, stages: dueStages(record, stale, nowMs) };
    });
  }

  async claimOutbox(limit: number, now: number, leaseUntil: number): Promise<OutboxEntry[]> {
    const rows = this.tx(() => this.s.claim.all(leaseUntil, now, limit)) as Array<{
      seq: number;
      change: string;
    }>;
    return rows
      .map((r) => ({ seq: Number(r.seq), change: rowToChange(r.change) }))
      .sort((a, b) => a.seq - b.seq);
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

  onOutboxWrite(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    if (this.owned) this.db.close();
  }
}
