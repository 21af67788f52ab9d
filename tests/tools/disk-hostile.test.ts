import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { llm } from '@livekit/agents';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileError } from '../../src/deep-agent/tools/files/backend.js';
import {
  DiskBackend,
  type DiskBackendHooks,
} from '../../src/deep-agent/tools/files/backends/disk.js';
import { createFileTools } from '../../src/deep-agent/tools/files/tools.js';

/**
 * A world per test: `root` (the backend's root) next to `outside` (a secret the backend must
 * never read, write, list or delete) and `root-evil` (a sibling whose host path starts with
 * the root's). Symlinks inside the root point out in every way we could think of.
 */
interface World {
  base: string;
  root: string;
  outside: string;
  secret: string;
  secretPath: string;
}

let world: World;
let before: string;

function snapshot(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        out.push(`${p}/`);
        walk(p);
      } else if (e.isFile()) out.push(`${p}=${readFileSync(p, 'utf8')}`);
      else out.push(`${p} (special)`);
    }
  };
  walk(dir);
  return out.join('\n');
}

/** Everything outside the root: the secret dirs and the base directory's own entries. */
function outsideState(): string {
  const w = world;
  return [
    snapshot(w.outside),
    snapshot(`${w.root}-evil`),
    readdirSync(w.base).sort().join(','),
    statSync(w.secretPath).mtimeMs,
  ].join('\n---\n');
}

