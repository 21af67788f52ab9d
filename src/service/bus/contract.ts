/**
 * The contract's event JSON on NATS: `{"event_type", "event_data", "sender_subject_id"}` on the
 * subject named after the receiving agent. Derived from taskline's own (durable) events, so the
 * outbox, JetStream and the contract can never disagree about what happened.
 */
import { FINAL_STATES, stageOf } from '../../delegation/record.js';
import type { DelegationEvent } from './events.js';

/** An event exactly as the contract publishes it. */
export interface ContractEvent {
  event_type: 'delegation_task' | 'delegation_result';
  event_data: {
    task_id: string;
    sub_task_id: string;
    delegation_id: string;
    /** For a task: the record's `sub_task_data`. For a result: the stage's status entry. */
    data: unknown;
    /** For a result: the stage, its final state and its result (taskline's additions). */
    stage?: string;
    state?: string;
    delegation_result?: unknown;
  };
  /** Who sent the event: the sender for a task, the target for a result. */
  sender_subject_id: string;
}

/** A contract event and the agent whose subject it goes to. */
export interface ContractMessage {
  to: string;
  event: ContractEvent;
}

/**
 * The contract message for one of taskline's events, if the contract has one: a
 * `delegation_task` for the target when work is created (or re-targeted to it), and a
 * `delegation_result` for the sender when a stage ends `done` or `failed` (a submitted result).
 * Status changes, cancels and expiries stay on taskline's own subjects.
 */
export function contractMessageOf(event: DelegationEvent): ContractMessage | undefined {
  const { record } = event;
  const ids = {
    task_id: record.task_id,
    sub_task_id: record.sub_task_id,
    delegation_id: record.delegation_id,
  };
  if (event.event === 'delegation_task') {
    return {
      to: event.to,
      event: {
        event_type: 'delegation_task',
        event_data: { ...ids, data: record.sub_task_data },
        sender_subject_id: record.sender_subject_id,
      },
    };
  }
  if (event.event !== 'delegation_result' || event.stage === undefined) return undefined;
  const stage = stageOf(record, event.stage);
  if (
    !stage ||
    !FINAL_STATES.has(stage.state) ||
    (stage.state !== 'done' && stage.state !== 'failed')
  ) {
    return undefined;
  }
  return {
    to: event.to,
    event: {
      event_type: 'delegation_result',
      event_data: {
        ...ids,
        data: stage,
        stage: event.stage,
        state: stage.state,
        ...(stage.delegation_result !== undefined
          ? { delegation_result: stage.delegation_result }
          : {}),
      },
      sender_subject_id: record.target_subject_id,
    },
  };
}

/**
 * The NATS subject of an agent in the contract: its id as is (`agentB`), or `<prefix>.<id>`.
 * Undefined when the id cannot be a subject (spaces, wildcards, empty tokens).
 */
export function contractSubject(agentId: string, prefix = ''): string | undefined {
  const subject = prefix === '' ? agentId : `${prefix}.${agentId}`;
  return /^[^\s*>.]+(\.[^\s*>.]+)*$/.test(subject) && subject.length <= 512 ? subject : undefined;
}
