// The contract's events on plain NATS subjects, seen by subscribers that know nothing of
// taskline, and pools: a delegation to a pool is a job on a work queue that exactly one worker
// of the pool runs.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { contractMessageOf } from '../../src/service/bus/contract.js';
import { eventKey, eventsForChange } from '../../src/service/bus/events.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { createDelegationSender } from '../../src/service/bus/sender.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { makeRecord, spawnScript, srcModule } from './store-suite.js';

const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';
const run = `ce${process.pid}_${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'taskline-contract-events-'));
const prefixes: string[] = [];
let n = 0;
const fresh = () => {
  const p = `${run}_${n++}`;
  prefixes.push(p);
  return p;
};

afterAll(async () => {
  for (const prefix of prefixes) {
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, contract: false });
    await bus.deleteStream();
    await bus.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A plain core-NATS subscriber: collects JSON messages and resolves when `until` holds. */
function listen(nc: NatsConnection, subject: string, queue?: string) {
  const got: Array<{ data: Record<string, unknown>; msg: Msg }> = [];
  const waiters: Array<{ until: () => boolean; resolve: () => void }> = [];
  nc.subscribe(subject, {
    ...(queue ? { queue } : {}),
    callback: (_err, msg) => {
      got.push({ data: msg.json(), msg });
      for (const w of [...waiters]) {
        if (w.until()) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    },
  });
  return {
    got,
    when(until: () => boolean): Promise<void> {
      if (until()) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ until, resolve }));
    },
  };
}

describe('contract events on NATS', () => {
  it('task to the target and result to the sender, as plain JSON on the agents’ subjects', {
    timeout: 30_000,
  }, async () => {
    const prefix = fresh();
    const target = `tgt-${run}`;
    const sender_ = `snd-${run}`;
    const plain = await connect({ servers: NATS_URL });
    const onTarget = listen(plain, target);
    const onSender = listen(plain, sender_);
    await plain.flush();

    const store = await SqliteDelegationStore.open({ path: join(dir, `${prefix}.db`) });
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix });
    const sender = await createDelegationSender({ agentId: sender_, bus, store });
    const worker = await serveDelegations({
      agentId: target,
      bus,
      store,
      handler: ({ data }) => {
        if (data.fail) throw new Error('cannot do that');
        return `did ${String(data.key)}`;
      },
    });
    const ok = await sender.delegate({
      target,
      delegation_type: 'manual',
      task_id: 'task123',
      sub_task_id: 'sub456',
      sub_task_data: { key: 'value' },
      stage: null,
    });
    const bad = await sender.delegate({
      target,
      delegation_type: 'manual',
      sub_task_data: { fail: true },
      stage: null,
    });
    await sender.awaitResult(ok.delegation_id, { timeoutMs: 20_000 });
    await sender.awaitResult(bad.delegation_id, { timeoutMs: 20_000 });
    await onSender.when(() => onSender.got.length >= 2);
    await onTarget.when(() => onTarget.got.length >= 2);

    expect(onTarget.got[0]?.data).toEqual({
      event_type: 'delegation_task',
      event_data: {
        task_id: 'task123',
        sub_task_id: 'sub456',
        delegation_id: ok.delegation_id,
        data: { key: 'value' },
      },
      sender_subject_id: sender_,
    });
    const results = new Map(
      onSender.got.map((g) => [
        (g.data.event_data as { delegation_id: string }).delegation_id,
        g.data,
      ]),
    );
    expect(results.get(ok.delegation_id)).toMatchObject({
      event_type: 'delegation_result',
      event_data: {
        delegation_id: ok.delegation_id,
        task_id: 'task123',
        delegation_result: 'did value',
        state: 'done',
        stage: 'delegation_result',
        data: { state: 'done', delegation_result: 'did value' },
      },
      sender_subject_id: target,
    });
    expect(results.get(bad.delegation_id)).toMatchObject({
      event_type: 'delegation_result',
      event_data: { state: 'failed', delegation_result: 'cannot do that' },
    });
    // Each carries its event key as Nats-Msg-Id, for subscribers that deduplicate.
    expect(onTarget.got[0]?.msg.headers?.get('Nats-Msg-Id')).toMatch(
      new RegExp(`^${ok.delegation_id}:.+:delegation_task:1$`),
    );
    expect(onTarget.got).toHaveLength(2);
    expect(onSender.got).toHaveLength(2);

    await worker.close();
    await sender.close();
    await bus.close();
    await store.close();
    await plain.close();
  });

  it('only submitted results reach the contract subject; expiry and cancels stay on taskline subjects', () => {
    const record = makeRecord('c-1');
    const change = (state: 'done' | 'failed' | 'expired' | 'cancelled' | 'in_progress') => ({
      op: 'stage' as const,
      delegation_id: 'c-1',
      version: 2,
      incarnation: 'i',
      time: 1,
      record: {
        ...record,
        status: { execution: { state, time: 1 } },
      },
      stage: 'execution',
      state,
    });
    const contract = (state: Parameters<typeof change>[0]) =>
      eventsForChange(change(state))
        .map(contractMessageOf)
        .filter((m) => m !== undefined)
        .map((m) => `${m.event.event_type}->${m.to}`);
    expect(contract('done')).toEqual(['delegation_result->voice-bot']);
    expect(contract('failed')).toEqual(['delegation_result->voice-bot']);
    expect(contract('expired')).toEqual([]);
    expect(contract('cancelled')).toEqual([]);
    expect(contract('in_progress')).toEqual([]);
  });

  it('publishes on <prefix>.<agent> with a subject prefix, and nothing with contract: false', {
    timeout: 30_000,
  }, async () => {
    const nc = await connect({ servers: NATS_URL });
    const agent = `pfx-${run}`;
    const bare = listen(nc, agent);
    const prefixed = listen(nc, `${run}.org.${agent}`);
    const event = (id: string) =>
      eventsForChange({
        op: 'create',
        delegation_id: id,
        version: 1,
        incarnation: 'i',
        time: 1,
        record: makeRecord(id, { target_subject_id: agent }),
      })[0]!;
    // The buses share the subscriber's connection: one connection keeps publish order, so the
    // marker proves nothing else was published before it.
    const off = await NatsDelegationBus.connect({
      connection: nc,
      prefix: fresh(),
      contract: false,
    });
    const on = await NatsDelegationBus.connect({
      connection: nc,
      prefix: fresh(),
      contract: { prefix: `${run}.org` },
    });
    await off.publish(event('quiet'));
    await on.publish(event('loud'));
    nc.publish(agent, JSON.stringify({ marker: true }));
    await bare.when(() => bare.got.length >= 1);
    await prefixed.when(() => prefixed.got.length >= 1);
    expect(bare.got.map((g) => g.data)).toEqual([{ marker: true }]);
    expect(
      prefixed.got.map((g) => (g.data.event_data as { delegation_id: string }).delegation_id),
    ).toEqual(['loud']);
    await expect(
      NatsDelegationBus.connect({
        connection: nc,
        prefix: fresh(),
        contract: { prefix: 'bad prefix' },
      }),
    ).rejects.toThrow(/not a NATS subject/);
    await off.close();
    await on.close();
    await nc.close();
  });
});

describe('pools: a delegation to a pool is a job run by exactly one worker', () => {
  it('in process: two workers of one agent id share the jobs, each runs once', async () => {
    const clock = new VirtualClock();
    const store = await SqliteDelegationStore.open({ path: join(dir, `pool-${run}.db`), clock });
    const bus = new InProcessDelegationBus();
    const ran: string[] = [];
    const by = new Map<string, number>();
    const worker = (name: string) =>
      serveDelegations({
        agentId: 'transcoders',
        bus,
        store,
        clock,
        concurrency: 2,
        handler: ({ record }) => {
          ran.push(record.delegation_id);
          by.set(name, (by.get(name) ?? 0) + 1);
          return `${name} did it`;
        },
      });
    const workers = [await worker('w1'), await worker('w2')];
    const sender = await createDelegationSender({ agentId: 'studio', bus, store, clock });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(
        (await sender.delegate({ target: 'transcoders', delegation_type: 'job' })).delegation_id,
      );
    }
    const results = await Promise.all(ids.map((id) => sender.awaitResult(id)));
    expect(results.every((r) => r.state === 'done')).toBe(true);
    expect([...ran].sort()).toEqual([...ids].sort());
    expect(by.get('w1')).toBeGreaterThan(0);
    expect(by.get('w2')).toBeGreaterThan(0);
    for (const w of workers) await w.close();
    await sender.close();
    await bus.close();
    await store.close();
  });

  it('on NATS: two worker processes of one pool, 30 jobs, each runs exactly once; a plain queue group sees each task once', {
    timeout: 90_000,
  }, async () => {
    const prefix = fresh();
    const pool = `pool-${run}`;
    const path = join(dir, `${prefix}.db`);
    const plain = await connect({ servers: NATS_URL });
    const q1 = listen(plain, pool, 'contract-pool');
    const q2 = listen(plain, pool, 'contract-pool');
    await plain.flush();
    const script = (name: string) => `
      const { SqliteDelegationStore } = await import(${JSON.stringify(srcModule('service/stores/sqlite.ts'))});
      const { NatsDelegationBus } = await import(${JSON.stringify(srcModule('service/bus/nats.ts'))});
      const { serveDelegations } = await import(${JSON.stringify(srcModule('service/worker.ts'))});
      const store = await SqliteDelegationStore.open({ path: ${JSON.stringify(path)} });
      const bus = await NatsDelegationBus.connect({ servers: ${JSON.stringify(NATS_URL)}, prefix: ${JSON.stringify(prefix)} });
      const worker = await serveDelegations({
        agentId: ${JSON.stringify(pool)}, bus, store, concurrency: 2,
        handler: async ({ record }) => {
          console.log('ran ' + record.delegation_id);
          await new Promise((resolve) => setImmediate(resolve));
          return ${JSON.stringify(name)};
        },
      });
      process.on('SIGTERM', async () => {
        await worker.close();
        await bus.close();
        await store.close();
        console.log('stopped');
        process.exit(0);
      });
      console.log('ready');
    `;
    const store = await SqliteDelegationStore.open({ path });
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix });
    const workers = [spawnScript(script('w1')), spawnScript(script('w2'))];
    await Promise.all(workers.map((w) => w.waitForLine(/^ready$/)));
    const sender = await createDelegationSender({ agentId: `studio-${run}`, bus, store });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      ids.push(
        (await sender.delegate({ target: pool, delegation_type: 'job', sub_task_data: { i } }))
          .delegation_id,
      );
    }
    const results = await Promise.all(
      ids.map((id) => sender.awaitResult(id, { timeoutMs: 60_000 })),
    );
    expect(results.every((r) => r.state === 'done')).toBe(true);
    const runs = workers.flatMap((w) =>
      w.lines.filter((l) => l.startsWith('ran ')).map((l) => l.slice(4)),
    );
    expect(runs.sort()).toEqual([...ids].sort());
    const perWorker = workers.map((w) => w.lines.filter((l) => l.startsWith('ran ')).length);
    console.log(`[pool] jobs per worker: ${perWorker.join(' + ')} = ${ids.length}`);
    await q1.when(() => q1.got.length + q2.got.length >= ids.length);
    const seen = [...q1.got, ...q2.got].map(
      (g) => (g.data.event_data as { delegation_id: string }).delegation_id,
    );
    expect(seen.sort()).toEqual([...ids].sort());
    // Work-queue retention: a job leaves the stream once a worker acknowledged it.
    const jsm = await (await import('@nats-io/jetstream')).jetstreamManager(plain);
    expect((await jsm.streams.info(bus.jobStream)).state.messages).toBe(0);
    for (const w of workers) {
      w.kill('SIGTERM');
      await w.waitForLine(/^stopped$/);
      await w.exited;
    }
    await sender.close();
    await bus.close();
    await store.close();
    await plain.close();
  });
});

describe('event keys', () => {
  it('differ between incarnations of one delegation id', () => {
    const e = { delegation_id: 'd', event: 'delegation_task' as const, version: 1 };
    expect(eventKey({ ...e, incarnation: 'a' })).not.toBe(eventKey({ ...e, incarnation: 'b' }));
  });
});
