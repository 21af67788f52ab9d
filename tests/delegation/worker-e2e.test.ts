import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { createDelegationSender } from '../../src/service/bus/sender.js';
import { PostgresDelegationStore } from '../../src/service/stores/postgres.js';
import { serveDelegations } from '../../src/service/worker.js';
import { serviceMissing } from '../services.js';
import { dropSchemas, PG_URL, spawnScript, srcModule, uniqueSchema } from './store-suite.js';

const skip = ((await serviceMissing('postgres')) ?? (await serviceMissing('nats'))) !== undefined;
const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';
const schema = uniqueSchema('e2e');
const busPrefix = `e2e_${process.pid}_${randomBytes(3).toString('hex')}`;

afterAll(async () => {
  const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix: busPrefix });
  await bus.deleteStream().catch(() => {});
  await bus.close();
  await dropSchemas([schema]);
});

describe('two processes exchanging delegations (Postgres + NATS JetStream)', { skip }, () => {
  it('a voice bot delegates lookups to a back-office worker process, which delegates formatting back', {
    timeout: 90_000,
  }, async () => {
    const imports = {
      store: srcModule('service/stores/postgres.ts'),
      bus: srcModule('service/bus/nats.ts'),
      worker: srcModule('service/worker.ts'),
      sender: srcModule('service/bus/sender.ts'),
    };
    const child = spawnScript(`
      const { PostgresDelegationStore } = await import(${JSON.stringify(imports.store)});
      const { NatsDelegationBus } = await import(${JSON.stringify(imports.bus)});
      const { serveDelegations } = await import(${JSON.stringify(imports.worker)});
      const { createDelegationSender } = await import(${JSON.stringify(imports.sender)});
      const store = await PostgresDelegationStore.open({ connectionString: ${JSON.stringify(PG_URL)}, schema: ${JSON.stringify(schema)} });
      const bus = await NatsDelegationBus.connect({ servers: ${JSON.stringify(NATS_URL)}, prefix: ${JSON.stringify(busPrefix)} });
      const sender = await createDelegationSender({ agentId: 'back-office', bus, store });
      const worker = await serveDelegations({
        agentId: 'back-office', bus, store,
        handler: async ({ data }) => {
          const sub = await sender.delegate({ target: 'voice-bot', delegation_type: 'format', sub_task_data: { amount: data.amount }, workflow_level: 2 });
          const spoken = await sender.awaitResult(sub.delegation_id, { timeoutMs: 30000 });
          return { amount: data.amount, spoken: spoken.result, pid: process.pid };
        },
      });
      process.on('SIGTERM', async () => {
        await worker.close();
        await sender.close();
        await bus.close();
        await store.close();
        console.log('stopped');
        process.exit(0);
      });
      console.log('ready');
    `);

    const store = await PostgresDelegationStore.open({ connectionString: PG_URL, schema });
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix: busPrefix });
    const formatter = await serveDelegations({
      agentId: 'voice-bot',
      bus,
      store,
      handler: ({ data }) => `${String(data.amount)} euros`,
    });
    const sender = await createDelegationSender({ agentId: 'voice-bot', bus, store });
    await child.waitForLine(/^ready$/);

    const amounts = [17, 250, 3];
    const ids = await Promise.all(
      amounts.map(async (amount, i) => {
        const r = await sender.delegate({
          delegation_id: `lookup-${i}`,
          target: 'back-office',
          delegation_type: 'lookup',
          sub_task_data: { amount },
          workflow_level: 1,
          deadlineMs: 60_000,
        });
        return r.delegation_id;
      }),
    );
    const results = await Promise.all(
      ids.map((id) => sender.awaitResult(id, { timeoutMs: 60_000 })),
    );
    expect(results.map((r) => r.state)).toEqual(['done', 'done', 'done']);
    expect(results.map((r) => (r.result as { spoken: string }).spoken)).toEqual([
      '17 euros',
      '250 euros',
      '3 euros',
    ]);
    const pids = new Set(results.map((r) => (r.result as { pid: number }).pid));
    expect(pids.size).toBe(1);
    expect(pids.has(process.pid)).toBe(false);

    // Every delegation, both directions, is a durable record with its history.
    const page = await store.query({ 'status.execution.state': 'done' }, { limit: 50 });
    const byType = (t: string) => page.items.filter((r) => r.delegation_type === t);
    expect(byType('lookup')).toHaveLength(3);
    expect(byType('format')).toHaveLength(3);
    expect(byType('format').every((r) => r.sender_subject_id === 'back-office')).toBe(true);

    child.kill('SIGTERM');
    await child.waitForLine(/^stopped$/);
    await child.exited;
    await sender.close();
    await formatter.close();
    await bus.close();
    await store.close();
  });
});
