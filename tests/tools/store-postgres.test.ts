import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import {
  PostgresFileStore,
  pgText,
} from '../../src/deep-agent/tools/files/backends/store-postgres.js';
import { serviceMissing } from '../services.js';
import { describeBackendSuite } from './backend-suite.js';
import { describeStoreSuite, freshTenant } from './store-suite.js';

const skip = (await serviceMissing('postgres')) !== undefined;
const url = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const table = `taskline_files_test_${process.pid}_${randomBytes(4).toString('hex')}`;
const pool = new pg.Pool({ connectionString: url, max: 4 });
const otherPool = new pg.Pool({ connectionString: url, max: 4 });
const extraTables: string[] = [];

beforeAll(async () => {
  if (skip) return;
  await PostgresFileStore.create({ pool, tenant: 'setup', user: 'setup', table });
});

afterAll(async () => {
  if (skip) return;
  for (const t of [table, ...extraTables]) await pool.query(`DROP TABLE IF EXISTS "${t}"`);
  await Promise.all([pool.end(), otherPool.end()]);
});

describeBackendSuite(
  'postgres store',
  (caps) => new PostgresFileStore({ pool, table, tenant: freshTenant(), user: 'u', ...caps }),
  { skip },
);

describeStoreSuite(
  'postgres',
  async (options) => new PostgresFileStore({ pool, table, ...options }),
  { skip },
);

describe('postgres store: namespaces', { skip }, () => {
  it('keeps users apart whose ids differ only in lone surrogates (or U+FFFD)', async () => {
    const tenant = freshTenant();
    const users = ['x\uD800', 'x\uDBFF', 'x\uDC00', 'x\uFFFD', 'x', 'x\uD800\uDC00'];
    const stores = users.map((user) => new PostgresFileStore({ pool, table, tenant, user }));
    for (const [i, store] of stores.entries()) await store.write('/me.md', `user ${i}`);
    for (const [i, store] of stores.entries()) {
      expect(await store.read('/me.md')).toBe(`user ${i}`);
      expect((await store.ls('/')).map((f) => f.path)).toEqual(['/me.md']);
    }
  });

  it('stores the ids people use unchanged (data written before stays reachable)', () => {
    for (const id of ['acme', 'CORP\\jane', 'josé', '👩‍💻 dev', 'a\\uFFFD']) {
      expect(pgText(id)).toBe(id);
    }
    expect(pgText('x\uD800')).toBe('x\uFFFDD800');
    expect(pgText('x\uFFFD')).toBe('x\uFFFDFFFD');
  });
});

describe('postgres store: table and connections', { skip }, () => {
  it('creates its table with init(), idempotently and from several stores at once', async () => {
    const t = `${table}_init`;
    extraTables.push(t);
    const stores = [pool, otherPool, pool].map(
      (p) => new PostgresFileStore({ pool: p, tenant: 't', user: 'u', table: t }),
    );
    await Promise.all(stores.map((s) => s.init()));
    await stores[0]!.init();
    await stores[1]!.write('/x.md', 'made');
    expect(await stores[2]!.read('/x.md')).toBe('made');
  });

  it('tells the caller to run init() when the table does not exist', async () => {
    const store = new PostgresFileStore({
      pool,
      tenant: 't',
      user: 'u',
      table: `${table}_never_created`,
    });
    const err = await store.read('/x.md').catch((e: unknown) => e);
    expect(isTasklineError(err, 'invalid_state')).toBe(true);
    expect((err as Error).message).toContain('init()');
  });

  it('refuses table names that are not plain identifiers', () => {
    for (const bad of ['x; DROP TABLE y', 'a.b.c', '"quoted"', '']) {
      let caught: unknown;
      try {
        new PostgresFileStore({ pool, tenant: 't', user: 'u', table: bad });
      } catch (err) {
        caught = err;
      }
      expect(isTasklineError(caught, 'invalid_argument')).toBe(true);
    }
  });

  it('serializes writers on two pools and holds the total cap across them', async () => {
    const tenant = freshTenant();
    const cap = 15_000; // room for 150 of the 200 attempted 100-byte files
    const open = (p: pg.Pool) =>
      new PostgresFileStore({ pool: p, table, tenant, user: 'u', maxTotalBytes: cap });
    const writer = async (store: PostgresFileStore, prefix: string) => {
      let ok = 0;
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          try {
            await store.write(`/${prefix}/${i}.txt`, 'w'.repeat(100));
            ok++;
          } catch (err) {
            expect(err).toMatchObject({ code: 'too_large' });
          }
        }),
      );
      return ok;
    };
    const [a, b] = await Promise.all([writer(open(pool), 'a'), writer(open(otherPool), 'b')]);
    expect(a + b).toBe(150);
    const files = await open(pool).glob('**');
    expect(files).toHaveLength(150);
    expect(files.reduce((n, f) => n + (f.size ?? 0), 0)).toBe(cap);
  });

  it('keeps files for the next store on the same table', async () => {
    const tenant = freshTenant();
    await new PostgresFileStore({ pool, table, tenant, user: 'u' }).write('/kept.md', 'kept');
    const later = new PostgresFileStore({ pool: otherPool, table, tenant, user: 'u' });
    expect(await later.read('/kept.md')).toBe('kept');
  });
});
