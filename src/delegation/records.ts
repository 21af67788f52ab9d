/**
 * How a task maps onto a durable {@link DelegationRecord}: one record per task, its
 * progress in the `execution` stage. Kept apart from the manager so a durable store or a
 * worker process reads the same shape.
 */
import type { DelegationRecord, DelegationState } from './record.js';
import type { TaskSnapshot, TaskStatus } from './types.js';

/** The stage a task's progress is recorded under. */
export const EXECUTION_STAGE = 'execution';

/** Record state for a task status (a timeout is `expired`). */
export function recordState(status: TaskStatus): DelegationState {
  switch (status) {
    case 'queued':
      return 'pending';
    case 'running':
      return 'in_progress';
    case 'timeout':
      return 'expired';
    default:
      return status;
  }
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
  return {
    delegation_id: parties.delegationId,
    task_id: parties.parentRecordId,
    sub_task_id: task.id,
    workflow_level: task.depth,
    delegation_type: parties.type,
    sender_subject_id: parties.sender,
    target_subject_id: task.subagentType,
    status: {
      [EXECUTION_STAGE]: {
        state: recordState(task.status),
        time: new Date(task.startedAt ?? task.createdAt).toISOString(),
        deadline: new Date(task.deadline).toISOString(),
      },
    },
    sub_task_data: data,
  };
}

/** The `delegation_result` stored with a finished task. */
export function recordResult(task: TaskSnapshot): Record<string, unknown> | undefined {
  const result = task.result;
  if (!result) return undefined;
  const out: Record<string, unknown> = {
    status: result.status,
    summary: result.summary,
    partial: result.partial,
    turns: result.turns,
  };
  if (result.resultPath) out.result_path = result.resultPath;
  if (result.error) out.error = result.error;
  if (result.value !== undefined) out.value = result.value;
  return out;
}
