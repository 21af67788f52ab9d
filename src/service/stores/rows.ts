import type { DelegationRecord, StageStatus } from '../../delegation/record.js';
import { dict } from '../../delegation/validate.js';
import type { DelegationChange, VersionedRecord } from './change.js';

/** Columns of the records table, in the order both stores insert them. */
export const RECORD_COLUMNS = [
  'delegation_id',
  'version',
  'incarnation',
  'task_id',
  'sub_task_id',
  'workflow_level',
  'delegation_type',
  'sender_subject_id',
  'target_subject_id',
  'status',
  'sub_task_data',
  'open_deadline',
  'stale_stages',
] as const;

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
