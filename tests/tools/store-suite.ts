import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import type { FileBackend } from '../../src/deep-agent/tools/files/backend.js';
import { FileError } from '../../src/deep-agent/tools/files/backend.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';

/** What a store suite needs to open a store on shared storage for any namespace. */
export interface StoreFactoryOptions {
  tenant: string;
  user: string;
  maxFileBytes?: number;
  maxTotalBytes?: number;
  clock?: Clock;
}

/** Opens a store over the storage a test file set up (same database/table every call). */
export type StoreFactory = (options: StoreFactoryOptions) => Promise<FileBackend>;

let tenantSeq = 0;

/** A tenant name no other test in this run uses, so tests never see each other's files. */
export function freshTenant(): string {
  tenantSeq += 1;
  return `tenant-${process.pid}-${tenantSeq}`;
}

/** Resolves to the FileError code a promise rejects with, or fails the test. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof FileError) return err.code;
    throw err;
  }
  throw new Error('expected a FileError, but the call succeeded');
}

/**
 * What persistent stores add to the shared FileBackend contract (SQLite and Postgres run
 * both): tenant/user isolation, caps per namespace, clock stamps, paging through large
 * namespaces, and regex grep that cannot stall on accepted patterns.
 */
export function describeStoreSuite(
  name: string,
  open: StoreFactory,
  options: { skip?: boolean } = {},
): void {
  const fresh = (extra: Partial<StoreFactoryOptions> = {}) =>
    open({ tenant: freshTenant(), user: 'u1', ...extra });

  describe(`${name} store: beyond the backend contract`, { skip: options.skip }, () => {
    it('stamps files with the configured clock', async () => {
      const clock = new VirtualClock();
      const store = await fresh({ clock });
      await store.write('/notes/plan.md', 'café');
      expect(await store.stat('/notes/plan.md')).toEqual({
        path: '/notes/plan.md',
        isDir: false,
        size: 5,
        modifiedAt: clock.now(),
      });
      await clock.advance(5_000);
      await store.write('/notes/plan.md', 'replaced');
      expect(await store.stat('/notes/plan.md')).toMatchObject({ modifiedAt: clock.now() });
    });

    it('pages through many files for grep and glob, in path order', async () => {
      const store = await fresh();
      for (let i = 0; i < 150; i++) {
        const n = String(i).padStart(3, '0');
        await store.write(`/many/${n}.md`, i % 10 === 0 ? `line\nneedle ${n}\n` : 'hay\n');
      }
      const hits = await store.grep('needle');
      expect(hits.map((h) => h.text)).toEqual(
        Array.from({ length: 15 }, (_, k) => `needle ${String(k * 10).padStart(3, '0')}`),
      );
      expect(hits.every((h) => h.line === 2)).toBe(true);
      expect((await store.grep('needle', { maxCount: 7 })).at(-1)?.text).toBe('needle 060');
      expect((await store.grep('^needle 1[0-4]0$', { regex: true })).map((h) => h.path)).toEqual([
        '/many/100.md',
        '/many/110.md',
        '/many/120.md',
        '/many/130.md',
        '/many/140.md',
      ]);
      expect(await store.glob('**/*.md')).toHaveLength(150);
    });

    it('greps accepted regexes in linear time on long lines', async () => {
      const store = await fresh();
      await store.write('/long.txt', 'a'.repeat(100_000) + '\nshort\n');
      // Both pass the shared static checks; a backtracking engine takes minutes on this line.
      expect(await store.grep('a{0,16}'.repeat(6) + 'x', { regex: true })).toEqual([]);
      expect(await store.grep('.*.*x', { regex: true })).toEqual([]);
      expect((await store.grep('^a+$', { regex: true })).map((m) => m.line)).toEqual([1]);
    });

    it('refuses a path below a file and content with NUL like every backend', async () => {
      const store = await fresh();
      await store.write('/f.md', 'x');
      expect(await codeOf(store.write('/f.md/child.md', 'y'))).toBe('invalid_path');
      expect(await codeOf(store.write('/bin.dat', 'a\u0000b'))).toBe('binary');
    });
  });

  describe(`${name} store: tenants and users`, { skip: options.skip }, () => {
    it('never shows one namespace the files of another', async () => {
      const tenantA = freshTenant();
      const tenantB = freshTenant();
      const a1 = await open({ tenant: tenantA, user: 'u1' });
      const a2 = await open({ tenant: tenantA, user: 'u2' });
      const b1 = await open({ tenant: tenantB, user: 'u1' });
      await a1.write('/memories/me.md', 'I am A/u1');
      await a2.write('/memories/me.md', 'I am A/u2');
      await a1.write('/private/only-a1.md', 'secret of A/u1');

      expect(await a1.read('/memories/me.md')).toBe('I am A/u1');
      expect(await a2.read('/memories/me.md')).toBe('I am A/u2');
      expect(await codeOf(b1.read('/memories/me.md'))).toBe('not_found');
      expect(await codeOf(a2.read('/private/only-a1.md'))).toBe('not_found');
      expect(await codeOf(a2.ls('/private'))).toBe('not_found');
      expect(await a2.stat('/private')).toBeUndefined();
      expect(await b1.ls('/')).toEqual([]);
      expect((await a2.glob('**')).map((f) => f.path)).toEqual(['/memories/me.md']);
      expect(await codeOf(a2.glob('*', '/private'))).toBe('not_found');
      expect(await a2.grep('secret')).toEqual([]);
      expect(await codeOf(a2.grep('secret', { path: '/private' }))).toBe('not_found');
      expect(await b1.grep('I am')).toEqual([]);
      expect(await codeOf(b1.delete('/memories/me.md'))).toBe('not_found');
      await a2.delete('/memories/me.md');
      expect(await a1.read('/memories/me.md')).toBe('I am A/u1');
    });

    it('keeps separate namespaces whose names concatenate alike', async () => {
      const t = freshTenant();
      const x = await open({ tenant: `${t}:a`, user: 'b' });
      const y = await open({ tenant: t, user: 'a:b' });
      await x.write('/f.md', 'x');
      expect(await codeOf(y.read('/f.md'))).toBe('not_found');
    });

    it('applies the total cap per namespace', async () => {
      const t = freshTenant();
      const u1 = await open({ tenant: t, user: 'u1', maxTotalBytes: 10 });
      const u2 = await open({ tenant: t, user: 'u2', maxTotalBytes: 10 });
      await u1.write('/f.md', 'x'.repeat(10));
      await u2.write('/f.md', 'y'.repeat(10));
      expect(await codeOf(u1.write('/g.md', 'x'))).toBe('too_large');
    });
  });
}
