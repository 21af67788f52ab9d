import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { describeDelegationStoreSuite, describeOutboxSuite, makeRecord } from './store-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-sqlite-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeDelegationStoreSuite('sqlite', ({ clock }) =>
  SqliteDelegationStore.open({ path: join(dir, `suite-${n++}.db`), clock }),
);

describeOutboxSuite('sqlite', ({ clock }) =>
  SqliteDelegationStore.open({ path: join(dir, `outbox-${n++}.db`), clock }),
);

describe('sqlite store: files and processes', () => {
  it('keeps records across reopen and shares the file between two handles', async () => {
    const path = join(dir, 'shared.db');
    const clock = new VirtualClock();
    const a = await SqliteDelegationStore.open({ path, clock });
    const b = await SqliteDelegationStore.open({ path, clock });
    await a.create(makeRecord('shared-1'));
    await b.setStage('shared-1', 'execution', { state: 'in_progress' });
    expect((await a.get('shared-1'))?.status.execution?.state).toBe('in_progress');
    await a.close();
    await b.close();
    const c = await SqliteDelegationStore.open({ path, clock });
    expect((await c.get('shared-1'))?.status.execution?.state).toBe('in_progress');
    expect(await c.outboxSize()).toBe(2);
    await c.close();
  });

  it('keeps stores with different prefixes apart and refuses unsafe prefixes', async () => {
    const path = join(dir, 'prefixes.db');
    const a = await SqliteDelegationStore.open({ path, prefix: 'a_' });
    const b = await SqliteDelegationStore.open({ path, prefix: 'b_' });
    await a.create(makeRecord('p-1'));
    expect(await b.get('p-1')).toBeUndefined();
    await a.close();
    await b.close();
    await expect(SqliteDelegationStore.open({ path, prefix: 'x"; DROP' })).rejects.toThrow(
      /not allowed/,
    );
  });
});
