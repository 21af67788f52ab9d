import { describe, expect, it } from 'vitest';
import { type FileBackend, FileError } from '../../src/deep-agent/tools/files/backend.js';

/** Size caps a suite case may ask the factory for. */
export interface BackendCaps {
  maxFileBytes?: number;
  maxTotalBytes?: number;
}

/** Builds a fresh, empty backend for one test (honouring caps when given). */
export type BackendFactory = (caps?: BackendCaps) => FileBackend | Promise<FileBackend>;

/** Options for {@link describeBackendSuite}. */
export interface BackendSuiteOptions {
  /** Directories an empty backend always lists at "/" (a composite's mount points). */
  fixedRootDirs?: string[];
  /** Skip the suite (its service is missing: see tests/services.ts). */
  skip?: boolean;
}

/** Resolves to the FileError code a promise rejects with; fails the test otherwise. */
export async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof FileError) return err.code;
    throw err;
  }
  throw new Error('expected a FileError, but the call succeeded');
}

/**
 * The contract every FileBackend keeps, as one vitest suite. Run it against each backend:
 * `describeBackendSuite('memory', () => new MemoryBackend())`. Self-contained (needs only
 * vitest and the backend interface), so other backends' test files can import it.
 */
export function describeBackendSuite(
  name: string,
  makeBackend: BackendFactory,
  options: BackendSuiteOptions = {},
): void {
  const fixed = (options.fixedRootDirs ?? []).slice().sort();
  const make = async (caps?: BackendCaps) => makeBackend(caps);

  describe(`FileBackend contract: ${name}`, { skip: options.skip }, () => {
    describe('reading and writing', () => {
      it('starts empty with a root directory', async () => {
        const b = await make();
        expect((await b.ls('/')).map((e) => e.path)).toEqual(fixed);
        expect(await b.stat('/')).toMatchObject({ path: '/', isDir: true });
        expect(await b.stat('/nothing.txt')).toBeUndefined();
        expect(typeof b.kind).toBe('string');
      });

      it('round-trips text exactly, including unicode and CRLF', async () => {
        const b = await make();
        const text = 'héllo wörld ✓ 🎉\r\nsecond line\n\n  indented\ttab\n';
        await b.write('/notes.md', text);
        expect(await b.read('/notes.md')).toBe(text);
      });

      it('stores an empty file', async () => {
        const b = await make();
        await b.write('/empty.txt', '');
        expect(await b.read('/empty.txt')).toBe('');
        expect(await b.stat('/empty.txt')).toMatchObject({ isDir: false, size: 0 });
      });

      it('replaces a file and reports its size in UTF-8 bytes', async () => {
        const b = await make();
        await b.write('/a.txt', 'first version');
        await b.write('/a.txt', 'é!');
        expect(await b.read('/a.txt')).toBe('é!');
        const info = await b.stat('/a.txt');
        expect(info).toMatchObject({ path: '/a.txt', isDir: false, size: 3 });
        expect(typeof info?.modifiedAt).toBe('number');
      });

      it('says not_found for a missing file, and for a path under a file', async () => {
        const b = await make();
        expect(await errorCode(b.read('/missing.txt'))).toBe('not_found');
        await b.write('/f.txt', 'x');
        expect(await errorCode(b.read('/f.txt/inner'))).toBe('not_found');
      });

      it('refuses to create a file inside a file', async () => {
        const b = await make();
        await b.write('/f.txt', 'x');
        expect(await errorCode(b.write('/f.txt/inner.txt', 'y'))).toBe('invalid_path');
        expect(await b.read('/f.txt')).toBe('x');
      });

      it('refuses content with NUL bytes as binary', async () => {
        const b = await make();
        expect(await errorCode(b.write('/bin.dat', 'a\u0000b'))).toBe('binary');
        expect(await b.stat('/bin.dat')).toBeUndefined();
      });
    });

    describe('directories', () => {
      it('creates parents implicitly and lists direct children sorted', async () => {
        const b = await make();
        await b.write('/dir/sub/deep.txt', 'd');
        await b.write('/dir/b.txt', 'bb');
        await b.write('/dir/a.txt', 'a');
        await b.write('/top.txt', 't');
        const root = await b.ls('/');
        expect(root.map((e) => e.path)).toEqual(['/dir', ...fixed, '/top.txt'].sort());
        expect(root.find((e) => e.path === '/dir')?.isDir).toBe(true);
        const dir = await b.ls('/dir');
        expect(dir.map((e) => [e.path, e.isDir])).toEqual([
          ['/dir/a.txt', false],
          ['/dir/b.txt', false],
          ['/dir/sub', true],
        ]);
        expect(dir[1]?.size).toBe(2);
        expect(await b.stat('/dir/sub')).toMatchObject({ path: '/dir/sub', isDir: true });
      });

      it('lists a file as itself and a missing directory as not_found', async () => {
        const b = await make();
        await b.write('/solo.txt', 'abc');
        expect(await b.ls('/solo.txt')).toEqual([
          expect.objectContaining({ path: '/solo.txt', isDir: false, size: 3 }),
        ]);
        expect(await errorCode(b.ls('/nope'))).toBe('not_found');
      });

      it('refuses to read, write or delete a directory', async () => {
        const b = await make();
        await b.write('/d/x.txt', 'x');
        expect(await errorCode(b.read('/d'))).toBe('is_directory');
        expect(await errorCode(b.write('/d', 'y'))).toBe('is_directory');
        expect(await errorCode(b.delete('/d'))).toBe('is_directory');
        expect(await errorCode(b.read('/'))).toBe('is_directory');
        expect(await b.read('/d/x.txt')).toBe('x');
      });

      it('deletes a file, and a directory left empty disappears', async () => {
        const b = await make();
        await b.write('/gone/deep/x.txt', 'x');
        await b.write('/gone/keep.txt', 'k');
        await b.delete('/gone/deep/x.txt');
        expect(await errorCode(b.read('/gone/deep/x.txt'))).toBe('not_found');
        expect(await b.stat('/gone/deep/x.txt')).toBeUndefined();
        expect(await b.stat('/gone/deep')).toBeUndefined();
        expect((await b.ls('/gone')).map((e) => e.path)).toEqual(['/gone/keep.txt']);
        expect(await errorCode(b.delete('/gone/deep/x.txt'))).toBe('not_found');
      });
    });

    describe('paths', () => {
      it('normalizes relative, doubled-slash and dot paths to one file', async () => {
        const b = await make();
        await b.write('notes/./a.txt', '1');
        expect(await b.read('/notes/a.txt')).toBe('1');
        expect(await b.read('//notes//a.txt')).toBe('1');
        expect(await b.read('/notes/x/../a.txt')).toBe('1');
        expect(await b.read('/notes/a.txt/')).toBe('1');
      });

      it('rejects NUL bytes, empty and over-long paths, and .. above the root', async () => {
        const b = await make();
        expect(await errorCode(b.read('/a\u0000.txt'))).toBe('invalid_path');
        expect(await errorCode(b.write('/a\u0000.txt', 'x'))).toBe('invalid_path');
        // Two lone surrogates would be one file once stored as UTF-8: refused, never merged.
        expect(await errorCode(b.write('/a\uD800.txt', 'x'))).toBe('invalid_path');
        expect(await errorCode(b.read('/a\uDC00.txt'))).toBe('invalid_path');
        expect(await errorCode(b.read(''))).toBe('invalid_path');
        expect(await errorCode(b.read('/' + 'a'.repeat(5000)))).toBe('invalid_path');
        expect(await errorCode(b.write(`/${'s'.repeat(300)}.txt`, 'x'))).toBe('invalid_path');
        expect(await errorCode(b.read('/../etc/passwd'))).toBe('outside_root');
        expect(await errorCode(b.write('/a/../../x.txt', 'x'))).toBe('outside_root');
        expect(await errorCode(b.ls('/..'))).toBe('outside_root');
        expect((await b.ls('/')).map((e) => e.path)).toEqual(fixed);
      });
    });

    describe('glob', () => {
      async function tree(): Promise<FileBackend> {
        const b = await make();
        for (const p of [
          '/README.md',
          '/notes/a.md',
          '/notes/b.txt',
          '/notes/2024/jan.md',
          '/notes/2024/feb.md',
          '/src/x1.ts',
          '/src/x2.ts',
          '/src/xy.ts',
          '/src/lib/util.ts',
          '/.hidden.md',
        ]) {
          await b.write(p, `content of ${p}\n`);
        }
        return b;
      }
      const paths = async (b: FileBackend, pattern: string, base?: string) =>
        (await b.glob(pattern, base)).map((f) => f.path);

      it('matches * within one directory level only', async () => {
        const b = await tree();
        expect(await paths(b, '*.md')).toEqual(['/.hidden.md', '/README.md']);
      });

      it('matches ** at any depth, including none', async () => {
        const b = await tree();
        expect(await paths(b, '**/*.md')).toEqual([
          '/.hidden.md',
          '/README.md',
          '/notes/2024/feb.md',
          '/notes/2024/jan.md',
          '/notes/a.md',
        ]);
        expect(await paths(b, 'notes/**/*.md')).toEqual([
          '/notes/2024/feb.md',
          '/notes/2024/jan.md',
          '/notes/a.md',
        ]);
      });

      it('supports ?, {a,b} and character classes', async () => {
        const b = await tree();
        expect(await paths(b, 'src/x?.ts')).toEqual(['/src/x1.ts', '/src/x2.ts', '/src/xy.ts']);
        expect(await paths(b, 'src/x[0-9].ts')).toEqual(['/src/x1.ts', '/src/x2.ts']);
        expect(await paths(b, 'src/x[!0-9].ts')).toEqual(['/src/xy.ts']);
        expect(await paths(b, '{src,notes}/*.{ts,txt}')).toEqual([
          '/notes/b.txt',
          '/src/x1.ts',
          '/src/x2.ts',
          '/src/xy.ts',
        ]);
      });

      it('is relative to the base path, and absolute patterns ignore it', async () => {
        const b = await tree();
        expect(await paths(b, '*.md', '/notes')).toEqual(['/notes/a.md']);
        expect(await paths(b, '**/*.ts', '/src/lib')).toEqual(['/src/lib/util.ts']);
        expect(await paths(b, '/notes/*.txt', '/src')).toEqual(['/notes/b.txt']);
      });

      it('returns files only, and nothing when nothing matches', async () => {
        const b = await tree();
        expect(await paths(b, 'notes/*')).toEqual(['/notes/a.md', '/notes/b.txt']);
        expect(await paths(b, '**/*.pdf')).toEqual([]);
      });

      it('says not_found for a missing base and invalid_pattern for a bad pattern', async () => {
        const b = await tree();
        expect(await errorCode(b.glob('*.md', '/missing'))).toBe('not_found');
        expect(await errorCode(b.glob(''))).toBe('invalid_pattern');
        expect(await errorCode(b.glob('../*'))).toBe('invalid_pattern');
      });
    });

    describe('grep', () => {
      async function docs(): Promise<FileBackend> {
        const b = await make();
        await b.write('/a.md', 'alpha\nthe needle here\nbeta\nneedle again\n');
        await b.write('/b.txt', 'no match\nneedle in b\n');
        await b.write('/sub/c.md', 'a.b literal\naxb other\n\n');
        await b.write('/sub/deep/d.md', 'needle deep\n');
        return b;
      }

      it('finds literal text with 1-based line numbers, in path then line order', async () => {
        const b = await docs();
        expect(await b.grep('needle')).toEqual([
          { path: '/a.md', line: 2, text: 'the needle here' },
          { path: '/a.md', line: 4, text: 'needle again' },
          { path: '/b.txt', line: 2, text: 'needle in b' },
          { path: '/sub/deep/d.md', line: 1, text: 'needle deep' },
        ]);
      });

      it('is literal by default: regex characters match themselves', async () => {
        const b = await docs();
        expect(await b.grep('a.b')).toEqual([{ path: '/sub/c.md', line: 1, text: 'a.b literal' }]);
        expect((await b.grep('a.b', { regex: true })).map((m) => m.line)).toEqual([1, 2]);
      });

      it('does not report a line after a final newline', async () => {
        const b = await docs();
        const empty = await b.grep('^$', { regex: true, path: '/sub/c.md' });
        expect(empty).toEqual([{ path: '/sub/c.md', line: 3, text: '' }]);
      });

      it('limits the search by path, by glob and by maxCount', async () => {
        const b = await docs();
        expect((await b.grep('needle', { path: '/sub' })).map((m) => m.path)).toEqual([
          '/sub/deep/d.md',
        ]);
        expect((await b.grep('needle', { path: '/a.md' })).length).toBe(2);
        expect((await b.grep('needle', { glob: '*.txt' })).map((m) => m.path)).toEqual(['/b.txt']);
        expect((await b.grep('needle', { glob: '*.md' })).map((m) => m.path)).toEqual([
          '/a.md',
          '/a.md',
          '/sub/deep/d.md',
        ]);
        expect((await b.grep('needle', { glob: 'sub/**/*.md' })).map((m) => m.path)).toEqual([
          '/sub/deep/d.md',
        ]);
        expect(await b.grep('needle', { maxCount: 3 })).toHaveLength(3);
      });

      it('refuses unsupported and malformed regexes the same way', async () => {
        const b = await docs();
        expect(await errorCode(b.grep('(x)\\1', { regex: true }))).toBe('invalid_pattern');
        expect(await errorCode(b.grep('(?=a)b', { regex: true }))).toBe('invalid_pattern');
        expect(await errorCode(b.grep('a{0,30}{0,30}x', { regex: true }))).toBe('invalid_pattern');
        expect(await errorCode(b.grep('([a-z', { regex: true }))).toBe('invalid_pattern');
        expect(await errorCode(b.grep('x'.repeat(257), { regex: true }))).toBe('invalid_pattern');
        expect(await errorCode(b.grep(''))).toBe('invalid_pattern');
      });

      it('runs classic ReDoS patterns over long lines to a plain answer', async () => {
        // Each line is hostile to a backtracking engine for some pattern below: the first
        // pattern alone takes one ~89 s on line 1 (it tries 17^6 splits at every start).
        const b = await make();
        await b.write(
          '/hostile.txt',
          [
            `${'a'.repeat(1000)}x`,
            `${'a'.repeat(30_000)}!`,
            `${'a'.repeat(19)}${'b'.repeat(5000)}`,
            `c${'a'.repeat(3000)}b`,
            'end',
          ].join('\n'),
        );
        const lines = async (pattern: string) =>
          (await b.grep(pattern, { regex: true })).map((m) => m.line);
        expect(await lines('a{0,16}'.repeat(6) + 'x')).toEqual([1]);
        expect(await lines('a{0,16}'.repeat(6) + 'y')).toEqual([]);
        expect(await lines('(a+)+$')).toEqual([]);
        expect(await lines('(a+)+!$')).toEqual([2]);
        expect(await lines('(a|a)*b')).toEqual([3, 4]);
        expect(await lines('(a|aa)+c')).toEqual([]);
        expect(await lines('(.*a){20}')).toEqual([1, 2, 4]);
        expect(await lines('(x+x+)+y')).toEqual([]);
        const hit = (await b.grep('^(a|aa)+!$', { regex: true }))[0];
        expect(hit).toMatchObject({ path: '/hostile.txt', line: 2 });
        expect(hit?.text).toHaveLength(2000);
      });

      it('says not_found for a missing path and stops when aborted', async () => {
        const b = await docs();
        expect(await errorCode(b.grep('needle', { path: '/missing' }))).toBe('not_found');
        const controller = new AbortController();
        controller.abort();
        expect(await errorCode(b.grep('needle', { signal: controller.signal }))).toBe('timeout');
      });
    });

    describe('size caps', () => {
      it('refuses a file over the per-file cap', async () => {
        const b = await make({ maxFileBytes: 10 });
        await b.write('/ok.txt', '0123456789');
        expect(await errorCode(b.write('/big.txt', '0123456789A'))).toBe('too_large');
        expect(await b.stat('/big.txt')).toBeUndefined();
      });

      it('refuses a write over the total cap, counting replaced files once', async () => {
        const b = await make({ maxTotalBytes: 20 });
        await b.write('/one.txt', '0123456789');
        await b.write('/two.txt', '0123456789');
        expect(await errorCode(b.write('/three.txt', 'x'))).toBe('too_large');
        await b.write('/two.txt', '01234');
        await b.write('/three.txt', '01234');
        await b.delete('/one.txt');
        await b.write('/four.txt', '0123456789');
        expect(await b.read('/four.txt')).toBe('0123456789');
      });
    });
  });
}
