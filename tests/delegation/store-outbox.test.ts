import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DelegationEvent } from '../../src/service/bus/events.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { startOutboxPublisher } from '../../src/service/bus/publisher.js';
import type { DurableDelegationStore } from '../../src/service/stores/change.js';
import { PostgresDelegationStore } from '../../src/service/stores/postgres.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { serviceMissing } from '../services.js';
import {
  dropSchemas,
  makeRecord,
  PG_URL,
  spawnScript,
  srcModule,
  uniqueSchema,
} from './store-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-outbox-'));
const noPostgres = await serviceMissing('postgres');
const schema = uniqueSchema('outbox');
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropSchemas([schema]);
});

interface Backend {
  name: string;
  /** Source of an expression (in the child) that opens the same store. */
  openInChild: string;
  open(): Promise<DurableDelegationStore>;
}

let n = 0;
function backends(): Backend[] {
  const path = join(dir, `kill-${n}.db`);
  const prefix = `k${n++}_`;
  const all: Backend[] = [
    {
      name: 'sqlite',
      openInChild: `(await import(${JSON.stringify(srcModule('service/stores/sqlite.ts'))})).SqliteDelegationStore.open({ path: ${JSON.stringify(path)} })`,
      open: () => SqliteDelegationStore.open({ path }),
    },
    {
      name: 'postgres',
      openInChild: `(await import(${JSON.stringify(srcModule('service/stores/postgres.ts'))})).PostgresDelegationStore.open({ connectionString: ${JSON.stringify(PG_URL)}, schema: ${JSON.stringify(schema)}, prefix: ${JSON.stringify(prefix)} })`,
      open: () => PostgresDelegationStore.open({ connectionString: PG_URL, schema, prefix }),
    },
  ];
  return all.filter((b) => b.name !== 'postgres' || !noPostgres);
}

const recordSource = (id: string) => JSON.stringify(makeRecord(id));

/** Subscribes to back-office's work inbox and resolves once `ids` all arrived. */
async function expectTasks(bus: InProcessDelegationBus, ids: string[]): Promise<DelegationEvent[]> {
  const got: DelegationEvent[] = [];
  await new Promise<void>((resolve) => {
    void bus.subscribe('back-office', 'work', (e) => {
      got.push(e);
      if (ids.every((id) => got.some((g) => g.delegation_id === id))) resolve();
    });
  });
  return got;
}

describe('outbox publisher', () => {
  it('publishes every committed change as bus events and empties the outbox', async () => {
    const store = await SqliteDelegationStore.open({ path: join(dir, 'publish.db') });
    const bus = new InProcessDelegationBus();
    const replies: string[] = [];
    await bus.subscribe('voice-bot', 'reply', (e) => void replies.push(`${e.event}:${e.state}`));
    const publisher = startOutboxPublisher({ store, bus, pollMs: 0 });
    const tasks = expectTasks(bus, ['p-1']);
    await store.create(makeRecord('p-1'));
    await store.setStage('p-1', 'execution', { state: 'in_progress' });
    await store.setStage('p-1', 'execution', { state: 'done', delegation_result: 7 });
    await publisher.drain();
    await bus.idle();
    expect((await tasks).map((e) => e.record.delegation_id)).toEqual(['p-1']);
    expect(replies).toEqual(['delegation_status:in_progress', 'delegation_result:done']);
    expect(await store.outboxSize()).toBe(0);
    await publisher.close();
    await store.close();
    await bus.close();
  });

  it('keeps entries whose publish failed and sends them on the next drain', async () => {
    const store = await SqliteDelegationStore.open({ path: join(dir, 'retry.db') });
    const bus = new InProcessDelegationBus();
    let fail = true;
    const flaky = Object.create(bus) as InProcessDelegationBus;
    flaky.publish = (e) => (fail ? Promise.reject(new Error('bus down')) : bus.publish(e));
    const publisher = startOutboxPublisher({ store, bus: flaky, pollMs: 0, drainOnWrite: false });
    await store.create(makeRecord('r-1'));
    await expect(publisher.drain()).rejects.toThrow('bus down');
    expect(await store.outboxSize()).toBe(1);
    fail = false;
    const tasks = expectTasks(bus, ['r-1']);
    expect(await publisher.drain()).toBe(1);
    await tasks;
    expect(await store.outboxSize()).toBe(0);
    await publisher.close();
    await store.close();
    await bus.close();
  });
});

describe.each(backends())(
  'a process killed between record write and publish loses nothing ($name)',
  (backend) => {
    it('killed right after the write commits: a new publisher sends the events', {
      timeout: 60_000,
    }, async () => {
      const child = spawnScript(`
      const store = await ${backend.openInChild};
      for (const id of ['kill-1', 'kill-2', 'kill-3']) {
        await store.create(JSON.parse(${JSON.stringify(recordSource('ID'))}.replaceAll('ID', id)));
      }
      console.log('written');
      setInterval(() => {}, 60_000); // never publishes; waits to be killed
    `);
      await child.waitForLine(/^written$/);
      child.kill('SIGKILL');
      expect(await child.exited).toBe('SIGKILL');

      const store = await backend.open();
      const bus = new InProcessDelegationBus();
      const tasks = expectTasks(bus, ['kill-1', 'kill-2', 'kill-3']);
      const publisher = startOutboxPublisher({ store, bus, pollMs: 0 });
      await publisher.drain();
      expect((await tasks).map((e) => e.delegation_id).sort()).toEqual([
        'kill-1',
        'kill-2',
        'kill-3',
      ]);
      expect(await store.outboxSize()).toBe(0);
      await publisher.close();
      await store.close();
      await bus.close();
    });

    it('killed mid-publish holding a lease: the entries go out once the lease lapses', {
      timeout: 60_000,
    }, async () => {
      const child = spawnScript(`
      const { startOutboxPublisher } = await import(${JSON.stringify(srcModule('service/bus/publisher.ts'))});
      const store = await ${backend.openInChild};
      for (const id of ['lease-1', 'lease-2']) {
        await store.create(JSON.parse(${JSON.stringify(recordSource('ID'))}.replaceAll('ID', id)));
      }
      // A bus that hangs on publish: the process dies while "publishing".
      const stuck = { publish: () => { console.log('publishing'); return new Promise(() => {}); } };
      startOutboxPublisher({ store, bus: stuck, pollMs: 0, leaseMs: 60_000 });
    `);
      await child.waitForLine(/^publishing$/);
      child.kill('SIGKILL');
      await child.exited;

      const store = await backend.open();
      const bus = new InProcessDelegationBus();
      const clock = new VirtualClock(Date.now());
      const publisher = startOutboxPublisher({ store, bus, clock, pollMs: 0, drainOnWrite: false });
      expect(await publisher.drain()).toBe(0); // still leased by the dead process
      expect(await store.outboxSize()).toBe(2);
      await clock.advance(61_000);
      const tasks = expectTasks(bus, ['lease-1', 'lease-2']);
      expect(await publisher.drain()).toBe(2);
      expect((await tasks).map((e) => e.delegation_id)).toEqual(['lease-1', 'lease-2']);
      await publisher.close();
      await store.close();
      await bus.close();
    });
  },
);
