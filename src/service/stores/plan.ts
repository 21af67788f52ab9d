/**
 * What each write of a durable delegation store changes, worked out once for SQLite and
 * PostgreSQL: the record after the write, the stages left stale, and the change the outbox
 * carries. The stores only run the SQL.
 */
import { randomUUID } from 'node:crypto';
import {
  type DelegationPatch,
  type DelegationRecord,
  type DelegationState,
  epochSeconds,
  type StageUpdate,
  type UpdateOptions,
} from '../../delegation/record.js';
import {
  applyPatch,
  applyStage,
  deadlineWritten,
  normalizeRecord,
  openDeadline,
  staleStages,
  toJson,
} from '../../delegation/stores/common.js';
import type { DelegationChange, VersionedRecord } from './change.js';

/** A planned write: the record as it will be stored and the change its outbox row carries. */
export interface WritePlan {
  record: DelegationRecord;
  change: DelegationChange;
}

/** A new record (version 1, a new incarnation) and its row's JSON and deadline columns. */
export interface CreatePlan extends WritePlan {
  status: string;
  data: string;
  openDeadline: number | null;
  stale: string;
}

/** A stage move and the status columns it rewrites. */
export interface StagePlan extends WritePlan {
  status: string;
  openDeadline: number | null;
  stale: string;
}

/** The record's plain columns, in the order both stores write them (task_id … target). */
export function recordFields(r: DelegationRecord): unknown[] {
  return [
    r.task_id,
    r.sub_task_id,
    r.workflow_level,
    r.delegation_type,
    r.sender_subject_id,
    r.target_subject_id,
  ];
}

/** Plans `create`: checks the record and stamps it with a new incarnation. */
export function planCreate(input: DelegationRecord, nowMs: number): CreatePlan {
  const record = normalizeRecord(input);
  const status = toJson(record.status, 'status');
  const data = toJson(record.sub_task_data, 'sub_task_data');
  const stale = staleStages(record, 'all', nowMs);
  const change: DelegationChange = {
    op: 'create',
    delegation_id: record.delegation_id,
    version: 1,
    incarnation: randomUUID(),
    time: epochSeconds(nowMs),
    record,
  };
  return {
    record,
    change,
    status,
    data,
    openDeadline: openDeadline(record, stale),
    stale: JSON.stringify(stale),
  };
}

/** Plans `setStage` on the stored record. */
export function planStage(
  current: VersionedRecord,
  stage: string,
  update: StageUpdate,
  nowMs: number,
): StagePlan {
  const { record, from } = applyStage(current.record, stage, update, nowMs);
  const stale = staleStages(record, deadlineWritten(stage, update), nowMs, current.stale);
  return {
    record,
    change: {
      op: 'stage',
      ...next(current, record, nowMs),
      stage,
      state: update.state as DelegationState,
      ...(from ? { from } : {}),
    },
    status: toJson(record.status, 'delegation_result'),
    openDeadline: openDeadline(record, stale),
    stale: JSON.stringify(stale),
  };
}

/** Plans `update` (a patch of the record's fields) on the stored record. */
export function planUpdate(
  current: VersionedRecord,
  patch: DelegationPatch,
  options: UpdateOptions,
  nowMs: number,
): WritePlan & { data: string } {
  const record = applyPatch(current.record, patch, options);
  const previous = current.record.target_subject_id;
  return {
    record,
    change: {
      op: 'update',
      ...next(current, record, nowMs),
      ...(record.target_subject_id !== previous ? { previous_target: previous } : {}),
    },
    data: toJson(record.sub_task_data, 'sub_task_data'),
  };
}

/** Plans `delete` of the stored record (the change still carries it, and a version more). */
export function planDelete(current: VersionedRecord, nowMs: number): WritePlan {
  return {
    record: current.record,
    change: { op: 'delete', ...next(current, current.record, nowMs) },
  };
}

/** The fields every change after `create` shares: the next version, same incarnation. */
function next(
  current: VersionedRecord,
  record: DelegationRecord,
  nowMs: number,
): Omit<DelegationChange, 'op'> {
  return {
    delegation_id: current.record.delegation_id,
    version: current.version + 1,
    incarnation: current.incarnation,
    time: epochSeconds(nowMs),
    record,
  };
}
