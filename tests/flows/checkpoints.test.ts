import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CheckpointConflictError,
  type CheckpointStore,
  type FlowState,
  MemoryCheckpointStore,
  openCheckpointStore,
  PostgresCheckpointStore,
  SqliteCheckpointStore,
} from '../../src/flows/checkpoints/index.js';
import { serviceMissing } from '../services.js';
import { PG_URL, uniqueTable } from './pg.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-checkpoints-'));
const pgTable = uniqueTable('taskline_cp_test');
const opened: CheckpointStore[] = [];
afterAll(async () => {
  const pg = opened.find((s): s is PostgresCheckpointStore => s instanceof PostgresCheckpointStore);
  await pg?.drop();
  for (const s of opened) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

function state(position: string, answers: Record<string, unknown> = {}): FlowState {
  return {
    flow: 'survey',
    callId: 'c1',
    status: 'running',
    position,
    entries: Object.fromEntries(Object.entries(answers).map(([k, value]) => [k, { value }])),
    path: Object.keys(answers),
    visits: {},
    records: [],
    backSteps: 0,
    resumes: 0,
    owner: 'test',
    startedAt: 0,
  };
}

let n = 0;
const key = () => ({ flow: 'survey', callId: `call-${++n}` });

function describeStore(
  name: string,
  open: () => Promise<[CheckpointStore, CheckpointStore]>,
  skip = false,
) {
  describe(`${name} checkpoint store`, { skip }, () => {
    it('round-trips position, typed answers and counters with versions 1, 2, ...', async () => {
      const [store] = await open();
      const k = key();
      expect(await store.load(k)).toBeUndefined();
      expect(await store.save(k, state('score', { consent: true }), 0)).toBe(1);
      const s2 = { ...state('reason', { consent: true, score: 3 }), visits: { score: 2 } };
      expect(await store.save(k, s2, 1)).toBe(2);
      const loaded = await store.load(k);
      expect(loaded).toMatchObject({ key: k, version: 2, state: s2 });
      expect(loaded?.state.entries.score).toEqual({ value: 3 });
      await store.delete(k);
      expect(await store.load(k)).toBeUndefined();
    });

    it('rejects a write on a stale version with a conflict naming both versions', async () => {
      const [store] = await open();
      const k = key();
      await store.save(k, state('a'), 0);
      await store.save(k, state('b'), 1);
      const err = await store.save(k, state('c'), 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CheckpointConflictError);
      expect(err).toMatchObject({ code: 'conflict', expectedVersion: 1, actualVersion: 2 });
      await expect(store.save(k, state('c'), 0)).rejects.toBeInstanceOf(CheckpointConflictError);
      expect((await store.load(k))?.state.position).toBe('b');
    });

    it('lets exactly one of two racing writers (separate connections) advance a call', async () => {
      const [a, b] = await open();
      const k = key();
      await a.save(k, state('start'), 0);
      for (let round = 1; round <= 5; round++) {
        const results = await Promise.allSettled([
          a.save(k, state(`a${round}`), round),
          b.save(k, state(`b${round}`), round),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(CheckpointConflictError);
      }
      expect((await b.load(k))?.version).toBe(6);
      const fresh = key();
      const first = await Promise.allSettled([
        a.save(fresh, state('x'), 0),
        b.save(fresh, state('y'), 0),
      ]);
      expect(first.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((await a.load(fresh))?.version).toBe(1);
    });

    it('checks keys and versions before touching the database', async () => {
      const [store] = await open();
      await expect(store.save({ flow: '', callId: 'x' }, state('a'), 0)).rejects.toThrow(
        /Checkpoint flow must be a non-empty string/,
      );
      await expect(store.save(key(), state('a'), -1)).rejects.toThrow(/expectedVersion/);
    });
  });
}

describeStore('memory', async () => {
  const s = new MemoryCheckpointStore();
  return [s, s];
});

describeStore('sqlite', async () => {
  const path = join(dir, 'race.db');
  const a = await SqliteCheckpointStore.open({ path });
  const b = await SqliteCheckpointStore.open({ path });
  opened.push(a, b);
  return [a, b];
});

describeStore(
  'postgres',
  async () => {
    const a = await PostgresCheckpointStore.connect({ connectionString: PG_URL, table: pgTable });
    const b = await PostgresCheckpointStore.connect({ connectionString: PG_URL, table: pgTable });
    opened.push(a, b);
    return [a, b];
  },
  (await serviceMissing('postgres')) !== undefined,
);

describe('openCheckpointStore', () => {
  it('opens SQLite at a configured file path (WAL) by default, and memory on request', async () => {
    const path = join(dir, 'nested', 'flows.db');
    const store = await openCheckpointStore({ kind: 'sqlite', path });
    opened.push(store);
    expect(store.kind).toBe('sqlite');
    await store.save({ flow: 'f', callId: 'c' }, state('a'), 0);
    const again = await SqliteCheckpointStore.open({ path });
    opened.push(again);
    expect((await again.load({ flow: 'f', callId: 'c' }))?.version).toBe(1);
    expect((await openCheckpointStore({ kind: 'memory' })).kind).toBe('memory');
  });

  it('rejects table names that are not plain identifiers', async () => {
    await expect(
      SqliteCheckpointStore.open({ path: ':memory:', table: 'x; drop' }),
    ).rejects.toThrow(/not allowed/);
    await expect(
      PostgresCheckpointStore.connect({ connectionString: PG_URL, table: 'a.b.c' }),
    ).rejects.toThrow(/not allowed/);
  });
});
