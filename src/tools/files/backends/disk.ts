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
import {
  baseName,
  isPlainName,
  MAX_PATH_LENGTH,
  normalizePath,
  parentPath,
  pathSegments,
  ROOT,
} from '../paths.js';
import { checkMaxCount, compileSearcher, SearchBudget, searchLiteralBytes } from '../search.js';
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
   * listing; in a walk (glob, grep), after listing a directory and before each entry is opened
   * or visited (`walk`). @internal Only for tests that simulate a symlink swapped in mid-operation.
   */
  beforeOpen?(
    path: string,
    op: 'read' | 'write' | 'delete' | 'list' | 'walk',
  ): void | Promise<void>;
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

/** A directory during a walk: an open descriptor (-1 while let go) and its paths. */
interface WalkDir {
  fd: number;
  /** Virtual path. */
  path: string;
  /** Real host path it had when the walk reached it. */
  host: string;
  /** Levels below the walk's start. */
  depth: number;
}

/** Called for each file a walk meets; returns (or resolves to) true to stop the walk. */
type FileVisitor = (
  dir: WalkDir,
  name: string,
  path: string,
  linkTarget: string | undefined,
) => boolean | Promise<boolean>;

const FILE = 0;
const DIR = 1;
const LINK = 2;

interface WalkEntry {
  key: string;
  name: string;
  kind: typeof FILE | typeof DIR | typeof LINK;
}

