import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { type DelegationEvent, eventKey, eventsForChange } from '../../src/service/bus/events.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import type { SelectionMessage } from '../../src/service/bus/signals.js';
import type { DelegationChange } from '../../src/service/stores/change.js';
import { makeRecord } from './store-suite.js';

const TIME = 1767603600;

function taskEvent(id: string, version = 1, to = 'back-office'): DelegationEvent {
  return {
    event: 'delegation_task',
    delegation_id: id,
    version,
    incarnation: 'inc-1',
    to,
    change: 'create',
    time: TIME,
    record: makeRecord(id, { target_subject_id: to }),
  };
}

/** Collects events until `n` arrived. */
function collector(n: number) {
  const events: Array<{ id: string; attempt: number }> = [];
  let resolve: () => void = () => {};
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    events,
    done,
    push(id: string, attempt: number) {
      events.push({ id, attempt });
      if (events.length === n) resolve();
    },
  };
}

describe('eventsForChange: which events a committed change produces', () => {
  const base = (over: Partial<DelegationChange>): DelegationChange => ({
    op: 'create',
    delegation_id: 'd-1',
    version: 1,
    incarnation: 'inc-1',
    time: TIME,
    record: makeRecord('d-1'),
    ...over,
  });
  const summary = (c: DelegationChange) => eventsForChange(c).map((e) => `${e.event}->${e.to}`);

  it('routes tasks and cancels to targets, results and status to the sender', () => {
    expect(summary(base({}))).toEqual(['delegation_task->back-office']);
    expect(
      summary(base({ op: 'stage', version: 2, stage: 'execution', state: 'in_progress' })),
    ).toEqual(['delegation_status->voice-bot']);
    expect(summary(base({ op: 'stage', version: 3, stage: 'execution', state: 'done' }))).toEqual([
      'delegation_result->voice-bot',
    ]);
    expect(
      summary(base({ op: 'stage', version: 3, stage: 'execution', state: 'expired' })),
    ).toEqual(['delegation_result->voice-bot', 'delegation_cancel->back-office']);
    expect(
      summary(
        base({
          op: 'update',
          version: 2,
          previous_target: 'back-office',
          record: makeRecord('d-1', { target_subject_id: 'billing' }),
        }),
      ),
    ).toEqual([
      'delegation_status->voice-bot',
      'delegation_cancel->back-office',
      'delegation_task->billing',
    ]);
    expect(summary(base({ op: 'delete', version: 2 }))).toEqual([
      'delegation_status->voice-bot',
      'delegation_cancel->back-office',
    ]);
  });

  it('gives every event of one change a distinct dedupe key', () => {
    const events = eventsForChange(
      base({ op: 'stage', version: 7, stage: 'execution', state: 'cancelled' }),
    );
    expect(events.map(eventKey)).toEqual([
      'd-1:inc-1:delegation_result:7',
      'd-1:inc-1:delegation_cancel:7',
    ]);
  });
});