function makeWorld(): World {
  const base = mkdtempSync(join(tmpdir(), 'taskline-hostile-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  const secret = `TOP-SECRET-${randomBytes(8).toString('hex')}`;
  mkdirSync(join(outside, 'dir'), { recursive: true });
  mkdirSync(`${root}-evil`, { recursive: true });
  mkdirSync(join(root, 'good'), { recursive: true });
  const secretPath = join(outside, 'secret.txt');
  writeFileSync(secretPath, `${secret}\n`);
  writeFileSync(join(outside, 'dir', 'inner.txt'), `${secret} inner\n`);
  writeFileSync(join(outside, 'file.txt'), `${secret} swapped\n`);
  writeFileSync(join(`${root}-evil`, 'secret.txt'), `${secret} evil\n`);
  writeFileSync(join(root, 'good', 'file.txt'), 'good content\n');
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(secretPath, join(root, 'secret-link'));
  symlinkSync('../outside/secret.txt', join(root, 'rel-link'));
  symlinkSync('chain2', join(root, 'chain1'));
  symlinkSync(secretPath, join(root, 'chain2'));
  symlinkSync('../root-evil', join(root, 'evil'));
  symlinkSync('/', join(root, 'hostroot'));
  symlinkSync('/dev/zero', join(root, 'zero'));
  symlinkSync('/dev/null', join(root, 'null'));
  symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling-out'));
  symlinkSync('good/file.txt', join(root, 'good-link'));
  symlinkSync('good', join(root, 'gooddir-link'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
  return { base, root, outside, secret, secretPath };
}

function disk(hooks?: DiskBackendHooks): DiskBackend {
  return new DiskBackend({ root: world.root, hooks });
}

/** Settles a promise into a plain value or the FileError it rejected with. */
async function settle(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof FileError || err instanceof llm.ToolError) return err;
    throw err; // a raw Node error would leak host details: fail the test
  }
}

/** Nothing the caller sees mentions the secret or any host path. */
function expectClean(result: unknown): void {
  const text =
    result instanceof Error ? `${result.message}` : (JSON.stringify(result ?? null) ?? '');
  expect(text).not.toContain(world.secret);
  expect(text).not.toContain(world.base);
}

function expectCode(result: unknown, code: string): void {
  expect(result).toBeInstanceOf(FileError);
  expect((result as FileError).code).toBe(code);
}

beforeEach(() => {
  world = makeWorld();
  before = outsideState();
});

afterEach(() => {
  // Zero escapes: nothing outside the root was created, changed or removed.
  expect(outsideState()).toBe(before);
  expect(readFileSync(world.secretPath, 'utf8')).toBe(`${world.secret}\n`);
  rmSync(world.base, { recursive: true, force: true });
});

/** Hostile paths and the code reading each must give. */
const HOSTILE: Array<[label: string, path: () => string, readCode: string]> = [
  ['.. from the root', () => '/../outside/secret.txt', 'outside_root'],
  ['relative ..', () => '../outside/secret.txt', 'outside_root'],
  ['.. after a real directory', () => '/good/../../outside/secret.txt', 'outside_root'],
  ['dot then ..', () => '/./../outside/secret.txt', 'outside_root'],
  ['.. beyond nested names', () => '/a/b/../../../outside/secret.txt', 'outside_root'],
  ['a directory symlink pointing out', () => '/out/secret.txt', 'outside_root'],
  ['a nested file behind a directory symlink', () => '/out/dir/inner.txt', 'outside_root'],
  ['an absolute file symlink pointing out', () => '/secret-link', 'outside_root'],
  ['a relative file symlink pointing out', () => '/rel-link', 'outside_root'],
  ['a chain of symlinks ending outside', () => '/chain1', 'outside_root'],
  ['a sibling sharing the root prefix', () => '/evil/secret.txt', 'outside_root'],
  ['a symlink to the host root', () => `/hostroot${world.secretPath}`, 'outside_root'],
  ['a symlink to /dev/zero', () => '/zero', 'outside_root'],
  ['a symlink to /dev/null', () => '/null', 'outside_root'],
  ['a NUL byte', () => '/good/file.txt\u0000/../../outside/secret.txt', 'invalid_path'],
  ['backslash separators', () => '..\\outside\\secret.txt', 'invalid_path'],
  ['a Windows drive path', () => 'C:\\Windows\\win.ini', 'invalid_path'],
  ['a newline', () => '/good/file.txt\n/../../outside', 'invalid_path'],
  ['a 5000-character path', () => `/${'x/'.repeat(2500)}`, 'invalid_path'],
  ['a 300-byte segment', () => `/${'y'.repeat(300)}`, 'invalid_path'],
  ['the host path of the secret', () => world.secretPath, 'not_found'],
  ['URL-encoded dots', () => '/%2e%2e/outside/secret.txt', 'not_found'],
  ['look-alike unicode dots', () => '/\u2024\u2024/outside/secret.txt', 'not_found'],
  ['a FIFO', () => '/fifo', 'invalid_path'],
  ['a dangling symlink pointing out', () => '/dangling-out', 'invalid_path'],
];

describe('DiskBackend hostile paths: read', () => {
  for (const [label, path, code] of HOSTILE) {
    it(`refuses ${label}`, async () => {
      const result = await settle(disk().read(path()));
      expectCode(result, code);
      expectClean(result);
    });
  }
});

describe('DiskBackend hostile paths: write', () => {
  for (const [label, path, code] of HOSTILE) {
    it(`never writes outside through ${label}`, async () => {
      const d = disk();
      const result = await settle(d.write(path(), 'pwned'));
      expectClean(result);
      if (code === 'not_found') {
        // The name maps to a plain file inside the root: harmless, and it lands there.
        expect(result).toBeUndefined();
        expect(await d.read(path())).toBe('pwned');
      } else {
        expect(result).toBeInstanceOf(FileError);
      }
    });
  }
});

describe('DiskBackend hostile paths: delete, ls, stat, glob and grep', () => {
  for (const [label, path, code] of HOSTILE) {
    it(`never deletes, lists or searches outside through ${label}`, async () => {
      const d = disk();
      const del = await settle(d.delete(path()));
      expectClean(del);
      // A FIFO or a dangling link is an entry inside the root: removing it is allowed.
      if (!['/fifo', '/dangling-out'].includes(path())) expect(del).toBeInstanceOf(FileError);
      expectClean(await settle(d.ls(path())));
      expectClean(await settle(d.stat(path())));
      expectClean(await settle(d.glob('**/*', path())));
      const grep = await settle(d.grep(world.secret.slice(0, 10), { path: path() }));
      expectClean(grep);
      if (Array.isArray(grep)) expect(grep).toEqual([]);
      if (code === 'outside_root') {
        expectCode(await settle(d.ls(path())), code);
        expectCode(await settle(d.grep('SECRET', { path: path() })), code);
      }
    });
  }
});

describe('DiskBackend listings and searches over a root full of traps', () => {
  it('lists only entries that stay inside, hiding links out and special files', async () => {
    const names = (await disk().ls('/')).map((e) => `${e.path}${e.isDir ? '/' : ''}`);
    expect(names).toEqual(['/good/', '/good-link', '/gooddir-link/']);
  });

  it('globs every file without following links out', async () => {
    const paths = (await disk().glob('**/*')).map((f) => f.path);
    expect(paths).toEqual(['/good-link', '/good/file.txt']);
  });

  it('greps the whole root without reading anything outside', async () => {
    const d = disk();
    expect(await d.grep('TOP-SECRET')).toEqual([]);
    expect(await d.grep('SECRET', { regex: true, glob: '**' })).toEqual([]);
    expect((await d.grep('good')).map((m) => m.path)).toEqual(['/good-link', '/good/file.txt']);
  });

  it('follows symlinks that stay inside the root', async () => {
    const d = disk();
    expect(await d.read('/good-link')).toBe('good content\n');
    expect((await d.ls('/gooddir-link')).map((e) => e.path)).toEqual(['/gooddir-link/file.txt']);
    await d.write('/gooddir-link/new.txt', 'via link');
    expect(readFileSync(join(world.root, 'good', 'new.txt'), 'utf8')).toBe('via link');
  });

  it('reads and writes a FIFO without hanging, refusing it', async () => {
    const d = disk();
    expectCode(await settle(d.read('/fifo')), 'invalid_path');
    expectCode(await settle(d.write('/fifo', 'x')), 'invalid_path');
    expect(await d.stat('/fifo')).toBeUndefined();
  });

  it('confines a root that is itself reached through a symlink', async () => {
    const linkRoot = join(world.base, 'root-link');
    symlinkSync(world.root, linkRoot);
    const d = new DiskBackend({ root: linkRoot });
    expect(d.root).toBe(world.root);
    expect(await d.read('/good/file.txt')).toBe('good content\n');
    expectCode(await settle(d.read('/secret-link')), 'outside_root');
    unlinkSync(linkRoot);
  });

  it('handles a deeply nested path inside the limits', async () => {
    const d = disk();
    const deep = `/${'d/'.repeat(400)}leaf.txt`;
    await d.write(deep, 'deep');
    expect(await d.read(deep)).toBe('deep');
    expect((await d.glob('**/leaf.txt')).map((f) => f.path)).toEqual([deep]);
  });
});

describe('DiskBackend symlink swapped in after the check (simulated race)', () => {
  /** Replaces root/good/file.txt by a symlink to the secret. */
  const swapLeaf = () => {
    const leaf = join(world.root, 'good', 'file.txt');
    unlinkSync(leaf);
    symlinkSync(world.secretPath, leaf);
  };
  /** Moves root/good away and puts a symlink to `outside` in its place. */
  const swapParent = () => {
    renameSync(join(world.root, 'good'), join(world.root, 'good-old'));
    symlinkSync(world.outside, join(world.root, 'good'));
  };
  const once = (op: string, fn: () => void): DiskBackendHooks => {
    let done = false;
    return {
      beforeOpen(_path, current) {
        if (current === op && !done) {
          done = true;
          fn();
        }
      },
    };
  };

  it('read: a leaf swapped to a link out is refused', async () => {
    const result = await settle(disk(once('read', swapLeaf)).read('/good/file.txt'));
    expectCode(result, 'outside_root');
    expectClean(result);
  });

  it('write: a leaf swapped to a link out is refused and the target untouched', async () => {
    const result = await settle(disk(once('write', swapLeaf)).write('/good/file.txt', 'pwned'));
    expectCode(result, 'outside_root');
  });

  it('read: a parent swapped to a link out still reads the verified directory', async () => {
    const result = await settle(disk(once('read', swapParent)).read('/good/file.txt'));
    expectClean(result);
    expect(result).toBe('good content\n');
  });

  it('write: a parent swapped to a link out creates the file in the verified directory', async () => {
    const result = await settle(disk(once('write', swapParent)).write('/good/new.txt', 'pwned'));
    expectClean(result);
    expect(existsSync(join(world.outside, 'new.txt'))).toBe(false);
    expect(readFileSync(join(world.root, 'good-old', 'new.txt'), 'utf8')).toBe('pwned');
  });

  it('delete: a parent swapped to a link out deletes inside only', async () => {
    const result = await settle(disk(once('delete', swapParent)).delete('/good/file.txt'));
    expectClean(result);
    expect(existsSync(join(world.outside, 'file.txt'))).toBe(true);
    expect(existsSync(join(world.root, 'good-old', 'file.txt'))).toBe(false);
  });

  it('delete: a leaf swapped to a link out is refused', async () => {
    const result = await settle(disk(once('delete', swapLeaf)).delete('/good/file.txt'));
    expectCode(result, 'outside_root');
  });

  it('ls: a directory swapped to a link out lists the verified directory', async () => {
    const result = await settle(disk(once('list', swapParent)).ls('/good'));
    expectClean(result);
    expect((result as Array<{ path: string }>).map((e) => e.path)).toEqual(['/good/file.txt']);
  });

  it('read: a leaf swapped to a link that stays inside is followed', async () => {
    const hooks = once('read', () => {
      const leaf = join(world.root, 'good', 'file.txt');
      renameSync(leaf, join(world.root, 'moved.txt'));
      symlinkSync('../moved.txt', leaf);
    });
    expect(await disk(hooks).read('/good/file.txt')).toBe('good content\n');
  });
});

describe('DiskBackend walks (glob, grep) with entries swapped mid-walk', () => {
  /** Runs `fn` once, when the walk reaches `target`. */
  const atWalk = (target: string, fn: () => void): DiskBackendHooks => {
    let done = false;
    return {
      beforeOpen(path, op) {
        if (op === 'walk' && path === target && !done) {
          done = true;
          fn();
        }
      },
    };
  };
  const swapDirOut = () => {
    renameSync(join(world.root, 'good'), join(world.root, 'good-old'));
    symlinkSync(world.outside, join(world.root, 'good'));
  };
  const swapLeafOut = () => {
    const leaf = join(world.root, 'good', 'file.txt');
    unlinkSync(leaf);
    symlinkSync(world.secretPath, leaf);
  };

  it('grep: a directory swapped to a link out after listing is not entered', async () => {
    const d = disk(atWalk('/good', swapDirOut));
    const result = await settle(d.grep('SECRET'));
    expectClean(result);
    expect(result).toEqual([]);
  });

  it('grep: a file swapped to a link out after listing is not read', async () => {
    const d = disk(atWalk('/good/file.txt', swapLeafOut));
    const result = await settle(d.grep('SECRET', { regex: true }));
    expectClean(result);
    expect(result).toEqual([]);
  });

  it('glob: a directory swapped to a link out after listing lists nothing from outside', async () => {
    const d = disk(atWalk('/good', swapDirOut));
    const result = await settle(d.glob('**/*'));
    expectClean(result);
    const paths = (result as Array<{ path: string }>).map((f) => f.path);
    expect(paths.some((p) => p.includes('secret') || p.includes('inner'))).toBe(false);
  });
});

describe('file tools on a hostile disk root', () => {
  const call = (
    tool: { execute: (args: never, opts: llm.ToolOptions) => Promise<unknown> },
    args: unknown,
  ) => settle(tool.execute(args as never, llm.createToolOptions('call_hostile')));

  it('answer hostile paths with coded tool errors that name no host path', async () => {
    const tools = createFileTools({ backend: disk() });
    for (const [, path, code] of HOSTILE) {
      const result = await call(tools.read_file, { file_path: path() });
      expectClean(result);
      expect(result).toBeInstanceOf(llm.ToolError);
      expect((result as Error).message.startsWith(`${code}: `)).toBe(true);
    }
  });

  it('never write, edit, delete or list outside', async () => {
    const tools = createFileTools({ backend: disk() });
    for (const path of ['/out/new.txt', '/secret-link', '/rel-link', '/zero', '/evil/x.txt']) {
      const w = await call(tools.write_file, { file_path: path, content: 'pwned' });
      expect((w as Error).message).toMatch(/^(outside_root|invalid_path): /);
      expectClean(
        await call(tools.edit_file, { file_path: path, old_string: 'T', new_string: 'X' }),
      );
      expectClean(await call(tools.delete_file, { file_path: path }));
    }
    expect(((await call(tools.ls, { path: '/out' })) as Error).message).toMatch(/^outside_root: /);
    expectClean(await call(tools.ls, {}));
    expect(await call(tools.glob, { pattern: '**/*' })).toBe('/good-link\n/good/file.txt');
    expect(await call(tools.grep, { pattern: 'TOP-SECRET' })).toBe(
      '(no matches for "TOP-SECRET" under /)',
    );
  });
});
