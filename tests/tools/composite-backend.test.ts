import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TasklineError } from '../../src/core/errors.js';
import { CompositeBackend } from '../../src/tools/files/backends/composite.js';
import { DiskBackend } from '../../src/tools/files/backends/disk.js';
import { MemoryBackend } from '../../src/tools/files/backends/memory.js';
import { describeBackendSuite, errorCode } from './backend-suite.js';

const base = mkdtempSync(join(tmpdir(), 'taskline-composite-'));
let seq = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

// Everything on the default backend (no route is touched by the suite but "/mnt").
describeBackendSuite(
  'composite (default only)',
  (caps) =>
    new CompositeBackend({
      default: new MemoryBackend(caps),
      routes: { '/mnt/': new MemoryBackend() },
    }),
  { fixedRootDirs: ['/mnt'] },
);

// The suite's "/notes", "/sub" and "/gone" trees live on routed backends (one of them on disk).
describeBackendSuite(
  'composite (routed)',
  (caps) =>
    new CompositeBackend({
      default: new MemoryBackend(caps),
      routes: {
        '/notes/': new MemoryBackend(caps),
        '/sub/': new DiskBackend({ root: join(base, `sub-${++seq}`), ...caps }),
        '/gone/': new MemoryBackend(caps),
      },
    }),
  { fixedRootDirs: ['/gone', '/notes', '/sub'] },
);