function byKey(a: WalkEntry, b: WalkEntry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Most directory descriptors one walk holds open at once (one per level below the start). */
const MAX_HELD_DIRS = 32;

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
    await this.#walk(
      ROOT,
      this.#root,
      Number.POSITIVE_INFINITY,
      new SearchBudget(),
      (dir, name) => {
        const st = lstatSync(this.#inDir(dir, name), { throwIfNoEntry: false });
        if (st?.isFile()) total += st.size;
        return false;
      },
    );
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
    // Measured, not encoded: a refused write must not allocate its whole content first.
    const bytes = Buffer.byteLength(text, 'utf8');
    const caps = { maxFileBytes: this.#maxFileBytes, maxTotalBytes: this.#maxTotalBytes };
    checkSizeCaps(p, bytes, 0, 0, { ...caps, maxTotalBytes: Number.POSITIVE_INFINITY });
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
      checkSizeCaps(p, bytes, previous, used, caps);
      await handle.truncate(0);
      const data = Buffer.from(text, 'utf8');
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

  /** The path that reaches `name` inside a walked directory (through its descriptor on Linux). */
  #inDir(dir: WalkDir, name: string): string {
    return HAS_PROC_FD ? `/proc/self/fd/${dir.fd}/${name}` : `${dir.host}/${name}`;
  }

  /**
   * Opens a directory by host path for a walk and checks it is still `host` (inside the root);
   * undefined when it vanished or was replaced.
   */
  #openWalkDirSync(host: string): number | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(host, DIR_FLAGS);
      const real = HAS_PROC_FD ? readlinkSync(`/proc/self/fd/${fd}`) : realpathSync(host);
      if (real !== host || !this.#contains(real)) {
        closeSync(fd);
        return undefined;
      }
      return fd;
    } catch {
      if (fd !== undefined) closeSync(fd);
      return undefined;
    }
  }

  /**
   * Opens subdirectory `name` of a walked directory. On Linux it is opened through the
   * parent's verified descriptor with O_NOFOLLOW (openat semantics): a single name, no links,
   * so it lies inside the parent and needs no further check. Elsewhere, by real path.
   */
  #openChildDirSync(dir: WalkDir, name: string, path: string): WalkDir | undefined {
    const host = `${dir.host}/${name}`;
    if (!HAS_PROC_FD) {
      const fd = this.#openWalkDirSync(host);
      return fd === undefined ? undefined : { fd, path, host, depth: dir.depth + 1 };
    }
    try {
      return { fd: openSync(this.#inDir(dir, name), DIR_FLAGS), path, host, depth: dir.depth + 1 };
    } catch {
      return undefined; // vanished, or became a link or a file since it was listed
    }
  }

  /** Real path of an in-root symlink's target when it is a regular file inside the root. */
  #linkedFileSync(dir: WalkDir, name: string): string | undefined {
    try {
      const real = realpathSync(this.#inDir(dir, name));
      return this.#contains(real) && statSync(real).isFile() ? real : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Walks the regular files under a directory (virtual `path`, verified real `host`) down to
   * `maxDepth` levels, calling `visit` for each in path order (the order of a sorted list of
   * full paths) until it returns true. Every directory is opened through its verified parent
   * (see {@link DiskBackend.#openChildDirSync}); in-root symlinks to files are visited with
   * their real target, symlinked directories are not descended, special files are skipped.
   * Synchronous calls, yielding to the event loop every few milliseconds (see
   * {@link SearchBudget}): far faster than one thread-pool round trip per call.
   */
  async #walk(
    path: string,
    host: string,
    maxDepth: number,
    budget: SearchBudget,
    visit: FileVisitor,
  ): Promise<void> {
    const fd = this.#openWalkDirSync(host);
    if (fd === undefined) return;
    const dir: WalkDir = { fd, path, host, depth: 0 };
    try {
      await this.#walkDir(dir, maxDepth, budget, visit, 1);
    } finally {
      if (dir.fd >= 0) closeSync(dir.fd);
    }
  }

  /** One directory of {@link DiskBackend.#walk}; true when the visitor asked to stop. */
  async #walkDir(
    dir: WalkDir,
    maxDepth: number,
    budget: SearchBudget,
    visit: FileVisitor,
    held: number,
  ): Promise<boolean> {
    if (budget.due()) await budget.step(true);
    let entries: Dirent[];
    try {
      entries = readdirSync(HAS_PROC_FD ? `/proc/self/fd/${dir.fd}` : dir.host, {
        withFileTypes: true,
      });
    } catch {
      return false; // vanished since it was opened
    }
    const room = MAX_PATH_LENGTH - (dir.path === ROOT ? 0 : dir.path.length) - 1;
    const items: WalkEntry[] = [];
    for (const entry of entries) {
      const name = entry.name;
      if (name.length > room || !isPlainName(name)) continue;
      if (entry.isFile()) items.push({ key: name, name, kind: FILE });
      else if (entry.isDirectory()) {
        // "name/" sorts a directory's files exactly where full paths would put them.
        if (dir.depth + 1 < maxDepth) items.push({ key: `${name}/`, name, kind: DIR });
      } else if (entry.isSymbolicLink()) items.push({ key: name, name, kind: LINK });
    }
    items.sort(byKey);
    const hook = this.#hooks.beforeOpen;
    for (const item of items) {
      const path = childPath(dir.path, item.name);
      if (hook) await hook(path, 'walk');
      if (item.kind === DIR) {
        const child = this.#openChildDirSync(dir, item.name, path);
        if (!child) continue;
        // Hold at most MAX_HELD_DIRS descriptors: past that, let go of this one and reopen it.
        const release = held >= MAX_HELD_DIRS;
        if (release) {
          closeSync(dir.fd);
          dir.fd = -1;
        }
        let stop: boolean;
        try {
          stop = await this.#walkDir(child, maxDepth, budget, visit, release ? held : held + 1);
        } finally {
          if (child.fd >= 0) closeSync(child.fd);
        }
        if (stop) return true;
        if (release) {
          const fd = this.#openWalkDirSync(dir.host);
          if (fd === undefined) return false;
          dir.fd = fd;
        }
        continue;
      }
      let target: string | undefined;
      if (item.kind === LINK) {
        target = this.#linkedFileSync(dir, item.name);
        if (target === undefined) continue;
      }
      if (budget.due()) await budget.step(true);
      let stop = visit(dir, item.name, path, target);
      if (typeof stop !== 'boolean') stop = await stop;
      if (stop) return true;
    }
    return false;
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
    const cut = split.base === ROOT ? 1 : split.base.length + 1;
    const out: FileInfo[] = [];
    await this.#walk(split.base, host, glob.maxDepth, new SearchBudget(), (_dir, _name, path) => {
      if (glob.matches(path.slice(cut))) out.push({ path, isDir: false });
      return false;
    });
    return out;
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const searcher = compileSearcher(pattern, { regex: options.regex });
    const limit = checkMaxCount(options.maxCount);
    const base = normalizePath(options.path ?? ROOT);
    const filter = createPathFilter(options.glob, base);
    const budget = new SearchBudget(options.signal, options.onSkippedLine);
    budget.check();
    let host: string;
    try {
      host = await this.#dirHost(base);
    } catch (err) {
      if (!(err instanceof NotADirectory)) throw err;
      // `base` is a file: search it alone, with the same errors read() gives.
      const text = await this.read(base);
      return filter(base) ? searcher.search(base, text, limit, budget) : [];
    }
    const out: GrepMatch[] = [];
    const reader = new GrepReader(this.#maxFileBytes);
    const literal =
      searcher.literal === undefined ? undefined : Buffer.from(searcher.literal, 'utf8');
    // Text every matching line holds: a file without it is skipped before any decoding.
    const required = searcher.required.map((group) =>
      group.map((piece) => Buffer.from(piece, 'utf8')),
    );
    await this.#walk(base, host, Number.POSITIVE_INFINITY, budget, (dir, name, path, target) => {
      if (!filter(path)) return false;
      // A plain entry opens through its verified directory; a link's target is re-checked.
      const data =
        target === undefined ? reader.read(this.#inDir(dir, name)) : reader.read(target, target);
      if (data === undefined) return false;
      for (const group of required) {
        if (!group.some((piece) => data.indexOf(piece) >= 0)) return false;
      }
      if (!isText(data)) return false;
      if (literal !== undefined) {
        for (const hit of searchLiteralBytes(literal, path, data, limit - out.length)) {
          out.push(hit);
        }
        return out.length >= limit;
      }
      const text = data.toString('utf8');
      return searcher.search(path, text, limit - out.length, budget).then((hits) => {
        for (const hit of hits) out.push(hit);
        return out.length >= limit;
      });
    });
    return out;
  }
}

/** True for UTF-8 text without NUL bytes: what grep searches (binary files are skipped). */
function isText(data: Buffer): boolean {
  return !data.includes(0) && isUtf8(data);
}

/**
 * Reads files for grep into one reused buffer (no allocation per file): open, fstat, read,
 * close. Skips (undefined) anything gone, not a regular file, over the size cap or, when
 * `expect` is given, whose descriptor does not resolve to exactly that host path.
 */
class GrepReader {
  #buf = Buffer.allocUnsafe(64 * 1024);
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The file's bytes, valid until the next call. */
  read(at: string, expect?: string): Buffer | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(at, READ_FLAGS);
      if (expect !== undefined && HAS_PROC_FD && readlinkSync(`/proc/self/fd/${fd}`) !== expect) {
        return undefined;
      }
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > this.#maxBytes) return undefined;
      if (st.size > this.#buf.length) {
        this.#buf = Buffer.allocUnsafe(
          Math.min(this.#maxBytes, Math.max(st.size, this.#buf.length * 2)),
        );
      }
      let got = 0;
      while (got < st.size) {
        const n = readSync(fd, this.#buf, got, st.size - got, got);
        if (n === 0) break;
        got += n;
      }
      return this.#buf.subarray(0, got);
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
