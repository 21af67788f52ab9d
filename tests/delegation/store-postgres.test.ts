import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { PostgresDelegationStore } from '../../src/delegation/stores/postgres.js';
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
});
