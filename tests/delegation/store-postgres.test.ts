import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { PostgresDelegationStore } from '../../src/service/stores/postgres.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { serviceMissing } from '../services.js';
import {
  describeDelegationStoreSuite,
  describeOutboxSuite,
  dropSchemas,
  makeRecord,
  PG_URL,
  uniqueSchema,
} from './store-suite.js';

const skip = (await serviceMissing('postgres')) !== undefined;
const schema = uniqueSchema('deleg');
const pool = new pg.Pool({ connectionString: PG_URL, max: 8 });
let n = 0;

afterAll(async () => {
  await pool.end();
  await dropSchemas([schema]);
});

describeDelegationStoreSuite(
  'postgres',
  ({ clock }) => PostgresDelegationStore.open({ pool, schema, prefix: `s${n++}_`, clock }),
  { skip },
);

describeOutboxSuite(
  'postgres',
  ({ clock }) => PostgresDelegationStore.open({ pool, schema, prefix: `o${n++}_`, clock }),
  { skip },
);

describe('postgres store: setup and data errors', { skip }, () => {
  it('creates its tables from several stores at once, idempotently', async () => {
    const stores = await Promise.all(
      [0, 1, 2].map(() => PostgresDelegationStore.open({ pool, schema, prefix: 'concurrent_' })),
    );
    await stores[0]!.create(makeRecord('c-1'));
    expect(await stores[2]!.get('c-1')).toBeDefined();
    await Promise.all(stores.map((s) => s.close()));
  });

  it('turns text Postgres cannot store (NUL bytes) into invalid_argument', async () => {
    const store = await PostgresDelegationStore.open({ pool, schema, prefix: 'nul_' });
    const error = await store
      .create(makeRecord('nul-1', { sub_task_data: { note: 'a\u0000b' } }))
      .catch((e: unknown) => e);
    expect(isTasklineError(error, 'invalid_argument')).toBe(true);
    await store.close();
  });

  it('opens its own pool from a URL and ends it on close', async () => {
    const clock = new VirtualClock();
    const store = await PostgresDelegationStore.open({
      connectionString: PG_URL,
      schema,
      prefix: 'own_',
      clock,
    });
    await store.create(makeRecord('own-1'));
    expect((await store.get('own-1'))?.delegation_id).toBe('own-1');
    await store.close();
  });

  it('serialises 100 parallel writes to one record: none fails, every change is in the outbox', async () => {
    const store = await PostgresDelegationStore.open({ pool, schema, prefix: 'contend_' });
    await store.create(makeRecord('hot-1'));
    const writes = Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0
        ? store.update('hot-1', { [`sub_task_data.k${i}`]: i })
        : store.setStage('hot-1', `stage-${i}`, { state: 'in_progress' }),
    );
    const results = await Promise.allSettled(writes);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const final = await store.getVersioned('hot-1');
    expect(final?.version).toBe(101);
    expect(
      Object.keys(final?.record.sub_task_data ?? {}).filter((k) => k.startsWith('k')),
    ).toHaveLength(50);
    expect(Object.keys(final?.record.status ?? {})).toHaveLength(51);
    const entries = await store.claimOutbox(500, Date.now(), Date.now() + 30_000);
    expect(entries.map((e) => e.change.version)).toEqual(
      Array.from({ length: 101 }, (_, i) => i + 1),
    );
    await store.close();
  });

  it('answers 100 parallel PUTs on one record through the HTTP API with 200, none refused', async () => {
    const store = await PostgresDelegationStore.open({ pool, schema, prefix: 'api_hot_' });
    const bus = new InProcessDelegationBus();
    const key = 'admin-key-0123456789abcdef';
    const api = await createDelegationsApi({
      store,
      bus,
      keys: new ApiKeys([{ key, admin: true }]),
      publishBeforeAnswerMs: 0,
    });
    await store.create(makeRecord('hot-api', { status: {} }));
    const put = (url: string, body: unknown) =>
      api.app.inject({
        method: 'PUT',
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 2 === 0
          ? put('/delegations/hot-api', { workflow_level: i % 100, [`sub_task_data.k${i}`]: i })
          : put(`/delegations/hot-api/status/s${i}`, {
              state: 'in_progress',
              time: 1717390000 + i,
            }),
      ),
    );
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c !== 200)).toEqual([]);
    const final = await store.getVersioned('hot-api');
    expect(final?.version).toBe(101);
    expect(Object.keys(final?.record.status ?? {})).toHaveLength(50);
    await api.close();
    await bus.close();
    await store.close();
  });

  it('refuses tables from an older taskline with a clear error', async () => {
    await pool.query(
      `CREATE TABLE "${schema}"."old_delegations" (delegation_id TEXT PRIMARY KEY, version INTEGER NOT NULL, task_id TEXT NOT NULL, sub_task_id TEXT NOT NULL, workflow_level INTEGER NOT NULL, delegation_type TEXT NOT NULL, sender_subject_id TEXT NOT NULL, target_subject_id TEXT NOT NULL, status JSONB NOT NULL, sub_task_data JSONB NOT NULL, open_deadline TEXT)`,
    );
    const error = await PostgresDelegationStore.open({ pool, schema, prefix: 'old_' }).catch(
      (e: unknown) => e,
    );
    expect(isTasklineError(error, 'invalid_state')).toBe(true);
    expect(String(error)).toMatch(/older taskline/);
  });
});
