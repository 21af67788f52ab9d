/**
 * The reads both SQL delegation stores make, written once: a filtered page of records (the
 * filter compiled for the store's dialect, keyset-paged by id), overdue records, and claimed
 * outbox rows turned back into changes.
 */

import type { SqlDialect } from '../../core/sql/versioned.js';
import type { DelegationFilter, DelegationPage, OverdueRecord } from '../../delegation/record.js';
import { dueStages, pageLimit } from '../../delegation/stores/common.js';
import {
  compileFilterSql,
  decodeCursor,
  encodeCursor,
  parseDelegationFilter,
} from '../../delegation/stores/filter.js';
import type { OutboxEntry } from './change.js';
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
