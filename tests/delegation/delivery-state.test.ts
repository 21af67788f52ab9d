// The delivery state machine of a task's result: the table is the only way a result is
// claimed, and nothing can be spoken twice or after it was answered inline.
import { initializeLogger } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { startLogger } from '../../src/core/log.js';
import {
  DELIVERY_TRANSITIONS,
  type DeliveryEvent,
  type DeliveryState,
  initialDelivery,
  isHeld,
  nextDelivery,
  publicDelivery,
  resultIn,
  step,
} from '../../src/delegation/task-manager/delivery-state.js';
import { stdoutDuring } from '../stdout.js';

/** What the logger wrote while `body` ran, at level error. */
async function loggedDuring(body: () => void): Promise<string> {
  const lines = await stdoutDuring(() => {
    startLogger({ level: 'error' });
    try {
      body();
    } finally {
      initializeLogger({ pretty: false, level: 'silent' });
    }
  });
  return lines.join('');
}

const STATES = Object.keys(DELIVERY_TRANSITIONS) as DeliveryState[];
const EVENTS: DeliveryEvent[] = [
  'hold',
  'release',
  'mute',
  'waive',
  'settle',
  'inline',
  'enqueue',
  'spoken',
  'dropped',
];

/** Every state reachable from a task that is to be told and from one that is not. */
function reachable(): Set<DeliveryState> {
  const seen = new Set<DeliveryState>([initialDelivery(true), initialDelivery(false)]);
  const todo = [...seen];
  while (todo.length > 0) {
    const state = todo.pop()!;
    for (const next of Object.values(DELIVERY_TRANSITIONS[state])) {
      if (next && !seen.has(next)) {
        seen.add(next);
        todo.push(next);
      }
    }
  }
  return seen;
}

/** The states from which `target` can still be reached. */
function leadsTo(target: DeliveryState): Set<DeliveryState> {
  const out = new Set<DeliveryState>();
  for (const from of STATES) {
    const seen = new Set<DeliveryState>([from]);
    const todo = [from];
    while (todo.length > 0) {
      const state = todo.pop()!;
      for (const next of Object.values(DELIVERY_TRANSITIONS[state])) {
        if (next === target && from !== target) out.add(from);
        if (next && !seen.has(next)) {
          seen.add(next);
          todo.push(next);
        }
      }
    }
  }
  return out;
}

describe('delivery state', () => {
  it('starts as due when someone is to be told, silent (public "none") when not', () => {
    expect(initialDelivery(true)).toBe('due');
    expect(publicDelivery(initialDelivery(true))).toBe('pending');
    expect(initialDelivery(false)).toBe('silent');
    expect(publicDelivery(initialDelivery(false))).toBe('none');
  });

  it('reaches every state of the table, and every target is a state', () => {
    expect([...reachable()].sort()).toEqual([...STATES].sort());
    for (const state of STATES) {
      for (const next of Object.values(DELIVERY_TRANSITIONS[state])) {
        expect(STATES).toContain(next);
      }
    }
  });

  it('speaks only what was queued, and queues only a result nobody holds', () => {
    const intoSpoken = STATES.filter((s) => DELIVERY_TRANSITIONS[s].spoken === 'spoken');
    expect(intoSpoken).toEqual(['queued']);
    const intoQueued = STATES.filter((s) =>
      Object.values(DELIVERY_TRANSITIONS[s]).includes('queued'),
    );
    expect(intoQueued).toEqual(['ready']);
    expect(isHeld('ready')).toBe(false);
    expect(resultIn('ready')).toBe(true);
  });

  it('never leaves a told result: spoken, inline and none only loop on themselves', () => {
    for (const told of ['spoken', 'inline', 'none'] as const) {
      for (const next of Object.values(DELIVERY_TRANSITIONS[told])) expect(next).toBe(told);
    }
    // Nothing said, then neither spoken nor answered inline later.
    expect(leadsTo('spoken').has('none')).toBe(false);
    expect(leadsTo('inline').has('spoken')).toBe(false);
    expect(leadsTo('spoken').has('inline')).toBe(false);
  });

  it('refuses a second "spoken" (logged, nothing changes); the table lists no other way', async () => {
    const task = { delivery: 'queued' as DeliveryState, snap: { delivery: 'pending' as const } };
    expect(step(task, 'spoken')).toBe('spoken');
    expect(task.snap.delivery).toBe('spoken');
    const logged = await loggedDuring(() => expect(step(task, 'spoken')).toBe('spoken'));
    expect(logged).toMatch(/delivery event refused/);
    expect(logged).toMatch(/"event":"spoken"/);
    expect(task.delivery).toBe('spoken');
    let illegal = 0;
    for (const state of STATES) {
      for (const event of EVENTS) {
        if (DELIVERY_TRANSITIONS[state][event] !== undefined) continue;
        expect(() => nextDelivery(state, event)).toThrow(/taskline bug/);
        illegal += 1;
      }
    }
    expect(illegal).toBeGreaterThan(60);
  });

  it('walks a released task call: held, result in, handed back, queued, spoken', () => {
    const task = { delivery: initialDelivery(true), snap: { delivery: 'pending' as const } };
    const path: DeliveryEvent[] = ['hold', 'settle', 'release', 'enqueue', 'spoken'];
    const states = path.map((event) => step(task, event));
    expect(states).toEqual(['held', 'ready_held', 'ready', 'queued', 'spoken']);
    expect(task.snap.delivery).toBe('spoken');
  });

  it('a muted task that its call still holds may answer inline, and is never queued', () => {
    const task = { delivery: initialDelivery(true), snap: { delivery: 'pending' as const } };
    expect(['hold', 'mute', 'settle'].map((e) => step(task, e as DeliveryEvent))).toEqual([
      'held',
      'held_muted',
      'ready_held_muted',
    ]);
    expect(step(task, 'release')).toBe('ready_muted');
    expect(step(task, 'enqueue')).toBe('ready_muted');
    expect(step(task, 'waive')).toBe('none');
    expect(task.snap.delivery).toBe('none');
  });

  it('keeps the public word "pending" until a result is told or dropped', () => {
    const told: Record<string, string> = { inline: 'inline', spoken: 'spoken' };
    for (const state of STATES) {
      const expected = told[state] ?? (state === 'none' || state === 'silent' ? 'none' : 'pending');
      expect(publicDelivery(state)).toBe(expected);
    }
  });
});
