/**
 * Who may do what to a delegation record over the HTTP API, decided on the record as it is
 * inside the write (the stores call these as a precondition, so nothing changes between the
 * check and the write). The table, as docs/service.md states it:
 *
 * | route | admin | sender | target |
 * |---|---|---|---|
 * | read, query | yes | yes | yes |
 * | create | any sender | as itself | — |
 * | update task fields, re-target | yes | while every stage is `pending` | no |
 * | change the sender | yes | no | no |
 * | delete | yes | yes | no |
 * | stage → `pending`, `in_progress` | yes | `pending` only (add a stage, set its deadline) | yes |
 * | stage → `done`, `failed` (a result) | yes | no | yes |
 * | stage → `cancelled` | yes | yes (withdraw) | no |
 * | stage → `expired` | yes (the expiry checker) | no | no |
 * | submit_result | yes | no | yes |
 *
 * A key that is no party gets 404, as for a missing id (see routes.ts). A sender that is also
 * the target has both columns.
 */
import {
  type DelegationRecord,
  type DelegationState,
  FINAL_STATES,
} from '../../delegation/record.js';
import type { Identity } from './auth.js';
import { HttpError } from './envelope.js';

function forbidden(message: string): HttpError {
  return new HttpError(403, 'forbidden', message);
}

/** The roles `identity` holds on `record`. */
export function rolesOf(
  identity: Identity,
  record: Pick<DelegationRecord, 'sender_subject_id' | 'target_subject_id'>,
): { admin: boolean; sender: boolean; target: boolean } {
  if (identity.admin) return { admin: true, sender: false, target: false };
  return {
    admin: false,
    sender: record.sender_subject_id === identity.agent,
    target: record.target_subject_id === identity.agent,
  };
}

/** The first stage that is no longer `pending` (the target has started or it was settled). */
function startedStage(record: DelegationRecord): [string, DelegationState] | undefined {
  for (const name of Object.keys(record.status)) {
    const state = record.status[name]!.state;
    if (state !== 'pending') return [name, state];
  }
  return undefined;
}

/** True when `value` (an update's field) differs from the record's. */
function changes(record: DelegationRecord, field: string, value: unknown): boolean {
  if (field.startsWith('sub_task_data.')) return true;
  const current = (record as unknown as Record<string, unknown>)[field];
  return JSON.stringify(value) !== JSON.stringify(current);
}

/**
 * Throws 403 (or 409) unless `identity` may apply `patch` to `record`: the task and its target
 * are the sender's to change, and only until the target has started; a record's sender is an
 * admin's to change. Fields sent back unchanged are not changes.
 */
export function checkUpdate(
  identity: Identity,
  record: DelegationRecord,
  patch: Record<string, unknown>,
): void {
  const roles = rolesOf(identity, record);
  if (roles.admin) return;
  const changed = Object.keys(patch).filter(
    (field) =>
      field !== 'delegation_id' && field !== 'status' && changes(record, field, patch[field]),
  );
  if (changed.length === 0) return;
  if (changed.includes('sender_subject_id')) {
    throw forbidden('Only an admin key can change who sent a delegation.');
  }
  if (!roles.sender) {
    throw forbidden(
      `Only the sender (or an admin) can change what a delegation asks or whom it asks (${changed.join(', ')}); the target reports through PUT /delegations/<id>/status/<stage> and submit_result.`,
    );
  }
  const started = startedStage(record);
  if (started) {
    const [stage, state] = started;
    const what = changed.includes('target_subject_id') ? 're-targeted' : 'changed';
    throw new HttpError(
      409,
      'invalid_state',
      `Delegation ${record.delegation_id} can no longer be ${what}: stage "${stage}" is ${state}, so the target has acted on it as it was. Cancel it and send a new delegation.`,
    );
  }
}

/**
 * Throws 403 unless `identity` may move `stage` of `record` to `state` through the status
 * route: results and progress are the target's, withdrawing is the sender's, expiring is an
 * admin's (the expiry checker).
 */
export function checkStageMove(
  identity: Identity,
  record: DelegationRecord,
  stage: string,
  state: DelegationState,
): void {
  const roles = rolesOf(identity, record);
  if (roles.admin) return;
  if (state === 'expired') {
    throw forbidden('Only the expiry checker (or an admin key) expires stages.');
  }
  if (roles.target) {
    if (state !== 'cancelled') return;
    if (roles.sender) return;
    throw forbidden(
      `The target does not cancel a stage; report "failed" with a reason (stage "${stage}").`,
    );
  }
  // The sender (a stranger never gets here: routes.ts answers 404).
  if (state === 'cancelled' || state === 'pending') return;
  throw forbidden(
    FINAL_STATES.has(state)
      ? `Only the target (${record.target_subject_id}) or an admin can settle stage "${stage}" of a delegation; the sender can cancel it.`
      : `Only the target (${record.target_subject_id}) or an admin can move stage "${stage}" to ${state}; the sender can add a pending stage or cancel one.`,
  );
}

/** Throws 403 unless `identity` may submit a result for `record` (its target, or an admin). */
export function checkSubmit(identity: Identity, record: DelegationRecord): void {
  const roles = rolesOf(identity, record);
  if (roles.admin || roles.target) return;
  throw forbidden(
    `Only the target (${record.target_subject_id}) or an admin can submit a delegation's result; the sender can cancel it (PUT /delegations/<id>/status/<stage> {"state":"cancelled"}).`,
  );
}

/** Throws 403 unless `identity` may delete `record` (its sender, or an admin). */
export function checkDelete(identity: Identity, record: DelegationRecord): void {
  const roles = rolesOf(identity, record);
  if (roles.admin || roles.sender) return;
  throw forbidden('Only the sender (or an admin) can delete a delegation.');
}
