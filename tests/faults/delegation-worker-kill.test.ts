// Fault: a worker process is killed with SIGKILL in the middle of a sub-task. Its job was never
// acknowledged, so JetStream hands it to the other worker of the pool once the ack wait lapses;
// the sub-task completes exactly once and the sender hears one result. Real processes and I/O:
// bounded on the wall clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { createDelegationSender, type DelegationResult } from '../../src/service/bus/sender.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { spawnScript, srcModule } from '../delegation/store-suite.js';
import { dropNatsPrefix, NATS_URL, natsPrefix } from './delegation-support.js';

const BOUND_MS = 30_000;
const prefix = natsPrefix('fwk');
const dir = mkdtempSync(join(tmpdir(), 'taskline-fault-kill-'));

afterAll(async () => {
  await dropNatsPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
});

describe('fault: worker kill -9 mid-task', () => {
  it('the job is redone by the other worker of the pool, once; the sender hears one result', {
    timeout: 90_000,
  }, async () => {
    const started = Date.now();
    const path = join(dir, 'kill.db');
    const pool = `pool-${prefix}`;
    // The first delivery of a job hangs (the process will be killed there); a redelivery runs.
    const script = `
      const { SqliteDelegationStore } = await import(${JSON.stringify(srcModule('service/stores/sqlite.ts'))});
      const { NatsDelegationBus } = await import(${JSON.stringify(srcModule('service/bus/nats.ts'))});
      const { serveDelegations } = await import(${JSON.stringify(srcModule('service/worker.ts'))});
      const store = await SqliteDelegationStore.open({ path: ${JSON.stringify(path)} });
      const bus = await NatsDelegationBus.connect({ servers: ${JSON.stringify(NATS_URL)}, prefix: ${JSON.stringify(prefix)}, ackWaitMs: 1000 });
      await serveDelegations({
        agentId: ${JSON.stringify(pool)}, bus, store,
        handler: async ({ record, attempt }) => {
          if (attempt === 1) {
            console.log('stuck ' + record.delegation_id);
            return new Promise(() => {});
          }
          console.log('done ' + record.delegation_id + ' ' + attempt);
          return 'finished on attempt ' + attempt;
        },
      });
      console.log('ready');
    `;
    const workers = [spawnScript(script), spawnScript(script)];
    await Promise.all(workers.map((w) => w.waitForLine(/^ready$/)));
    const store = await SqliteDelegationStore.open({ path });
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, contract: false });
    const sender = await createDelegationSender({ agentId: `voice-${prefix}`, bus, store });
    const heard: DelegationResult[] = [];
    sender.onResult((r) => heard.push(r));

    await sender.delegate({ delegation_id: 'job-1', target: pool, delegation_type: 'render' });
    const stuck = await Promise.race(
      workers.map((w, i) => w.waitForLine(/^stuck job-1$/).then(() => i)),
    );
    expect((await store.get('job-1'))?.status.execution?.state).toBe('in_progress');
    workers[stuck]!.kill('SIGKILL');
    await workers[stuck]!.exited;

    const result = await sender.awaitResult('job-1', { timeoutMs: BOUND_MS });
    expect(result).toMatchObject({ state: 'done', result: 'finished on attempt 2' });
    const survivor = workers[1 - stuck]!;
    await survivor.waitForLine(/^done job-1 2$/);
    const completions = workers.flatMap((w) => w.lines.filter((l) => l.startsWith('done job-1')));
    expect(completions).toEqual(['done job-1 2']);
    expect(heard.map((r) => `${r.delegation_id}:${r.state}`)).toEqual(['job-1:done']);
    expect(Date.now() - started).toBeLessThan(BOUND_MS + 30_000);

    survivor.kill('SIGKILL');
    await survivor.exited;
    await sender.close();
    await bus.close();
    await store.close();
  });
});
