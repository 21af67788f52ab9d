import { quoteIdentifier } from '../../core/sql/identifiers.js';
import type { SqlDialect } from '../../core/sql/runner.js';
import { createTableSql, type TableSpec } from '../../core/sql/tables.js';
import type { DelegationRecord, StageStatus } from '../../delegation/record.js';
import { dict } from '../../delegation/validate.js';
import type { DelegationChange, VersionedRecord } from './change.js';

/** The records table, the same on SQLite and PostgreSQL (JSON columns are JSONB there). */
export const RECORDS_TABLE: TableSpec = {
  columns: {
    delegation_id: 'key',
    version: 'integer',
    incarnation: 'text',
    task_id: 'text',
    sub_task_id: 'text',
    workflow_level: 'integer',
    delegation_type: 'text',
    sender_subject_id: 'text',
    target_subject_id: 'text',
    status: 'json',
    sub_task_data: 'json',
    open_deadline: { type: 'bigint', nullable: true },
    stale_stages: { type: 'json', default: "'[]'" },
  },
  primaryKey: ['delegation_id'],
};

/** The outbox: one row per committed change, leased by a publisher until acknowledged. */
export const OUTBOX_TABLE: TableSpec = {
  columns: {
    seq: 'serial',
    delegation_id: 'text',
    version: 'integer',
    change: 'json',
    lease_until: { type: 'bigint', default: '0' },
  },
};

/** The columns a record is read from. */
export const SELECT = Object.keys(RECORDS_TABLE.columns)
  .filter((c) => c !== 'open_deadline')
  .join(', ');

/**
 * The DDL of a store's tables and indexes in `dialect` (names already checked; `table` and
 * `outbox` quoted), run once at open.
 */
export function delegationTablesSql(
  dialect: SqlDialect,
  names: { prefix: string; table: string; outbox: string },
): string[] {
  const { prefix, table, outbox } = names;
  const index = (suffix: string, on: string) =>
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${prefix}delegations_${suffix}`)} ON ${table} ${on}`;
  return [
    createTableSql(dialect, table, RECORDS_TABLE),
    index('sender', '(sender_subject_id)'),
    index('target', '(target_subject_id)'),
    index('task', '(task_id)'),
    index('deadline', '(open_deadline) WHERE open_deadline IS NOT NULL'),
    createTableSql(dialect, outbox, OUTBOX_TABLE),
  ];
}

/** One records-table row as a driver returns it (JSON columns as text or already parsed). */
export interface RecordRow {
  delegation_id: string;
  version: number | string;
  incarnation: string;
  task_id: string;
  sub_task_id: string;
  workflow_level: number;
  delegation_type: string;
  sender_subject_id: string;
  target_subject_id: string;
  status: unknown;
  sub_task_data: unknown;
  stale_stages: unknown;
}

function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : v;
}

/** A status map read back from storage, with a null prototype (stage names are any keys). */
export function statusFrom(value: unknown): DelegationRecord['status'] {
  const parsed = json(value) as Record<string, StageStatus>;
  const out = dict<StageStatus>();
  for (const key of Object.keys(parsed)) out[key] = parsed[key]!;
  return out;
}

/** Rebuilds a record (and its version and incarnation) from a row. */
export function rowToRecord(row: RecordRow): VersionedRecord {
  return {
    version: Number(row.version),
    incarnation: row.incarnation,
    stale: json(row.stale_stages ?? '[]') as string[],
    record: {
      delegation_id: row.delegation_id,
      task_id: row.task_id,
      sub_task_id: row.sub_task_id,
      workflow_level: Number(row.workflow_level),
      delegation_type: row.delegation_type,
      sender_subject_id: row.sender_subject_id,
      target_subject_id: row.target_subject_id,
      status: statusFrom(row.status),
      sub_task_data: json(row.sub_task_data) as DelegationRecord['sub_task_data'],
    },
  };
}

/** Parses an outbox `change` column. */
export function rowToChange(change: unknown): DelegationChange {
  const parsed = json(change) as DelegationChange;
  return { ...parsed, record: { ...parsed.record, status: statusFrom(parsed.record.status) } };
}
