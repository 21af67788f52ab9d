import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskBackend } from '../../src/tools/files/backends/disk.js';
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

  it('counts files already under the root toward the total cap', async () => {
    const root = freshRoot();
    new DiskBackend({ root });
    writeFileSync(join(root, 'existing.txt'), 'x'.repeat(15));
    const disk = new DiskBackend({ root, maxTotalBytes: 20 });
    expect(await errorCode(disk.write('/new.txt', '123456'))).toBe('too_large');
    await disk.write('/new.txt', '12345');
  });

  it('creates its root when missing', async () => {
    const root = join(freshRoot(), 'nested', 'deeper');
    const disk = new DiskBackend({ root });
    expect(await disk.ls('/')).toEqual([]);
  });
});
