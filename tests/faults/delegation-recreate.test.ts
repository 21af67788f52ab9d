// Fault: a delegation is deleted and created again under the same id. The new record is a new
// incarnation with its own event keys, so it is delivered and worked on like the first — in
// process, on NATS (whose dedupe window would otherwise drop it) and through the HTTP API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { startOutboxPublisher } from '../../src/service/bus/publisher.js';
import { createDelegationSender, type DelegationResult } from '../../src/service/bus/sender.js';
import type { DelegationBus } from '../../src/service/bus/types.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { dropNatsPrefix, NATS_URL, natsPrefix } from './delegation-support.js';

const BOUND_MS = 20_000;
const prefix = natsPrefix('frc');
const dir = mkdtempSync(join(tmpdir(), 'taskline-fault-recreate-'));

afterAll(async () => {
  await dropNatsPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
});

/** Sender + worker on one store and bus; the worker answers with the record's data. */
async function pair(bus: DelegationBus, file: string, clock?: VirtualClock) {
  const store = await SqliteDelegationStore.open({
    path: join(dir, file),
    ...(clock ? { clock } : {}),
  });
  const runs: string[] = [];
  // On the virtual clock one publisher, driven by the test, so `settle()` knows when all is out.
  const publisher = clock ? startOutboxPublisher({ store, bus, clock, pollMs: 0 }) : undefined;
  const worker = await serveDelegations({
    agentId: 'back-office',
    bus,
    store,
    ...(clock ? { clock, publisher: false } : {}),
    handler: ({ record }) => {
      runs.push(`${record.delegation_id}:${String(record.sub_task_data.n)}`);
      return `answer ${String(record.sub_task_data.n)}`;
    },
  });
  const sender = await createDelegationSender({
    agentId: 'voice-bot',
    bus,
    store,
    ...(clock ? { clock, publisher: false } : {}),
  });
  const heard: DelegationResult[] = [];
  sender.onResult((r) => heard.push(r));
  return {
    store,
    runs,
    heard,
    sender,
    /** Publishes and delivers until nothing is left (bounded: a handful of rounds). */
    async settle(): Promise<void> {
      for (let round = 0; round < 10; round++) {
        const published = (await publisher?.drain()) ?? 0;
        if (bus instanceof InProcessDelegationBus) await bus.idle();
        if (published === 0 && (await store.outboxSize()) === 0) return;
      }
      throw new Error('delegations did not settle in 10 rounds');
    },
    async close() {
      await publisher?.close();
      await worker.close();
      await sender.close();
      await store.close();
    },
  };
}

describe('fault: record deleted and re-created under the same id', () => {
  it('in process: the second incarnation is delivered, worked on and answered', async () => {
    const clock = new VirtualClock();
    const bus = new InProcessDelegationBus();
    const p = await pair(bus, 'inproc.db', clock);
    for (const n of [1, 2]) {
      await p.sender.delegate({
        delegation_id: 'again',
        target: 'back-office',
        delegation_type: 'lookup',
        sub_task_data: { n },
      });
      await p.settle();
      expect((await p.store.get('again'))?.status.execution).toMatchObject({
        state: 'done',
        delegation_result: `answer ${n}`,
      });
      expect(await p.store.delete('again')).toBe(true);
      await p.settle();
    }
    expect(p.runs).toEqual(['again:1', 'again:2']);
    expect(p.heard.map((r) => r.result)).toEqual(['answer 1', 'answer 2']);
    await p.close();
    await bus.close();
  });

  it('on NATS: the second incarnation is not taken for a duplicate within the dedupe window', {
    timeout: 40_000,
  }, async () => {
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, contract: false });
    const p = await pair(bus, 'nats.db');
    for (const n of [1, 2]) {
      await p.sender.delegate({
        delegation_id: `again-${prefix}`,
        target: 'back-office',
        delegation_type: 'lookup',
        sub_task_data: { n },
      });
      const result = await p.sender.awaitResult(`again-${prefix}`, { timeoutMs: BOUND_MS });
      expect(result).toMatchObject({ state: 'done', result: `answer ${n}` });
      expect(await p.store.delete(`again-${prefix}`)).toBe(true);
    }
    expect(p.runs).toEqual([`again-${prefix}:1`, `again-${prefix}:2`]);
    expect(p.heard.map((r) => r.result)).toEqual(['answer 1', 'answer 2']);
    await p.close();
    await bus.close();
  });

  it('over HTTP: DELETE then POST with the same id is delivered again', async () => {
    const clock = new VirtualClock();
    const bus = new InProcessDelegationBus();
    const p = await pair(bus, 'http.db', clock);
    const key = 'voice-bot-key-0123456789';
    const api = await createDelegationsApi({
      store: p.store,
      bus,
      clock,
      publisher: false,
      keys: new ApiKeys([{ key, agent: 'voice-bot' }]),
    });
    const call = (method: 'POST' | 'DELETE', url: string, body?: unknown) =>
      api.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const body = (n: number) => ({
      delegation_id: 'http-again',
      task_id: 'task123',
      sub_task_id: 'sub456',
      workflow_level: 1,
      delegation_type: 'manual',
      target_subject_id: 'back-office',
      sender_subject_id: 'voice-bot',
      sub_task_data: { n },
    });
    for (const n of [1, 2]) {
      expect((await call('POST', '/delegations', body(n))).statusCode).toBe(200);
      await p.settle();
      // A contract record has no stage: the worker reports in status.delegation_result.
      expect((await p.store.get('http-again'))?.status.delegation_result).toMatchObject({
        state: 'done',
        delegation_result: `answer ${n}`,
      });
      expect((await call('DELETE', '/delegations/http-again')).statusCode).toBe(200);
      await p.settle();
    }
    expect(p.runs).toEqual(['http-again:1', 'http-again:2']);
    expect(p.heard.map((r) => r.result)).toEqual(['answer 1', 'answer 2']);
    await api.close();
    await p.close();
    await bus.close();
  });
});