describe('InProcessDelegationBus', () => {
  it('buffers events while the receiver is down and delivers all of them, in order, once it subscribes', async () => {
    const bus = new InProcessDelegationBus();
    for (let i = 1; i <= 5; i++) await bus.publish(taskEvent(`d-${i}`));
    const got = collector(5);
    await bus.subscribe('back-office', 'work', (e, info) =>
      got.push(e.delegation_id, info.attempt),
    );
    await got.done;
    expect(got.events.map((e) => e.id)).toEqual(['d-1', 'd-2', 'd-3', 'd-4', 'd-5']);
    await bus.close();
  });

  it('drops duplicates by delegation id + event + version', async () => {
    const bus = new InProcessDelegationBus();
    expect(await bus.publish(taskEvent('d-1'))).toEqual({ duplicate: false });
    expect(await bus.publish(taskEvent('d-1'))).toEqual({ duplicate: true });
    expect(await bus.publish(taskEvent('d-1', 2))).toEqual({ duplicate: false });
    const got = collector(2);
    await bus.subscribe('back-office', 'work', (e) =>
      got.push(`${e.delegation_id}@${e.version}`, 0),
    );
    await got.done;
    await bus.idle();
    expect(got.events.map((e) => e.id)).toEqual(['d-1@1', 'd-1@2']);
    await bus.close();
  });

  it('redelivers an event whose handler threw, with the attempt number', async () => {
    const bus = new InProcessDelegationBus({ maxDeliver: 3 });
    const got = collector(3);
    await bus.subscribe('back-office', 'work', (e, info) => {
      got.push(e.delegation_id, info.attempt);
      if (info.attempt < 3) throw new Error('flaky');
    });
    await bus.publish(taskEvent('d-1'));
    await got.done;
    await bus.idle();
    expect(got.events).toEqual([
      { id: 'd-1', attempt: 1 },
      { id: 'd-1', attempt: 2 },
      { id: 'd-1', attempt: 3 },
    ]);
    await bus.close();
  });

  it('keeps work and reply inboxes and agents apart; watch sees everything', async () => {
    const bus = new InProcessDelegationBus();
    const work: string[] = [];
    const reply: string[] = [];
    const watched: string[] = [];
    await bus.subscribe('back-office', 'work', (e) => void work.push(e.event));
    await bus.subscribe('voice-bot', 'reply', (e) => void reply.push(e.event));
    await bus.watch((e) => watched.push(`${e.event}:${e.to}`));
    const [result] = eventsForChange({
      op: 'stage',
      delegation_id: 'd-1',
      version: 2,
      incarnation: 'inc-1',
      time: TIME,
      record: makeRecord('d-1'),
      stage: 'execution',
      state: 'done',
    });
    await bus.publish(taskEvent('d-1'));
    await bus.publish(result!);
    await bus.publish(taskEvent('d-2', 1, 'someone-else'));
    await bus.idle();
    expect(work).toEqual(['delegation_task']);
    expect(reply).toEqual(['delegation_result']);
    expect(watched).toEqual([
      'delegation_task:back-office',
      'delegation_result:voice-bot',
      'delegation_task:someone-else',
    ]);
    await bus.close();
  });

  it("runs up to the subscription's concurrency handlers at once", async () => {
    const bus = new InProcessDelegationBus();
    let active = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const seen: string[] = [];
    await bus.subscribe(
      'back-office',
      'work',
      async (e) => {
        seen.push(e.delegation_id);
        active++;
        peak = Math.max(peak, active);
        await new Promise<void>((r) => gates.push(r));
        active--;
      },
      { concurrency: 2 },
    );
    for (let i = 1; i <= 4; i++) await bus.publish(taskEvent(`d-${i}`));
    await Promise.resolve();
    await new Promise<void>((r) => setImmediate(r));
    expect(seen).toEqual(['d-1', 'd-2']);
    while (seen.length < 4 || gates.length > 0) {
      gates.shift()?.();
      await new Promise<void>((r) => setImmediate(r));
    }
    await bus.idle();
    expect(peak).toBe(2);
    expect(seen.sort()).toEqual(['d-1', 'd-2', 'd-3', 'd-4']);
    await bus.close();
  });

  it('bounds the buffer of an inbox nobody reads', async () => {
    const bus = new InProcessDelegationBus({ maxBuffered: 2 });
    await bus.publish(taskEvent('d-1'));
    await bus.publish(taskEvent('d-2'));
    const error = await bus.publish(taskEvent('d-3')).catch((e: unknown) => e);
    expect(isTasklineError(error, 'limit_exceeded')).toBe(true);
    expect((error as Error).message).toContain('start its subscriber');
    await bus.close();
  });

  it('delivers selection signals to the addressed agent only', async () => {
    const bus = new InProcessDelegationBus();
    const a: SelectionMessage[] = [];
    const b: SelectionMessage[] = [];
    await bus.onSignal('a', (m) => a.push(m));
    await bus.onSignal('b', (m) => b.push(m));
    await bus.signal('a', { kind: 'vote', round: 'r', from: 'x', ranking: ['a'] });
    await new Promise<void>((r) => setImmediate(r));
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(0);
    await bus.close();
    await expect(bus.publish(taskEvent('d-9'))).rejects.toThrow(/closed/);
  });
});
