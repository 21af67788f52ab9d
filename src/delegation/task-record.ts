/**
 * How a task maps onto a durable {@link DelegationRecord}: one record per task, its
 * progress in the `execution` stage. Kept apart from the manager so a durable store or a
 * worker process reads the same shape.
 */
import {
  type DelegationRecord,
  type DelegationState,
  deadlineSeconds,
  epochSeconds,
  type StageStatus,
} from './record.js';
import type { TaskSnapshot, TaskStatus } from './types.js';
import { dict } from './validate.js';

/** The stage a task's progress is recorded under. */
export const EXECUTION_STAGE = 'execution';

/**
 * The wire's word (a record's state) for each task status: the one place the in-call words
 * meet the published contract's (a completed task is `done`, a timeout `expired`, a queued
 * task `pending`). Exhaustive by its type: a new status does not compile until it has a word.
 */
const WIRE_STATE: { readonly [S in TaskStatus]: DelegationState } = {
  queued: 'pending',
  running: 'in_progress',
  completed: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  timeout: 'expired',
};

/** Record state for a task status (a completed task is `done`, a timeout `expired`). */
export function recordState(status: TaskStatus): DelegationState {
  return WIRE_STATE[status];
}

/** Who is who in a task's record. */
export interface RecordParties {
  /** The record id (`<namespace>:<task id>`). */
  delegationId: string;
  /** The overall task: the call id, or the parent task's record id. */
  parentRecordId: string;
  /** Who delegated: the voice agent's identity, or `subagent:<type>` for nested tasks. */
  sender: string;
  /** `subagent` or `voice_specialist`. */
  type: string;
}

const MAX_PROMPT_CHARS = 4000;

/** The first record of a task: `pending` when queued, `in_progress` when it started at once. */
export function initialRecord(task: TaskSnapshot, parties: RecordParties): DelegationRecord {
  const data: Record<string, unknown> = {
    description: task.description,
    prompt: task.prompt.slice(0, MAX_PROMPT_CHARS),
    mode: task.mode,
    origin: task.origin,
    conversation_id: task.conversationId,
  };
  if (task.resumedFrom) data.resumed_from = task.resumedFrom;
  if (task.parentId) data.parent_task = task.parentId;
  const status = dict<StageStatus>();
  status[EXECUTION_STAGE] = {
    state: recordState(task.status),
    time: epochSeconds(task.startedAt ?? task.createdAt),
    deadline: deadlineSeconds(task.deadline),
  };
  return {
    delegation_id: parties.delegationId,
    task_id: parties.parentRecordId,
    sub_task_id: task.id,
    workflow_level: task.depth,
    delegation_type: parties.type,
    sender_subject_id: parties.sender,
    target_subject_id: task.subagentType,
    status,
    sub_task_data: data,
  };
}

/** Longest `delegation_result` a task stores (the full output is in its result file). */
const MAX_RESULT_CHARS = 4000;

/**
 * The `delegation_result` stored with a finished task: a string, as the contract has it — the
 * output (a structured value as JSON) when it completed, else the reason it is not, with any
 * partial output after it.
 */
export function recordResult(task: TaskSnapshot): string | undefined {
  const result = task.result;
  if (!result) return undefined;
  let text: string;
  if (result.status === 'completed') {
    text = result.value !== undefined ? JSON.stringify(result.value) : result.output;
  } else {
    const reason = result.error ? `${result.error.code}: ${result.error.message}` : result.status;
    text = result.output ? `${reason}\n\nPartial output:\n${result.output}` : reason;
  }
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS - 1)}…` : text;
}
