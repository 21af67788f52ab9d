import type { DelegationRecord } from '../record.js';
import type { DelegationChange } from './change.js';

/** Columns of the records table, in the order both stores insert them. */
export const RECORD_COLUMNS = [
  'delegation_id',
  'version',
  'task_id',
  'sub_task_id',
  'workflow_level',
  'delegation_type',
  'sender_subject_id',
  'target_subject_id',
  'status',
  'sub_task_data',
  'open_deadline',
] as const;

/** One records-table row as a driver returns it (JSON columns as text or already parsed). */
export interface RecordRow {
  delegation_id: string;
  version: number | string;
  task_id: string;
  sub_task_id: string;
  workflow_level: number;
  delegation_type: string;
  sender_subject_id: string;
  target_subject_id: string;
  status: unknown;
  sub_task_data: unknown;
}

function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : v;
}

/** Rebuilds a record (and its version) from a row. */
export function rowToRecord(row: RecordRow): { record: DelegationRecord; version: number } {
  return {
    version: Number(row.version),
    record: {
      delegation_id: row.delegation_id,
      task_id: row.task_id,
      sub_task_id: row.sub_task_id,
      workflow_level: Number(row.workflow_level),
      delegation_type: row.delegation_type,
      sender_subject_id: row.sender_subject_id,
      target_subject_id: row.target_subject_id,
      status: json(row.status) as DelegationRecord['status'],
      sub_task_data: json(row.sub_task_data) as DelegationRecord['sub_task_data'],
    },
  };
}

/** Parses an outbox `change` column. */
export function rowToChange(change: unknown): DelegationChange {
  return json(change) as DelegationChange;
}
