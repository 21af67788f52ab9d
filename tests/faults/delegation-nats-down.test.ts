// Fault: NATS goes down and comes back while delegations are sent and worked on. The records
// are written meanwhile (outbox); once NATS is back every delegation runs once, every result
// reaches the sender once, and nothing stays in the outbox. Real I/O: bounded on the wall clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { createDelegationSender, type DelegationResult } from '../../src/service/bus/sender.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';
import { dropNatsPrefix, NATS_URL, natsPrefix, startFaultProxy } from './delegation-support.js';

const BOUND_MS = 30_000;
const prefix = natsPrefix('fnd');
const dir = mkdtempSync(join(tmpdir(), 'taskline-fault-nats-'));

afterAll(async () => {
  await dropNatsPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves on the connection's next status event of `type`. */
async function next(nc: NatsConnection, type: 'disconnect' | 'reconnect'): Promise<void> {
  for await (const status of nc.status()) if (status.type === type) return;
}

describe('fault: NATS down and back', () => {
  it('delegations sent while NATS is down run once each when it is back; nothing lost, nothing twice', {
    timeout: 60_000,
  }, async () => {
    const started = Date.now();
    const proxy = await startFaultProxy(NATS_URL);
    const options = { servers: proxy.address, maxReconnectAttempts: -1, reconnectTimeWait: 200 };
    const [ncSender, ncWorker] = await Promise.all([connect(options), connect(options)]);
    const store = await SqliteDelegationStore.open({ path: join(dir, 'down.db') });
    const senderBus = await NatsDelegationBus.connect({ connection: ncSender, prefix });
    const workerBus = await NatsDelegationBus.connect({ connection: ncWorker, prefix });
    const runs = new Map<string, number>();
    const worker = await serveDelegations({
      agentId: 'back-office',
      bus: workerBus,
      store,
      handler: ({ record }) => {
        runs.set(record.delegation_id, (runs.get(record.delegation_id) ?? 0) + 1);
        return `done ${record.delegation_id}`;
      },
    });
    const sender = await createDelegationSender({
      agentId: `voice-${prefix}`,
      bus: senderBus,
      store,
      publisher: { pollMs: 200 },
    });
    const heard: DelegationResult[] = [];
    sender.onResult((r) => heard.push(r));
    const send = (id: string) =>
      sender.delegate({ delegation_id: id, target: 'back-office', delegation_type: 'lookup' });

    await send('before');
    expect((await sender.awaitResult('before', { timeoutMs: BOUND_MS })).state).toBe('done');

    const down = Promise.all([next(ncSender, 'disconnect'), next(ncWorker, 'disconnect')]);
    proxy.down();
    await down;
    await send('during-1');
    await send('during-2');
    expect((await store.get('during-1'))?.delegation_id).toBe('during-1');

    const back = Promise.all([next(ncSender, 'reconnect'), next(ncWorker, 'reconnect')]);
    proxy.back();
    await back;
    await send('after');

    const results = await Promise.all(
      ['during-1', 'during-2', 'after'].map((id) =>
        sender.awaitResult(id, { timeoutMs: BOUND_MS }),
      ),
    );
    expect(results.map((r) => [r.delegation_id, r.state, r.result])).toEqual([
      ['during-1', 'done', 'done during-1'],
      ['during-2', 'done', 'done during-2'],
      ['after', 'done', 'done after'],
    ]);
    expect(Object.fromEntries(runs)).toEqual({ before: 1, 'during-1': 1, 'during-2': 1, after: 1 });
    expect(heard.map((r) => r.delegation_id).sort()).toEqual([
      'after',
      'before',
      'during-1',
      'during-2',
    ]);
    expect(proxy.cut).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);

    await worker.close();
    await sender.close();
    expect(await store.outboxSize()).toBe(0);
    await senderBus.close();
    await workerBus.close();
    await ncSender.close();
    await ncWorker.close();
    await store.close();
    await proxy.close();
  });
});
