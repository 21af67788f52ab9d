/**
 * What the SQLite and PostgreSQL delegation stores share, written once: the reads (a record,
 * a filtered page keyset-paged by id, overdue records, claimed outbox rows as changes), the
 * outbox listeners and closing. The stores add their writes, which lock differently.
 */
import type { Clock } from '../../core/clock.js';
import type { SqlDialect } from '../../core/sql/runner.js';
import type {
  DelegationFilter,
  DelegationPage,
  DelegationRecord,
  OverdueRecord,
} from '../../delegation/record.js';
import { dueStages, overdueBound, pageLimit } from '../../delegation/stores/common.js';
import {
  compileFilterSql,
  decodeCursor,
  encodeCursor,
  parseDelegationFilter,
} from '../../delegation/stores/filter.js';
import type { OutboxEntry, VersionedRecord } from './change.js';
import { type RecordRow, rowToChange, rowToRecord, SELECT } from './rows.js';

/** The statement and values of one page of `query`, and the page size asked for. */
export function pageQuery(
  dialect: SqlDialect,
  table: string,
  filter: DelegationFilter,
  page: { limit?: number; cursor?: string },
): { sql: string; values: unknown[]; limit: number } {
  const node = parseDelegationFilter(filter);
  const limit = pageLimit(page.limit);
  const values: unknown[] = [];
  const next = () => (dialect === 'postgres' ? `$${values.length}` : '?');
  let where = compileFilterSql(node, dialect, values);
  if (page.cursor !== undefined) {
    values.push(decodeCursor(page.cursor));
    where = `(${where}) AND delegation_id > ${next()}`;
  }
  values.push(limit + 1);
  const sql = `SELECT ${SELECT} FROM ${table} WHERE ${where} ORDER BY delegation_id LIMIT ${next()}`;
  return { sql, values, limit };
}

/** A page from the rows of {@link pageQuery} (one more than `limit` means there is a next). */
export function toPage(rows: readonly RecordRow[], limit: number): DelegationPage {
  const items = rows.slice(0, limit).map((r) => rowToRecord(r).record);
  const last = items[items.length - 1];
  return rows.length > limit && last
    ? { items, next: encodeCursor(last.delegation_id) }
    : { items };
}

/** Overdue records with the stages whose deadline has passed at `nowMs`. */
export function toOverdue(rows: readonly RecordRow[], nowMs: number): OverdueRecord[] {
  return rows.map((r) => {
    const { record, stale } = rowToRecord(r);
    return { record, stages: dueStages(record, stale, nowMs) };
  });
}

/** Claimed outbox rows as changes, oldest first. */
export function toOutbox(
  rows: ReadonlyArray<{ seq: number | string; change: unknown }>,
): OutboxEntry[] {
  return rows
    .map((r) => ({ seq: Number(r.seq), change: rowToChange(r.change) }))
    .sort((a, b) => a.seq - b.seq);
}

/** Who waits for outbox writes (publishers wake on them instead of polling). */
export class OutboxListeners {
  private readonly listeners = new Set<() => void>();

  /** Adds a listener; the function returned removes it. */
  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener, each in a microtask of its own. */
  notify(): void {
    for (const l of this.listeners) queueMicrotask(l);
  }

  /** Forgets every listener (the store closed). */
  clear(): void {
    this.listeners.clear();
  }
}

/** The reads and the bookkeeping of a SQL delegation store; see the file's header. */
export abstract class SqlDelegationStore {
  /** Who waits for outbox writes. */
  protected readonly listeners = new OutboxListeners();
  private closed = false;
  private readonly getSql: string;
  private readonly overdueSql: string;

  /** `table` is already quoted. */
  protected constructor(
    private readonly dialect: SqlDialect,
    protected readonly table: string,
    private readonly clock: Clock,
  ) {
    const p = (n: number) => (dialect === 'postgres' ? `$${n}` : '?');
    this.getSql = `SELECT ${SELECT} FROM ${table} WHERE delegation_id = ${p(1)}`;
    this.overdueSql = `SELECT ${SELECT} FROM ${table}
      WHERE open_deadline IS NOT NULL AND open_deadline <= ${p(1)}
      ORDER BY open_deadline, delegation_id LIMIT ${p(2)}`;
  }

  /** The rows a statement returns. */
  protected abstract rows<R>(sql: string, values: unknown[]): Promise<R[]>;

  /** Releases what the store opened (its pool or database), not what it was given. */
  protected abstract end(): Promise<void>;

  /** The store's clock, in ms since epoch. */
  protected now(): number {
    return this.clock.now();
  }

  /** The statement that reads one record (for a store's own reads inside a transaction). */
  protected get selectOne(): string {
    return this.getSql;
  }

  protected async load(id: string): Promise<VersionedRecord | undefined> {
    const [row] = await this.rows<RecordRow>(this.getSql, [id]);
    return row ? rowToRecord(row) : undefined;
  }

  async get(id: string): Promise<DelegationRecord | undefined> {
    return (await this.load(id))?.record;
  }

  async getVersioned(id: string): Promise<VersionedRecord | undefined> {
    return this.load(id);
  }

  async query(
    filter: DelegationFilter,
    page: { limit?: number; cursor?: string } = {},
  ): Promise<DelegationPage> {
    const { sql, values, limit } = pageQuery(this.dialect, this.table, filter, page);
    return toPage(await this.rows<RecordRow>(sql, values), limit);
  }

  async overdue(nowMs: number, limit = 100): Promise<OverdueRecord[]> {
    const rows = await this.rows<RecordRow>(this.overdueSql, [
      overdueBound(nowMs),
      pageLimit(limit),
    ]);
    return toOverdue(rows, nowMs);
  }

  onOutboxWrite(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await this.end();
  }
}
