/**
 * Exactly-once delivery of a task's result, as one state per task. Every change of a task's
 * delivery goes through {@link step} with the transition table below, and nowhere else; an
 * event a state does not list is a bug and throws. To trace "spoken twice": only `queued`
 * leads to `spoken`, and only `ready` (nobody holds the result, somebody is listening) leads
 * to `queued` — once.
 */
import { logLine } from '../../core/log.js';
import type { TaskSnapshot } from '../types.js';

/**
 * Where a task's result stands on its way to the caller.
 *
 * Before the result is in:
 * - `due`: spoken once it is in.
 * - `held`: the `task` call that started it waits on it (it answers inline, or hands it back).
 * - `muted`: nobody to tell any more (the call or the manager ended); nothing will be spoken.
 * - `held_muted`: muted while its `task` call still waits (that call may still answer inline).
 * - `silent`: nothing will be said (nobody was to be told, or the model cancelled it itself).
 *
 * The result is in, not yet claimed:
 * - `ready`: nobody holds it; the manager hands it to the call's channel, or drops it.
 * - `ready_muted`: nobody holds it and nobody listens; it ends as `none`.
 * - `ready_held` / `ready_held_muted`: the waiting `task` call answers inline or hands it back.
 *
 * Claimed (at most one of these, once):
 * - `queued`: handed to the call's channel, spoken at a safe moment.
 * - `inline`: the `task` call answered with it. `spoken`: the channel spoke it.
 * - `none`: nothing was, or will be, said.
 */
export type DeliveryState =
  | 'due'
  | 'held'
  | 'muted'
  | 'held_muted'
  | 'silent'
  | 'ready'
  | 'ready_muted'
  | 'ready_held'
  | 'ready_held_muted'
  | 'queued'
  | 'inline'
  | 'spoken'
  | 'none';

/**
 * What happens to a task's delivery:
 * - `hold` / `release`: the voice agent's `task` call starts / stops waiting on it;
 * - `mute`: nobody is to be told any more (the call or the manager ended);
 * - `waive`: nothing is to be said (the model cancelled it, or nobody is listening);
 * - `settle`: the result is in (its files written, `done` resolved);
 * - `inline`: the waiting call answers with the result;
 * - `enqueue`: the result is handed to the call's channel;
 * - `spoken` / `dropped`: the channel spoke it / dropped it unspoken.
 */
export type DeliveryEvent =
  | 'hold'
  | 'release'
  | 'mute'
  | 'waive'
  | 'settle'
  | 'inline'
  | 'enqueue'
  | 'spoken'
  | 'dropped';

/** Every allowed transition; an event missing from a state's row is a bug. */
export const DELIVERY_TRANSITIONS: {
  readonly [S in DeliveryState]: Readonly<Partial<Record<DeliveryEvent, DeliveryState>>>;
} = {
  due: { hold: 'held', mute: 'muted', waive: 'silent', settle: 'ready' },
  held: { release: 'due', mute: 'held_muted', waive: 'silent', settle: 'ready_held' },
  muted: { mute: 'muted', waive: 'silent', settle: 'ready_muted' },
  held_muted: {
    release: 'muted',
    mute: 'held_muted',
    waive: 'silent',
    settle: 'ready_held_muted',
  },
  silent: { release: 'silent', mute: 'silent', waive: 'silent', settle: 'none' },
  ready: { enqueue: 'queued', waive: 'none' },
  ready_muted: { waive: 'none' },
  ready_held: { release: 'ready', inline: 'inline' },
  ready_held_muted: { release: 'ready_muted', inline: 'inline' },
  queued: { spoken: 'spoken', dropped: 'none' },
  inline: { release: 'inline' },
  spoken: {},
  none: { release: 'none', waive: 'none', inline: 'none' },
};

/** What the task's snapshot tells its readers (`TaskSnapshot.delivery`) in each state. */
const PUBLIC: { readonly [S in DeliveryState]: TaskSnapshot['delivery'] } = {
  due: 'pending',
  held: 'pending',
  muted: 'pending',
  held_muted: 'pending',
  silent: 'none',
  ready: 'pending',
  ready_muted: 'pending',
  ready_held: 'pending',
  ready_held_muted: 'pending',
  queued: 'pending',
  inline: 'inline',
  spoken: 'spoken',
  none: 'none',
};

/** The part of a task its delivery state lives in. */
export interface DeliveryTracked {
  delivery: DeliveryState;
  snap: { delivery: TaskSnapshot['delivery'] };
}

/** The state a new task starts in: told when it ends, or never. */
export function initialDelivery(notify: boolean): DeliveryState {
  return notify ? 'due' : 'silent';
}

/** The public delivery word for a state (`TaskSnapshot.delivery`). */
export function publicDelivery(state: DeliveryState): TaskSnapshot['delivery'] {
  return PUBLIC[state];
}

/** The state after `event`; throws when `state` does not allow it (a bug in the manager). */
export function nextDelivery(state: DeliveryState, event: DeliveryEvent): DeliveryState {
  const next = DELIVERY_TRANSITIONS[state][event];
  if (next === undefined) {
    throw new Error(`taskline bug: delivery event "${event}" is not allowed in state "${state}"`);
  }
  return next;
}

/**
 * Applies `event` to the task's delivery state and its snapshot; returns the new state. An
 * event the state does not allow is a bug in the manager: it is logged at error level and
 * changes nothing (the state is returned as it was), so a live call is never thrown out of
 * and a result is never spoken twice; tests check the table with {@link nextDelivery}.
 */
export function step(task: DeliveryTracked, event: DeliveryEvent): DeliveryState {
  const next = DELIVERY_TRANSITIONS[task.delivery][event];
  if (next === undefined) {
    logLine('taskline.delegation', 'error', 'taskline bug: delivery event refused', {
      code: 'delivery_transition',
      event,
      state: task.delivery,
    });
    return task.delivery;
  }
  task.delivery = next;
  task.snap.delivery = PUBLIC[next];
  return next;
}

/** True once the task's result is in (its files written, `done` resolved). */
export function resultIn(state: DeliveryState): boolean {
  return !(
    state === 'due' ||
    state === 'held' ||
    state === 'muted' ||
    state === 'held_muted' ||
    state === 'silent'
  );
}

/** True while a `task` call waits on the result (it, not the manager, delivers it). */
export function isHeld(state: DeliveryState): boolean {
  return (
    state === 'held' ||
    state === 'held_muted' ||
    state === 'ready_held' ||
    state === 'ready_held_muted'
  );
}
