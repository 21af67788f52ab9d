import { isUtf8 } from 'node:buffer';
import {
  closeSync,
  constants,
  type Dirent,
  existsSync,
  promises as fsp,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import {
  type FileBackend,
  FileError,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
} from '../backend.js';
import { compileGlob, createPathFilter, splitGlob } from '../glob.js';
import { baseName, normalizePath, parentPath, pathSegments, ROOT } from '../paths.js';
import { checkMaxCount, compileSearcher, SearchBudget, type TextSearcher } from '../search.js';
import {
  checkSizeCaps,
  checkTextContent,
  DEFAULT_MAX_FILE_BYTES,
  formatBytes,
  sizeOption,
} from './limits.js';

/** Default cap on everything under a disk root, in bytes (256 MiB). */
export const DEFAULT_DISK_MAX_TOTAL_BYTES = 256 * 1024 * 1024;

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const WRITE_FLAGS = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const CREATE_FLAGS = WRITE_FLAGS | constants.O_CREAT | constants.O_EXCL;
const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** Linux exposes each open descriptor's real path; with it, checks are race-free. */
const HAS_PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/** Test seams for {@link DiskBackend}; lets a test swap files between resolution and use. */
export interface DiskBackendHooks {
  /**
   * Runs after the parent directory is resolved and just before the final open, unlink or
   * listing. @internal Only for tests that simulate a symlink swapped in mid-operation.
   */
  beforeOpen?(path: string, op: 'read' | 'write' | 'delete' | 'list'): void | Promise<void>;
}

/** Options for {@link DiskBackend}. */
export interface DiskBackendOptions {
  /** Host directory that holds the files; created if missing. Nothing outside it is touched. */
  root: string;
  /** Largest file, in bytes (default 5 MiB); bigger files on disk are `too_large` to read. */
  maxFileBytes?: number;
  /** Largest total of regular files under the root, in bytes (default 256 MiB). */
  maxTotalBytes?: number;
  /** @internal Test seams. */
  hooks?: DiskBackendHooks;
}

/** A directory opened and verified to lie inside the root. */
interface OpenDir {
  handle: FileHandle;
  /** Its real host path as verified when opened. */
  host: string;
}

/** A file found by a walk: virtual path and the host path it must still resolve to. */
interface WalkedFile {
  path: string;
  host: string;
}

class NotADirectory extends Error {
  constructor(readonly path: string) {
    super(`${path} is not a directory`);
  }
}

function errno(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

function outside(path: string): FileError {
  return new FileError(
    'outside_root',
    `${path} leads outside the files root (a symbolic link or a change during the operation); ` +
      'only files inside the root can be used',
  );
}

function notFound(path: string): FileError {
  return new FileError('not_found', `${path} does not exist`);
}

function notRegular(path: string): FileError {
  return new FileError(
    'invalid_path',
    `${path} is not a regular file (a device, pipe or socket); only regular files can be used`,
  );
}

function childPath(dir: string, name: string): string {
  return (dir === ROOT ? '' : dir) + '/' + name;
}

async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  if (!handle) return;
  try {
    await handle.close();
  } catch {
    // already closed
  }
}

function byPath<T extends { path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * Files in a host directory, always confined to it. Every descriptor it opens is checked
 * (through `/proc/self/fd` on Linux) to really lie under the root's real path, so `..`,
 * absolute paths, symbolic links pointing out — including one swapped in after a check — can
 * never reach outside; files are opened with O_NOFOLLOW and new files are created inside an
 * already-verified directory descriptor. Symbolic links that stay inside the root work;
 * devices, FIFOs and sockets are refused (and hidden from listings). Without `/proc` (not
 * Linux) the same checks run by real path before opening, which is not race-free.
 */
export class DiskBackend implements FileBackend {
  readonly kind = 'disk';
  readonly #root: string;
  readonly #prefix: string;
  readonly #maxFileBytes: number;
  readonly #maxTotalBytes: number;
  readonly #hooks: DiskBackendHooks;
  #used: number | undefined;

  constructor(options: DiskBackendOptions) {
    mkdirSync(options.root, { recursive: true });
    this.#root = realpathSync(options.root);
    this.#prefix = this.#root.endsWith('/') ? this.#root : this.#root + '/';
    this.#maxFileBytes = sizeOption('maxFileBytes', options.maxFileBytes, DEFAULT_MAX_FILE_BYTES);
    this.#maxTotalBytes = sizeOption(
      'maxTotalBytes',
      options.maxTotalBytes,
      DEFAULT_DISK_MAX_TOTAL_BYTES,
    );
    this.#hooks = options.hooks ?? {};
  }

  /** The real host path of the root (for the application; never shown to the model). */
  get root(): string {
    return this.#root;
  }

  #contains(real: string): boolean {
    return real === this.#root || real.startsWith(this.#prefix);
  }

  /** The path an operation uses for `name` inside a verified directory. */
  #at(dir: OpenDir, name?: string): string {
    const base = HAS_PROC_FD ? `/proc/self/fd/${dir.handle.fd}` : dir.host;
    return name === undefined ? base : `${base}/${name}`;
  }

  /** Real path of an open descriptor, refused unless inside the root (or equal to `expect`). */
  async #verify(handle: FileHandle, path: string, expect?: string): Promise<string | undefined> {
    if (!HAS_PROC_FD) return expect;
    const real = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
    if (!this.#contains(real) || (expect !== undefined && real !== expect)) throw outside(path);
    return real;
  }

  /** Resolves a symlink found inside the root; refuses targets outside it. */
  async #resolveLink(linkPath: string, path: string): Promise<string> {
    let real: string;
    try {
      real = await fsp.realpath(linkPath);
    } catch (err) {
      if (errno(err) === 'ENOENT' || errno(err) === 'ELOOP') {
        throw new FileError('invalid_path', `${path} is a broken symbolic link`);
      }
      throw err;
    }
    if (!this.#contains(real)) throw outside(path);
    return real;
  }

  async #openRoot(): Promise<OpenDir> {
    const handle = await fsp.open(this.#root, DIR_FLAGS);
    try {
      await this.#verify(handle, ROOT, this.#root);
    } catch (err) {
      await closeQuietly(handle);
      throw err;
    }
    return { handle, host: this.#root };
  }

  /** Opens `name` inside `dir` as a directory, following symlinks only if they stay inside. */
  async #openChild(dir: OpenDir, name: string, path: string): Promise<OpenDir> {
    let handle: FileHandle;
    let host: string;
    try {
      handle = await fsp.open(this.#at(dir, name), DIR_FLAGS);
      host = `${dir.host}/${name}`;
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT') throw notFound(path);
      if (code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
      const st = await fsp.lstat(this.#at(dir, name)).catch(() => undefined);
      if (!st) throw notFound(path);
      if (!st.isSymbolicLink()) throw new NotADirectory(path);
      host = await this.#resolveLink(this.#at(dir, name), path);
      try {
        handle = await fsp.open(host, DIR_FLAGS);
      } catch (err2) {
        const code2 = errno(err2);
        if (code2 === 'ENOTDIR') throw new NotADirectory(path);
        if (code2 === 'ENOENT') throw notFound(path);
        if (code2 === 'ELOOP') throw outside(path);
        throw err2;
      }
    }
    try {
      const real = await this.#verify(handle, path);
      return { handle, host: real ?? host };
    } catch (err) {
      await closeQuietly(handle);
      throw err;
    }
  }

  /** Opens every directory from the root down to `path`; the caller closes them all. */
  async #openChain(path: string, create: boolean): Promise<OpenDir[]> {
    const chain = [await this.#openRoot()];
    try {
      let current = ROOT;
      for (const seg of pathSegments(path)) {
        current = childPath(current, seg);
        const parent = chain[chain.length - 1] as OpenDir;
        if (create) {
          try {
            await fsp.mkdir(this.#at(parent, seg), { mode: 0o755 });
          } catch (err) {
            if (errno(err) !== 'EEXIST') throw err;
          }
        }
        chain.push(await this.#openChild(parent, seg, current));
      }
      return chain;
    } catch (err) {
      await Promise.all(chain.map((d) => closeQuietly(d.handle)));
      throw err;
    }
  }

  async #openDir(path: string, create: boolean): Promise<OpenDir> {
    const chain = await this.#openChain(path, create);
    const last = chain.pop() as OpenDir;
    await Promise.all(chain.map((d) => closeQuietly(d.handle)));
    return last;
  }

  /** The parent directory of a file path; a file in the way is `not_found` (or `invalid_path`). */
  async #openParent(path: string, create: boolean): Promise<OpenDir> {
    try {
      return await this.#openDir(parentPath(path), create);
    } catch (err) {
      if (err instanceof NotADirectory) {
        if (create) {
          throw new FileError(
            'invalid_path',
            `${err.path} is a file, so ${path} cannot be created inside it`,
          );
        }
        throw notFound(path);
      }
      throw err;
    }
  }

  /** Opens a regular file for reading; the descriptor is verified to lie inside the root. */
  async #openForRead(path: string): Promise<FileHandle> {
    if (path === ROOT) throw new FileError('is_directory', `${ROOT} is a directory, not a file`);
    const dir = await this.#openParent(path, false);
    let handle: FileHandle | undefined;
    try {
      await this.#hooks.beforeOpen?.(path, 'read');
      const name = baseName(path);
      try {
        handle = await fsp.open(this.#at(dir, name), READ_FLAGS);
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(path);
        if (code !== 'ELOOP') throw err;
        const real = await this.#resolveLink(this.#at(dir, name), path);
        try {
          handle = await fsp.open(real, READ_FLAGS);
        } catch (err2) {
          if (errno(err2) === 'ELOOP') throw outside(path);
          if (errno(err2) === 'ENOENT') throw notFound(path);
          throw err2;
        }
      }
      await this.#verify(handle, path);
      const st = await handle.stat();
      if (st.isDirectory())
        throw new FileError('is_directory', `${path} is a directory, not a file`);
      if (!st.isFile()) throw notRegular(path);
      const opened = handle;
      handle = undefined;
      return opened;
    } finally {
      await closeQuietly(handle);
      await closeQuietly(dir.handle);
    }
  }

  /** Reads a verified regular file; `too_large` over the cap, `binary` unless UTF-8 text. */
  async #readHandle(handle: FileHandle, path: string): Promise<Buffer> {
    const st = await handle.stat();
    if (st.size > this.#maxFileBytes) {
      throw new FileError(
        'too_large',
        `${path} is ${formatBytes(st.size)}; files over ${formatBytes(this.#maxFileBytes)} cannot be read`,
      );
    }
    return handle.readFile();
  }

  async #usage(): Promise<number> {
    if (this.#used !== undefined) return this.#used;
    let total = 0;
    const files = await this.#walk(ROOT, this.#root, Number.POSITIVE_INFINITY);
    const budget = new SearchBudget();
    for (const f of files) {
      const st = lstatSync(f.host, { throwIfNoEntry: false });
      if (st?.isFile()) total += st.size;
      await budget.step();
    }
    this.#used = total;
    return total;
  }

  async ls(path: string): Promise<FileInfo[]> {
    const p = normalizePath(path);
    let dir: OpenDir;
    try {
      dir = await this.#openDir(p, false);
    } catch (err) {
      if (err instanceof NotADirectory && err.path === p) {
        const info = await this.stat(p);
        if (info) return [info];
        throw notFound(p);
      }
      if (err instanceof NotADirectory) throw notFound(p);
      throw err;
    }
    try {
      await this.#hooks.beforeOpen?.(p, 'list');
      const entries = await fsp.readdir(this.#at(dir), { withFileTypes: true });
      const out: FileInfo[] = [];
      for (const entry of entries) {
        const child = childPath(p, entry.name);
        if (!this.#validName(child)) continue;
        const at = this.#at(dir, entry.name);
        let st = await fsp.lstat(at).catch(() => undefined);
        if (st?.isSymbolicLink()) {
          const real = await fsp.realpath(at).catch(() => undefined);
          st =
            real && this.#contains(real) ? await fsp.stat(real).catch(() => undefined) : undefined;
        }
        if (st?.isDirectory()) out.push({ path: child, isDir: true });
        else if (st?.isFile()) {
          out.push({ path: child, isDir: false, size: st.size, modifiedAt: st.mtimeMs });
        }
      }
      return out.sort(byPath);
    } finally {
      await closeQuietly(dir.handle);
    }
  }

  #validName(path: string): boolean {
    try {
      return normalizePath(path) === path;
    } catch {
      return false;
    }
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const p = normalizePath(path);
    if (p === ROOT) return { path: ROOT, isDir: true };
    let dir: OpenDir;
    try {
      dir = await this.#openParent(p, false);
    } catch (err) {
      if (err instanceof FileError && err.code === 'not_found') return undefined;
      throw err;
    }
    try {
      const at = this.#at(dir, baseName(p));
      let st = await fsp.lstat(at).catch(() => undefined);
      if (st?.isSymbolicLink()) {
        const real = await this.#resolveLink(at, p);
        st = await fsp.stat(real).catch(() => undefined);
      }
      if (st?.isDirectory()) return { path: p, isDir: true };
      if (st?.isFile()) return { path: p, isDir: false, size: st.size, modifiedAt: st.mtimeMs };
      return undefined;
    } finally {
      await closeQuietly(dir.handle);
    }
  }

  async read(path: string): Promise<string> {
    const p = normalizePath(path);
    const handle = await this.#openForRead(p);
    try {
      const buf = await this.#readHandle(handle, p);
      if (buf.includes(0) || !isUtf8(buf)) {
        throw new FileError('binary', `${p} is not a UTF-8 text file; only text files can be read`);
      }
      return buf.toString('utf8');
    } finally {
      await closeQuietly(handle);
    }
  }

  async write(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    const text = checkTextContent(content);
    if (p === ROOT)
      throw new FileError('is_directory', `${ROOT} is a directory; choose a file name`);
    const data = Buffer.from(text, 'utf8');
    const caps = { maxFileBytes: this.#maxFileBytes, maxTotalBytes: this.#maxTotalBytes };
    checkSizeCaps(p, data.length, 0, 0, { ...caps, maxTotalBytes: Number.POSITIVE_INFINITY });
    const used = await this.#usage();
    const dir = await this.#openParent(p, true);
    const name = baseName(p);
    let handle: FileHandle | undefined;
    let created = false;
    try {
      await this.#hooks.beforeOpen?.(p, 'write');
      try {
        handle = await fsp.open(this.#at(dir, name), CREATE_FLAGS, 0o644);
        created = true;
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw err;
        handle = await this.#openExistingForWrite(dir, name, p);
      }
      await this.#verify(handle, p);
      const st = await handle.stat();
      if (st.isDirectory()) throw new FileError('is_directory', `${p} is a directory`);
      if (!st.isFile()) throw notRegular(p);
      const previous = created ? 0 : st.size;
      checkSizeCaps(p, data.length, previous, used, caps);
      await handle.truncate(0);
      await handle.write(data, 0, data.length, 0);
      this.#used = used - previous + data.length;
      created = false;
    } finally {
      await closeQuietly(handle);
      if (created) await fsp.unlink(this.#at(dir, name)).catch(() => undefined);
      await closeQuietly(dir.handle);
    }
  }

  async #openExistingForWrite(dir: OpenDir, name: string, path: string): Promise<FileHandle> {
    const at = this.#at(dir, name);
    const st = await fsp.lstat(at).catch(() => undefined);
    if (!st) throw outside(path); // vanished between create and open: treat as a race
    if (st.isDirectory()) {
      throw new FileError('is_directory', `${path} is a directory; choose a file name inside it`);
    }
    const target = st.isSymbolicLink() ? await this.#resolveLink(at, path) : at;
    try {
      return await fsp.open(target, WRITE_FLAGS);
    } catch (err) {
      const code = errno(err);
      if (code === 'ELOOP') throw outside(path);
      if (code === 'ENXIO' || code === 'EOPNOTSUPP') throw notRegular(path);
      if (code === 'EISDIR') throw new FileError('is_directory', `${path} is a directory`);
      throw err;
    }
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    if (p === ROOT) throw new FileError('is_directory', `${ROOT} is a directory`);
    const segs = pathSegments(parentPath(p));
    let chain: OpenDir[];
    try {
      chain = await this.#openChain(parentPath(p), false);
    } catch (err) {
      if (err instanceof NotADirectory) throw notFound(p);
      throw err;
    }
    try {
      const dir = chain[chain.length - 1] as OpenDir;
      await this.#hooks.beforeOpen?.(p, 'delete');
      const at = this.#at(dir, baseName(p));
      const st = await fsp.lstat(at).catch(() => undefined);
      if (!st) throw notFound(p);
      if (st.isDirectory()) {
        throw new FileError('is_directory', `${p} is a directory; delete the files inside it`);
      }
      if (st.isSymbolicLink()) {
        const real = await fsp.realpath(at).catch(() => undefined);
        if (real !== undefined && !this.#contains(real)) throw outside(p);
        if (real !== undefined && (await fsp.stat(real)).isDirectory()) {
          throw new FileError('is_directory', `${p} is a directory`);
        }
      }
      await fsp.unlink(at);
      if (this.#used !== undefined && st.isFile()) this.#used -= st.size;
      // Remove directories left empty, so every backend agrees a directory exists only
      // while something is in it. rmdir never follows a symlink.
      for (let i = chain.length - 1; i >= 1; i--) {
        try {
          await fsp.rmdir(this.#at(chain[i - 1] as OpenDir, segs[i - 1] as string));
        } catch {
          break;
        }
      }
    } finally {
      await Promise.all(chain.map((d) => closeQuietly(d.handle)));
    }
  }

  /**
   * Regular files under a directory (virtual `dir`, verified real `host`), down to `maxDepth`
   * levels, sorted by path. Directories are opened without following links and verified;
   * in-root symlinks to files are included, symlinked directories are not descended.
   * Uses synchronous calls in slices of a few milliseconds (see {@link SearchBudget}): far
   * faster than one thread-pool round trip per call, without holding the event loop long.
   */
  async #walk(
    dir: string,
    host: string,
    maxDepth: number,
    budget: SearchBudget = new SearchBudget(),
  ): Promise<WalkedFile[]> {
    const files: WalkedFile[] = [];
    const stack: Array<{ path: string; host: string; depth: number }> = [
      { path: dir, host, depth: 0 },
    ];
    while (stack.length > 0) {
      const cur = stack.pop() as { path: string; host: string; depth: number };
      await budget.step(true);
      let entries: Dirent[];
      let fd: number;
      try {
        fd = openSync(cur.host, DIR_FLAGS);
      } catch {
        continue; // vanished or replaced by a link since it was listed
      }
      try {
        if (HAS_PROC_FD && readlinkSync(`/proc/self/fd/${fd}`) !== cur.host) continue;
        entries = readdirSync(HAS_PROC_FD ? `/proc/self/fd/${fd}` : cur.host, {
          withFileTypes: true,
        });
      } catch {
        continue;
      } finally {
        closeSync(fd);
      }
      for (const entry of entries) {
        const path = childPath(cur.path, entry.name);
        if (!this.#validName(path)) continue;
        const entryHost = `${cur.host}/${entry.name}`;
        if (entry.isFile()) files.push({ path, host: entryHost });
        else if (entry.isDirectory()) {
          if (cur.depth + 1 < maxDepth) stack.push({ path, host: entryHost, depth: cur.depth + 1 });
        } else if (entry.isSymbolicLink()) {
          const real = this.#resolveInsideSync(entryHost);
          if (real && statSync(real, { throwIfNoEntry: false })?.isFile()) {
            files.push({ path, host: real });
          }
        }
      }
    }
    return files.sort(byPath);
  }

  /** Real path of a link's target when it lies inside the root, else undefined. */
  #resolveInsideSync(hostPath: string): string | undefined {
    try {
      const real = realpathSync(hostPath);
      return this.#contains(real) ? real : undefined;
    } catch {
      return undefined;
    }
  }

  /** Real host path of a directory given by virtual path; NotADirectory when it is a file. */
  async #dirHost(path: string): Promise<string> {
    const dir = await this.#openDir(path, false);
    await closeQuietly(dir.handle);
    return dir.host;
  }

  async glob(pattern: string, base = ROOT): Promise<FileInfo[]> {
    const requested = normalizePath(base);
    const split = splitGlob(pattern, requested);
    const glob = compileGlob(split.pattern);
    let host: string;
    try {
      host = await this.#dirHost(split.base);
    } catch (err) {
      if (err instanceof NotADirectory) return [];
      if (err instanceof FileError && err.code === 'not_found' && split.base !== requested) {
        return [];
      }
      throw err;
    }
    const files = await this.#walk(split.base, host, glob.maxDepth);
    const cut = split.base === ROOT ? 1 : split.base.length + 1;
    return files
      .filter((f) => glob.matches(f.path.slice(cut)))
      .map((f) => ({ path: f.path, isDir: false }));
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const searcher = compileSearcher(pattern, { regex: options.regex });
    const limit = checkMaxCount(options.maxCount);
    const base = normalizePath(options.path ?? ROOT);
    const filter = createPathFilter(options.glob, base);
    const budget = new SearchBudget(options.signal);
    budget.check();
    let files: WalkedFile[] | undefined;
    try {
      const host = await this.#dirHost(base);
      files = await this.#walk(base, host, Number.POSITIVE_INFINITY, budget);
    } catch (err) {
      if (!(err instanceof NotADirectory)) throw err;
    }
    if (!files) {
      // `base` is a file: search it alone, with the same errors read() gives.
      const text = await this.read(base);
      return filter(base) ? searcher.search(base, text, limit, budget) : [];
    }
    const wanted = files.filter((f) => filter(f.path));
    const out: GrepMatch[] = [];
    for (const file of wanted) {
      if (out.length >= limit) break;
      await budget.step(true);
      const text = this.#readForGrep(file, searcher);
      if (text === undefined) continue;
      const hits = await searcher.search(file.path, text, limit - out.length, budget);
      for (const h of hits) out.push(h);
    }
    return out;
  }

  /**
   * A walked file's text for grep, or undefined to skip it (binary, too big, gone, moved out).
   * Synchronous, called between budget steps; the descriptor is verified like every other.
   */
  #readForGrep(file: WalkedFile, searcher: TextSearcher): string | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(file.host, READ_FLAGS);
      if (HAS_PROC_FD && readlinkSync(`/proc/self/fd/${fd}`) !== file.host) return undefined;
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > this.#maxFileBytes) return undefined;
      const buf = Buffer.allocUnsafe(st.size);
      let got = 0;
      while (got < st.size) {
        const n = readSync(fd, buf, got, st.size - got, got);
        if (n === 0) break;
        got += n;
      }
      const data = got === st.size ? buf : buf.subarray(0, got);
      if (searcher.literal !== undefined && !data.includes(searcher.literal, 0, 'utf8')) {
        return undefined;
      }
      if (data.includes(0) || !isUtf8(data)) return undefined;
      return data.toString('utf8');
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
