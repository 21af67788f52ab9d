import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { SqliteFileStore } from '../../src/deep-agent/tools/files/backends/store-sqlite.js';
import { describeBackendSuite } from './backend-suite.js';
import { describeStoreSuite, freshTenant } from './store-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-store-sqlite-'));
const shared = join(dir, 'shared.db');
const opened: SqliteFileStore[] = [];

function openStore(options: ConstructorParameters<typeof SqliteFileStore>[0]): SqliteFileStore {
  const store = new SqliteFileStore(options);
  opened.push(store);
  return store;
}

afterAll(() => {
  for (const s of opened) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describeBackendSuite('sqlite store', (caps) =>
  openStore({ path: shared, tenant: freshTenant(), user: 'u', ...caps }),
);

describeStoreSuite('sqlite', async (options) => openStore({ path: shared, ...options }));

interface ChildWriter {
  /** Resolves once the child has opened the store and waits for `go()`. */
  ready: Promise<void>;
  /** Lets the child start writing. */
  go(): void;
  /** Resolves to how many files the child stored. */
  done: Promise<number>;
}

/** Another process writing `count` 100-byte files through its own SqliteFileStore connection. */
function childWriter(file: string, tenant: string, count: number, cap: number): ChildWriter {
  const storeModule = resolve('src/deep-agent/tools/files/backends/store-sqlite.ts');
  const script = `
    import { once } from 'node:events';
    import { SqliteFileStore } from ${JSON.stringify(storeModule)};
    const store = new SqliteFileStore({ path: ${JSON.stringify(file)},
      tenant: ${JSON.stringify(tenant)}, user: 'u', maxTotalBytes: ${cap} });
    process.stdout.write('ready\\n');
    await once(process.stdin, 'data');
    let ok = 0;
    for (let i = 0; i < ${count}; i++) {
      try { await store.write('/child/' + i + '.txt', 'c'.repeat(100)); ok++; }
      catch (err) { if (err.code !== 'too_large') throw err; }
    }
    store.close();
    process.stdout.write('done ' + ok + '\\n');
    process.exit(0);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('ready\n')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const done = new Promise<number>((resolveDone, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /done (\d+)/.exec(out);
      if (code === 0 && m) resolveDone(Number(m[1]));
      else reject(new Error(`child writer exited with ${code}: ${err}`));
    });
  });
  // A child that dies before it is ready fails the test instead of leaving it waiting.
  return {
    ready: Promise.race([ready, done.then(() => {})]),
    go: () => child.stdin.write('go\n'),
    done,
  };
}

describe('sqlite store: the database file', () => {
  it('uses WAL mode on a file it opens', () => {
    const file = join(dir, 'wal.db');
    openStore({ path: file, tenant: 't', user: 'u' });
    const probe = new Database(file, { readonly: true });
    expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
    probe.close();
  });

  it('keeps files across closing and reopening the database', async () => {
    const file = join(dir, 'persist.db');
    const first = new SqliteFileStore({ path: file, tenant: 't', user: 'u' });
    await first.write('/memories/likes.md', 'likes tea');
    first.close();
    const again = openStore({ path: file, tenant: 't', user: 'u' });
    expect(await again.read('/memories/likes.md')).toBe('likes tea');
    expect((await again.ls('/memories')).map((f) => f.path)).toEqual(['/memories/likes.md']);
  });

  it('works on a handle the caller owns and leaves it open on close', async () => {
    const db = new Database(':memory:');
    const store = new SqliteFileStore({ db, tenant: 't', user: 'u' });
    await store.write('/x.md', 'x');
    store.close();
    expect(db.open).toBe(true);
    expect(db.prepare('SELECT count(*) AS n FROM taskline_files').get()).toEqual({ n: 1 });
    db.close();
  });

  it('rejects options it cannot use with invalid_argument', () => {
    const bad: unknown[] = [
      { tenant: 't', user: 'u' },
      { path: ':memory:', tenant: '', user: 'u' },
      { path: ':memory:', tenant: 't', user: 'u', maxFileBytes: 0 },
    ];
    for (const options of bad) {
      let caught: unknown;
      try {
        new SqliteFileStore(options as ConstructorParameters<typeof SqliteFileStore>[0]);
      } catch (err) {
        caught = err;
      }
      expect(isTasklineError(caught, 'invalid_argument')).toBe(true);
    }
  });

  it('serializes writers in two processes and holds the total cap across them', async () => {
    const file = join(dir, 'concurrent.db');
    const tenant = freshTenant();
    const count = 1000;
    const cap = 150_000; // room for 1500 of the 2000 attempted 100-byte files
    const store = openStore({ path: file, tenant, user: 'u', maxTotalBytes: cap });
    const child = childWriter(file, tenant, count, cap);
    await child.ready;
    child.go();
    let mine = 0;
    for (let i = 0; i < count; i++) {
      try {
        await store.write(`/parent/${i}.txt`, 'p'.repeat(100));
        mine++;
      } catch (err) {
        expect(err).toMatchObject({ code: 'too_large' });
      }
    }
    const theirs = await child.done;
    expect(mine + theirs).toBe(1500);
    const files = await store.glob('**');
    expect(files).toHaveLength(1500);
    expect(files.reduce((n, f) => n + (f.size ?? 0), 0)).toBe(cap);
  });
});
