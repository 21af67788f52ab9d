import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DiskBackend } from '../../src/deep-agent/tools/files/backends/disk.js';
import { describeBackendSuite, errorCode } from './backend-suite.js';

const base = mkdtempSync(join(tmpdir(), 'taskline-disk-'));
let seq = 0;
const freshRoot = () => join(base, `root-${++seq}`);

afterAll(() => rmSync(base, { recursive: true, force: true }));

describeBackendSuite('disk', (caps) => new DiskBackend({ root: freshRoot(), ...caps }));

describe('DiskBackend', () => {
  it('writes real files under its root and reads files others put there', async () => {
    const root = freshRoot();
    const disk = new DiskBackend({ root });
    await disk.write('/notes/a.md', 'hello');
    expect(readFileSync(join(root, 'notes', 'a.md'), 'utf8')).toBe('hello');
    writeFileSync(join(root, 'notes', 'b.md'), 'from outside the tools');
    expect(await disk.read('/notes/b.md')).toBe('from outside the tools');
  });

  it('refuses files that are not UTF-8 text, and files over the cap', async () => {
    const root = freshRoot();
    const disk = new DiskBackend({ root, maxFileBytes: 16 });
    writeFileSync(join(root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    writeFileSync(join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    writeFileSync(join(root, 'big.txt'), 'x'.repeat(17));
    expect(await errorCode(disk.read('/image.png'))).toBe('binary');
    expect(await errorCode(disk.read('/latin1.txt'))).toBe('binary');
    expect(await errorCode(disk.read('/big.txt'))).toBe('too_large');
    expect(await disk.grep('x')).toEqual([]);
  });

  it('refuses an over-cap write before encoding it (no buffer of the refused content)', async () => {
    const disk = new DiskBackend({ root: freshRoot(), maxFileBytes: 1024, maxTotalBytes: 1500 });
    const huge = 'é'.repeat(600_000); // 1.2 MB of UTF-8
    const tooMuch = 'x'.repeat(3000);
    await disk.write('/first.txt', 'y'.repeat(1000));
    const encode = vi.spyOn(Buffer, 'from');
    try {
      expect(await errorCode(disk.write('/huge.txt', huge))).toBe('too_large');
      expect(await errorCode(disk.write('/second.txt', tooMuch.slice(0, 1024)))).toBe('too_large');
      expect(await errorCode(disk.write('/third.txt', tooMuch))).toBe('too_large');
      const encoded = encode.mock.calls.filter(
        (c) => typeof c[0] === 'string' && c[0].length >= 1024,
      );
      expect(encoded).toEqual([]);
    } finally {
      encode.mockRestore();
    }
    expect(await disk.ls('/')).toEqual([expect.objectContaining({ path: '/first.txt' })]);
  });

  it('counts files already under the root toward the total cap', async () => {
    const root = freshRoot();
    new DiskBackend({ root });
    writeFileSync(join(root, 'existing.txt'), 'x'.repeat(15));
    const disk = new DiskBackend({ root, maxTotalBytes: 20 });
    expect(await errorCode(disk.write('/new.txt', '123456'))).toBe('too_large');
    await disk.write('/new.txt', '12345');
  });

  it('walks in exact path order, however names compare with "/"', async () => {
    const root = freshRoot();
    const disk = new DiskBackend({ root });
    const paths = ['/a', '/a-b', '/a.txt', '/a0', '/b', '/ab/x', '/a!'].map((p) =>
      p === '/a' ? '/a/inner.txt' : p,
    );
    paths.push('/a/b/c.txt', '/a/b-c.txt', '/a/b.txt', '/Z.txt', '/é.txt');
    for (const p of paths) await disk.write(p, `hit ${p}\n`);
    const sorted = [...paths].sort();
    expect((await disk.glob('**/*')).map((f) => f.path)).toEqual(sorted);
    expect((await disk.grep('hit')).map((m) => m.path)).toEqual(sorted);
    expect((await disk.grep('hit', { maxCount: 3 })).map((m) => m.path)).toEqual(
      sorted.slice(0, 3),
    );
  });

  it('walks a tree deeper than the descriptors it holds, siblings included', async () => {
    const root = freshRoot();
    const disk = new DiskBackend({ root });
    const expected: string[] = [];
    let dir = root;
    let virtual = '';
    for (let level = 0; level < 80; level++) {
      writeFileSync(join(dir, 'a.txt'), `level ${level}\n`);
      writeFileSync(join(dir, 'z.txt'), `level ${level} after\n`);
      expected.push(`${virtual}/a.txt`, `${virtual}/z.txt`);
      dir = join(dir, 'd');
      virtual += '/d';
      mkdirSync(dir);
    }
    expected.sort();
    expect((await disk.glob('**/*.txt')).map((f) => f.path)).toEqual(expected);
    const hits = await disk.grep('level');
    expect(hits.map((m) => m.path)).toEqual(expected);
    expect((await disk.grep('level 79 after')).map((m) => m.path)).toEqual([
      `${'/d'.repeat(79)}/z.txt`,
    ]);
  });

  it('creates its root when missing', async () => {
    const root = join(freshRoot(), 'nested', 'deeper');
    const disk = new DiskBackend({ root });
    expect(await disk.ls('/')).toEqual([]);
  });
});