describe('CompositeBackend', () => {
  function setup() {
    const main = new MemoryBackend();
    const memories = new MemoryBackend();
    const archive = new MemoryBackend();
    const fs = new CompositeBackend({
      default: main,
      routes: { '/memories/': memories, '/memories/archive/': archive },
    });
    return { main, memories, archive, fs };
  }

  it('routes by the longest matching prefix; a routed backend sees paths below its route', async () => {
    const { main, memories, archive, fs } = setup();
    await fs.write('/scratch.md', 's');
    await fs.write('/memories/user.md', 'u');
    await fs.write('/memories/archive/2023.md', 'old');
    expect(await main.read('/scratch.md')).toBe('s');
    expect(await memories.read('/user.md')).toBe('u');
    expect(await archive.read('/2023.md')).toBe('old');
    expect(await errorCode(memories.read('/archive/2023.md'))).toBe('not_found');
    expect(await fs.read('/memories/archive/2023.md')).toBe('old');
    expect(await fs.stat('/memories/user.md')).toMatchObject({ path: '/memories/user.md' });
  });

  it('names the full path in errors from a routed backend', async () => {
    const { fs } = setup();
    const err = await fs.read('/memories/missing.md').catch((e: unknown) => e);
    expect((err as Error).message).toBe('/memories/missing.md does not exist');
    await fs.write('/memories/note.md', 'x');
    const nested = await fs.write('/memories/note.md/inner.md', 'y').catch((e: unknown) => e);
    expect((nested as Error).message).toBe(
      '/memories/note.md is a file, so /memories/note.md/inner.md cannot be created inside it',
    );
  });

  it('serves the example of docs/deep-agent.md: /docs/ routed to a DiskBackend rooted at ./knowledge', async () => {
    const knowledge = join(base, `knowledge-${++seq}`);
    mkdirSync(join(knowledge, 'policies'), { recursive: true });
    writeFileSync(join(knowledge, 'refunds.md'), 'Refunds take 30 days.\n');
    writeFileSync(join(knowledge, 'policies', 'returns.md'), 'Returns: 14 days.\n');
    const fs = new CompositeBackend({
      default: new MemoryBackend(),
      routes: { '/docs/': new DiskBackend({ root: knowledge }) },
    });
    expect(await fs.read('/docs/refunds.md')).toBe('Refunds take 30 days.\n');
    expect((await fs.ls('/docs')).map((e) => e.path)).toEqual([
      '/docs/policies',
      '/docs/refunds.md',
    ]);
    expect((await fs.glob('**/*.md')).map((f) => f.path)).toEqual([
      '/docs/policies/returns.md',
      '/docs/refunds.md',
    ]);
    expect((await fs.glob('docs/policies/*.md')).map((f) => f.path)).toEqual([
      '/docs/policies/returns.md',
    ]);
    expect((await fs.grep('days')).map((h) => h.path)).toEqual([
      '/docs/policies/returns.md',
      '/docs/refunds.md',
    ]);
    expect((await fs.grep('days', { glob: '/docs/policies/*.md' })).map((h) => h.path)).toEqual([
      '/docs/policies/returns.md',
    ]);
    await fs.write('/docs/new.md', 'hello');
    expect(readFileSync(join(knowledge, 'new.md'), 'utf8')).toBe('hello');
    expect(existsSync(join(knowledge, 'docs'))).toBe(false);
  });

  it('lists mount points in their parent even when empty', async () => {
    const { fs } = setup();
    expect(await fs.ls('/')).toEqual([{ path: '/memories', isDir: true }]);
    expect(await fs.ls('/memories')).toEqual([{ path: '/memories/archive', isDir: true }]);
    expect(await fs.ls('/memories/archive')).toEqual([]);
    expect(await fs.stat('/memories')).toEqual({ path: '/memories', isDir: true });
    expect(await errorCode(fs.read('/memories'))).toBe('is_directory');
    expect(await errorCode(fs.write('/memories/archive', 'x'))).toBe('is_directory');
  });

  it('hides files a backend holds under another route', async () => {
    const { main, fs } = setup();
    await main.write('/memories/shadowed.md', 'hidden');
    await fs.write('/memories/real.md', 'shown');
    expect((await fs.ls('/memories')).map((e) => e.path)).toEqual([
      '/memories/archive',
      '/memories/real.md',
    ]);
    expect((await fs.glob('**/*.md')).map((f) => f.path)).toEqual(['/memories/real.md']);
    expect((await fs.grep('hidden')).length).toBe(0);
  });

  it('merges glob and grep across routes in path order', async () => {
    const { fs } = setup();
    await fs.write('/z.md', 'needle z');
    await fs.write('/a.md', 'needle a');
    await fs.write('/memories/m.md', 'needle m\nneedle m2');
    await fs.write('/memories/archive/old.md', 'needle old');
    expect((await fs.glob('**/*.md')).map((f) => f.path)).toEqual([
      '/a.md',
      '/memories/archive/old.md',
      '/memories/m.md',
      '/z.md',
    ]);
    expect((await fs.glob('*.md', '/memories')).map((f) => f.path)).toEqual(['/memories/m.md']);
    expect((await fs.glob('memories/**/*.md')).map((f) => f.path)).toEqual([
      '/memories/archive/old.md',
      '/memories/m.md',
    ]);
    const hits = await fs.grep('needle');
    expect(hits.map((h) => `${h.path}:${h.line}`)).toEqual([
      '/a.md:1',
      '/memories/archive/old.md:1',
      '/memories/m.md:1',
      '/memories/m.md:2',
      '/z.md:1',
    ]);
    expect((await fs.grep('needle', { maxCount: 2 })).map((h) => h.path)).toEqual([
      '/a.md',
      '/memories/archive/old.md',
    ]);
    expect((await fs.grep('needle', { glob: 'memories/*.md' })).map((h) => h.line)).toEqual([1, 2]);
    expect((await fs.grep('needle', { path: '/memories/archive' })).length).toBe(1);
  });

  it('refuses "/" and duplicate routes', () => {
    expect(
      () =>
        new CompositeBackend({
          default: new MemoryBackend(),
          routes: { '/': new MemoryBackend() },
        }),
    ).toThrow(TasklineError);
    expect(
      () =>
        new CompositeBackend({
          default: new MemoryBackend(),
          routes: { '/a/': new MemoryBackend(), '/a': new MemoryBackend() },
        }),
    ).toThrow(/twice/);
  });
});
