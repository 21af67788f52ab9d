import { z } from 'zod/v4';
import { type DelegationRecord, DelegationState, FINAL_STATES } from '../../delegation/record.js';
import { parseRecord } from '../../delegation/validate.js';
import type { DelegationChange } from '../stores/change.js';

/**
 * Event kinds on the bus: `delegation_task` (new work, to the target), `delegation_result` (a
 * stage reached a final state, to the sender), `delegation_status` (any other change, to the
 * sender) and `delegation_cancel` (stop working on it, to the target).
 */
export const DelegationEventKind = z.enum([
  'delegation_task',
  'delegation_result',
  'delegation_status',
  'delegation_cancel',
]);
/** One of the four event kinds. */
export type DelegationEventKind = z.infer<typeof DelegationEventKind>;

const EventEnvelope = z.object({
  event: DelegationEventKind,
  delegation_id: z.string().min(1),
  version: z.number().int().min(1),
  incarnation: z.string().min(1),
  to: z.string().min(1),
  change: z.enum(['create', 'stage', 'update', 'delete']),
  stage: z.string().optional(),
  state: DelegationState.optional(),
  time: z.number().int(),
  record: z.unknown(),
});

/**
 * One event about one version of one incarnation of one delegation, addressed to one agent
 * (`to`). Carries the record as it was after the change, so a receiver needs no extra read to
 * act on it. taskline's own (durable) event; the contract's event JSON is derived from it.
 */
export type DelegationEvent = Omit<z.infer<typeof EventEnvelope>, 'record'> & {
  record: DelegationRecord;
};

/** Parses an event received from the wire; throws when it is not one. */
export function parseDelegationEvent(input: unknown): DelegationEvent {
  const envelope = EventEnvelope.parse(input);
  return { ...envelope, record: parseRecord(envelope.record, 'event record') };
}

/** Which inbox of an agent an event goes to: work to do, or replies about work it sent. */
export type DelegationChannel = 'work' | 'reply';

/** The inbox an event kind belongs to. */
export function channelOf(kind: DelegationEventKind): DelegationChannel {
  return kind === 'delegation_task' || kind === 'delegation_cancel' ? 'work' : 'reply';
}

/**
 * The dedupe key of an event: delegation id + incarnation + event kind + version. Each key goes
 * to exactly one agent, so it is also the NATS message id; the incarnation keeps a record
 * created again under a deleted id from colliding with the old one's events.
 */
export function eventKey(
  e: Pick<DelegationEvent, 'delegation_id' | 'incarnation' | 'event' | 'version'>,
): string {
  return `${e.delegation_id}:${e.incarnation}:${e.event}:${e.version}`;
}

/**
 * The events one committed change produces: create → task to the target; a final stage →
 * result to the sender (plus cancel to the target when it was cancelled or expired); any other
 * change → status to the sender; a re-target → cancel to the old target and task to the new
 * one; deleting an unfinished record → cancel to the target.
 */
export function eventsForChange(change: DelegationChange): DelegationEvent[] {
  const { record } = change;
  const base = {
    delegation_id: change.delegation_id,
    version: change.version,
    incarnation: change.incarnation,
    change: change.op,
    time: change.time,
    record,
    ...(change.stage !== undefined ? { stage: change.stage } : {}),
    ...(change.state !== undefined ? { state: change.state } : {}),
  };
  const toSender = (event: DelegationEventKind): DelegationEvent => ({
    ...base,
    event,
    to: record.sender_subject_id,
  });
  const toTarget = (
    event: DelegationEventKind,
    to = record.target_subject_id,
  ): DelegationEvent => ({
    ...base,
    event,
    to,
  });
  switch (change.op) {
    case 'create':
      return [toTarget('delegation_task')];
    case 'stage': {
      const state = change.state;
      if (state === undefined || !FINAL_STATES.has(state)) return [toSender('delegation_status')];
      const out = [toSender('delegation_result')];
      if (state === 'cancelled' || state === 'expired') out.push(toTarget('delegation_cancel'));
      return out;
    }
    case 'update': {
      const out = [toSender('delegation_status')];
      if (
        change.previous_target !== undefined &&
        change.previous_target !== record.target_subject_id
      ) {
        out.push(
          toTarget('delegation_cancel', change.previous_target),
          toTarget('delegation_task'),
        );
      }
      return out;
    }
    case 'delete': {
      const out = [toSender('delegation_status')];
      const open = Object.keys(record.status).some(
        (k) => !FINAL_STATES.has(record.status[k]!.state),
      );
      if (open) out.push(toTarget('delegation_cancel'));
      return out;
    }
  }
}
