import { randomBytes } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { type DelegationEvent, eventKey } from '../../src/service/bus/events.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import type { SelectionMessage } from '../../src/service/bus/signals.js';
import { agentToken } from '../../src/service/bus/subjects.js';
import { serviceMissing } from '../services.js';
import { makeRecord, spawnScript, srcModule } from './store-suite.js';

const skip = (await serviceMissing('nats')) !== undefined;
const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';
const run = `t${process.pid}_${randomBytes(3).toString('hex')}`;
const buses: NatsDelegationBus[] = [];
const prefixes = new Set<string>();
let n = 0;

function freshPrefix(): string {
  const p = `${run}_${n++}`;
  prefixes.add(p);
  return p;
}

async function open(prefix: string, ackWaitMs = 30_000): Promise<NatsDelegationBus> {
  const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, ackWaitMs });
  buses.push(bus);
  return bus;
}

afterAll(async () => {
  const cleaner = await NatsDelegationBus.connect({ servers: NATS_URL, prefix: `${run}_x` });
  for (const p of [...prefixes, `${run}_x`]) {
    const b = await NatsDelegationBus.connect({ servers: NATS_URL, prefix: p });
    await b.deleteStream().catch(() => {});
    await b.close();
  }
  await cleaner.close();
  await Promise.allSettled(buses.map((b) => b.close()));
});

function taskEvent(id: string, to = 'back-office', version = 1): DelegationEvent {
  return {
    event: 'delegation_task',
    delegation_id: id,
    version,
    incarnation: 'inc-1',
    to,
    change: 'create',
    time: 1767603600,
    record: makeRecord(id, { target_subject_id: to }),
  };
}

/** Subscribes and resolves with the received events once `until` says so. */
function receive(
  bus: NatsDelegationBus,
  agent: string,
  until: (got: Array<{ id: string; attempt: number }>) => boolean,
  handler?: (e: DelegationEvent, attempt: number) => void,
) {
  const got: Array<{ id: string; attempt: number }> = [];
  let resolve: () => void = () => {};
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  const sub = bus.subscribe(agent, 'work', (e, info) => {
    got.push({ id: e.delegation_id, attempt: info.attempt });
    if (until(got)) resolve();
    handler?.(e, info.attempt);
  });
  return { got, done, sub };
}

describe('NatsDelegationBus (real NATS JetStream)', { skip }, () => {
  it('a receiver that was down gets every event published meanwhile, and nothing twice', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix();
    const sender = await open(prefix);
    const first = await open(prefix);
    const r1 = receive(first, 'back-office', (g) => g.length === 1);
    await r1.sub;
    await sender.publish(taskEvent('d-1'));
    await r1.done;
    await first.close(); // receiver goes down

    for (let i = 2; i <= 6; i++) await sender.publish(taskEvent(`d-${i}`));

    const second = await open(prefix); // a new process comes up with the same agent id
    const r2 = receive(second, 'back-office', (g) => g.length === 5);
    await r2.done;
    expect(r2.got.map((g) => g.id)).toEqual(['d-2', 'd-3', 'd-4', 'd-5', 'd-6']);
  });

  it('drops duplicates: by msg id on publish, and by key on receive', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix();
    const bus = await open(prefix);
    expect(await bus.publish(taskEvent('dup-1'))).toEqual({ duplicate: false });
    expect(await bus.publish(taskEvent('dup-1'))).toEqual({ duplicate: true });
    // A copy that slips past the server's window (published raw, without a msg id).
    const nc = await connect({ servers: NATS_URL });
    const js = jetstream(nc);
    await js.publish(
      `${prefix}.to.back-office.work.delegation_task`,
      JSON.stringify(taskEvent('dup-1')),
    );
    await bus.publish(taskEvent('dup-2'));
    const r = receive(bus, 'back-office', (g) => g.some((x) => x.id === 'dup-2'));
    await r.done;
    expect(r.got.map((g) => g.id)).toEqual(['dup-1', 'dup-2']);
    await nc.close();
  });

  it('a consumer killed mid-batch: the unacknowledged events are redelivered to the next one', {
    timeout: 60_000,
  }, async () => {
    const prefix = freshPrefix();
    const sender = await open(prefix, 1_000);
    // Create the durable consumer, then queue six events before the child starts.
    await (await sender.subscribe('back-office', 'work', () => {}, {})).close();
    for (let i = 1; i <= 6; i++) await sender.publish(taskEvent(`k-${i}`));

    const child = spawnScript(`
      const { NatsDelegationBus } = await import(${JSON.stringify(srcModule('service/bus/nats.ts'))});
      const bus = await NatsDelegationBus.connect({ servers: ${JSON.stringify(NATS_URL)}, prefix: ${JSON.stringify(prefix)}, ackWaitMs: 1000 });
      await bus.subscribe('back-office', 'work', async (e) => {
        if (e.delegation_id === 'k-3') {
          console.log('stuck on k-3');
          await new Promise(() => {});
        }
        console.log('handled ' + e.delegation_id);
      });
    `);
    await child.waitForLine(/^stuck on k-3$/);
    expect(child.lines).toEqual(['handled k-1', 'handled k-2', 'stuck on k-3']);
    child.kill('SIGKILL');
    await child.exited;

    const next = await open(prefix, 1_000);
    const r = receive(next, 'back-office', (g) => g.length === 4);
    await r.done;
    expect(r.got.map((g) => g.id).sort()).toEqual(['k-3', 'k-4', 'k-5', 'k-6']);
    expect(r.got.find((g) => g.id === 'k-3')!.attempt).toBeGreaterThanOrEqual(2);
  });

  it('redelivers an event whose handler threw', { timeout: 30_000 }, async () => {
    const prefix = freshPrefix();
    const bus = await open(prefix);
    const r = receive(
      bus,
      'back-office',
      (g) => g.length === 2,
      (_e, attempt) => {
        if (attempt === 1) throw new Error('transient');
      },
    );
    await r.sub;
    await bus.publish(taskEvent('f-1'));
    await r.done;
    expect(r.got).toEqual([
      { id: 'f-1', attempt: 1 },
      { id: 'f-1', attempt: 2 },
    ]);
  });

  it('routes agent ids with dots and spaces; watch sees all; signals reach one agent', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix();
    const bus = await open(prefix);
    const other = await open(prefix);
    const agent = 'team.billing eu';
    expect(agentToken(agent)).toMatch(/^h_[0-9a-f]{40}$/);
    const watched: string[] = [];
    await other.watch((e) => watched.push(eventKey(e)));
    const r = receive(other, agent, (g) => g.length === 1);
    await r.sub;
    const signals: SelectionMessage[] = [];
    let gotSignal: () => void = () => {};
    const signalled = new Promise<void>((resolve) => {
      gotSignal = resolve;
    });
    await other.onSignal(agent, (m) => {
      signals.push(m);
      gotSignal();
    });
    await bus.publish(taskEvent('w-1', agent));
    await bus.signal(agent, { kind: 'vote', round: 'r1', from: 'x', ranking: ['a'] });
    await r.done;
    await signalled;
    expect(watched).toEqual(['w-1:inc-1:delegation_task:1']);
    expect(signals).toEqual([{ kind: 'vote', round: 'r1', from: 'x', ranking: ['a'] }]);
  });
});
