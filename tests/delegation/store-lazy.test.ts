import { describe, expect, it } from 'vitest';
import { spawnScript, srcModule } from './store-suite.js';

const MODULES = [
  'delegation/index.ts',
  'service/stores/sqlite.ts',
  'service/stores/postgres.ts',
  'service/bus/nats.ts',
  'service/bus/in-process.ts',
  'service/bus/sender.ts',
  'service/api/server.ts',
  'service/worker.ts',
  'service/select.ts',
  'service/expiry.ts',
  'service/constraints.ts',
  'service/index.ts',
];

describe('delegation modules load their heavy drivers lazily', () => {
  it('importing them loads no database, HTTP or NATS driver; opening a SQLite store loads only better-sqlite3', {
    timeout: 60_000,
  }, async () => {
    // A fresh process, so nothing imported by other tests can hide an eager import.
    const child = spawnScript(`
      import { createRequire } from 'node:module';
      const cache = createRequire(import.meta.url).cache;
      const names = ['better-sqlite3', 'pg', 'fastify', '@fastify/websocket', '@nats-io/transport-node', '@nats-io/jetstream'];
      const loaded = () => names.filter((n) => Object.keys(cache).some((f) => f.includes('/node_modules/' + n + '/')));
      for (const m of ${JSON.stringify(MODULES.map(srcModule))}) await import(m);
      console.log('after import: ' + JSON.stringify(loaded()));
      const { SqliteDelegationStore } = await import(${JSON.stringify(srcModule('service/stores/sqlite.ts'))});
      const store = await SqliteDelegationStore.open({ path: ':memory:' });
      await store.close();
      console.log('after open: ' + JSON.stringify(loaded()));
    `);
    expect(await child.waitForLine(/^after import/)).toBe('after import: []');
    expect(await child.waitForLine(/^after open/)).toBe('after open: ["better-sqlite3"]');
    await child.exited;
  });
});
