/**
 * Root confinement for the disk backend: how a virtual path becomes an open, verified
 * descriptor inside the root, and never anything outside it. Every directory is opened
 * through its already-verified parent; every descriptor is checked (through `/proc/self/fd`
 * on Linux) to lie under the root's real path; files open with O_NOFOLLOW; symbolic links are
 * followed only when their real target stays inside.
 */
import {
  closeSync,
  constants,
  existsSync,
  promises as fsp,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { FileError } from '../backend.js';
import { baseName, parentPath, pathSegments, ROOT } from '../paths.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
/** Open flags for reading a file: never through a final symlink, never blocking on a FIFO. */
export const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/** Open flags for writing an existing file. */
export const WRITE_FLAGS = constants.O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/** Open flags for creating a new file (fails if anything already has the name). */
export const CREATE_FLAGS = WRITE_FLAGS | constants.O_CREAT | constants.O_EXCL;
/** Open flags for a directory. */
export const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** Linux exposes each open descriptor's real path; with it, checks are race-free. */
export const HAS_PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/** A directory opened and verified to lie inside the root. */
export interface OpenDir {
  handle: FileHandle;
  /** Its real host path as verified when opened. */
  host: string;
}

/** A directory during a walk: an open descriptor (-1 while let go) and its paths. */
export interface WalkDir {
  fd: number;
  /** Virtual path. */
  path: string;
  /** Real host path it had when the walk reached it. */
  host: string;
  /** Levels below the walk's start. */
  depth: number;
}

/** A path component that is a file where a directory was needed. */
export class NotADirectory extends Error {
  constructor(readonly path: string) {
    super(`${path} is not a directory`);
  }
}

/** The `code` of a Node system error, if any. */
export function errno(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** The error for a path that resolves outside the root. */
export function outside(path: string): FileError {
  return new FileError(
    'outside_root',
    `${path} leads outside the files root (a symbolic link or a change during the operation); ` +
      'only files inside the root can be used',
  );
}

/** The error for a path that does not exist. */
export function notFound(path: string): FileError {
  return new FileError('not_found', `${path} does not exist`);
}

/** The error for a device, pipe or socket. */
export function notRegular(path: string): FileError {
  return new FileError(
    'invalid_path',
    `${path} is not a regular file (a device, pipe or socket); only regular files can be used`,
  );
}

/** The virtual path of `name` inside virtual directory `dir`. */
export function childPath(dir: string, name: string): string {
  return (dir === ROOT ? '' : dir) + '/' + name;
}

/** Closes a handle, ignoring one that is already closed. */
export async function closeQuietly(handle: FileHandle | undefined): Promise<void> {
  if (!handle) return;
  try {
    await handle.close();
  } catch {
    // already closed
  }
}

/**
 * A host directory as a confinement boundary: resolves virtual paths to descriptors that are
 * verified to lie inside it. It decides nothing about sizes, text or listings.
 */
export class ConfinedRoot {
  /** The root's real host path. */
  readonly real: string;
  readonly #prefix: string;

  /** Creates the directory if missing and pins its real path. */
  constructor(root: string) {
    mkdirSync(root, { recursive: true });
    this.real = realpathSync(root);
    this.#prefix = this.real.endsWith('/') ? this.real : this.real + '/';
  }

  /** True when a real host path is the root or lies under it. */
  contains(real: string): boolean {
    return real === this.real || real.startsWith(this.#prefix);
  }

  /** The path an operation uses for `name` inside a verified directory. */
  at(dir: OpenDir, name?: string): string {
    const base = HAS_PROC_FD ? `/proc/self/fd/${dir.handle.fd}` : dir.host;
    return name === undefined ? base : `${base}/${name}`;
  }

  /** Real path of an open descriptor, refused unless inside the root (or equal to `expect`). */
  async verify(handle: FileHandle, path: string, expect?: string): Promise<string | undefined> {
    if (!HAS_PROC_FD) return expect;
    const real = await fsp.readlink(`/proc/self/fd/${handle.fd}`);
    if (!this.contains(real) || (expect !== undefined && real !== expect)) throw outside(path);
    return real;
  }

  /** Resolves a symlink found inside the root; refuses targets outside it. */
  async resolveLink(linkPath: string, path: string): Promise<string> {
    let real: string;
    try {
      real = await fsp.realpath(linkPath);
    } catch (err) {
      if (errno(err) === 'ENOENT' || errno(err) === 'ELOOP') {
        throw new FileError('invalid_path', `${path} is a broken symbolic link`);
      }
      throw err;
    }
    if (!this.contains(real)) throw outside(path);
    return real;
  }

  async #openRoot(): Promise<OpenDir> {
    const handle = await fsp.open(this.real, DIR_FLAGS);
    try {
      await this.verify(handle, ROOT, this.real);
    } catch (err) {
      await closeQuietly(handle);
      throw err;
    }
    return { handle, host: this.real };
  }

  /** Opens `name` inside `dir` as a directory, following symlinks only if they stay inside. */
  async #openChild(dir: OpenDir, name: string, path: string): Promise<OpenDir> {
    let handle: FileHandle;
    let host: string;
    try {
      handle = await fsp.open(this.at(dir, name), DIR_FLAGS);
      host = `${dir.host}/${name}`;
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT') throw notFound(path);
      if (code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
      const st = await fsp.lstat(this.at(dir, name)).catch(() => undefined);
      if (!st) throw notFound(path);
      if (!st.isSymbolicLink()) throw new NotADirectory(path);
      host = await this.resolveLink(this.at(dir, name), path);
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
      const real = await this.verify(handle, path);
      return { handle, host: real ?? host };
    } catch (err) {
      await closeQuietly(handle);
      throw err;
    }
  }

  /** Opens every directory from the root down to `path`; the caller closes them all. */
  async openChain(path: string, create: boolean): Promise<OpenDir[]> {
    const chain = [await this.#openRoot()];
    try {
      let current = ROOT;
      for (const seg of pathSegments(path)) {
        current = childPath(current, seg);
        const parent = chain[chain.length - 1] as OpenDir;
        if (create) {
          try {
            await fsp.mkdir(this.at(parent, seg), { mode: 0o755 });
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

  /** Opens the directory at a virtual path (creating missing ones when asked). */
  async openDir(path: string, create: boolean): Promise<OpenDir> {
    const chain = await this.openChain(path, create);
    const last = chain.pop() as OpenDir;
    await Promise.all(chain.map((d) => closeQuietly(d.handle)));
    return last;
  }

  /** The parent directory of a file path; a file in the way is `not_found` (or `invalid_path`). */
  async openParent(path: string, create: boolean): Promise<OpenDir> {
    try {
      return await this.openDir(parentPath(path), create);
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

  /**
   * Opens a regular file for reading; the descriptor is verified to lie inside the root.
   * `beforeOpen` runs between resolving the parent and the final open (a test seam).
   */
  async openForRead(path: string, beforeOpen?: () => void | Promise<void>): Promise<FileHandle> {
    if (path === ROOT) throw new FileError('is_directory', `${ROOT} is a directory, not a file`);
    const dir = await this.openParent(path, false);
    let handle: FileHandle | undefined;
    try {
      await beforeOpen?.();
      const name = baseName(path);
      try {
        handle = await fsp.open(this.at(dir, name), READ_FLAGS);
      } catch (err) {
        const code = errno(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(path);
        if (code !== 'ELOOP') throw err;
        const real = await this.resolveLink(this.at(dir, name), path);
        try {
          handle = await fsp.open(real, READ_FLAGS);
        } catch (err2) {
          if (errno(err2) === 'ELOOP') throw outside(path);
          if (errno(err2) === 'ENOENT') throw notFound(path);
          throw err2;
        }
      }
      await this.verify(handle, path);
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

  /** Opens an existing entry `name` of a verified directory for writing, links kept inside. */
  async openExistingForWrite(dir: OpenDir, name: string, path: string): Promise<FileHandle> {
    const at = this.at(dir, name);
    const st = await fsp.lstat(at).catch(() => undefined);
    if (!st) throw outside(path); // vanished between create and open: treat as a race
    if (st.isDirectory()) {
      throw new FileError('is_directory', `${path} is a directory; choose a file name inside it`);
    }
    const target = st.isSymbolicLink() ? await this.resolveLink(at, path) : at;
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

  /** Real host path of a directory given by virtual path; NotADirectory when it is a file. */
  async dirHost(path: string): Promise<string> {
    const dir = await this.openDir(path, false);
    await closeQuietly(dir.handle);
    return dir.host;
  }

  /** The path that reaches `name` inside a walked directory (through its descriptor on Linux). */
  inDir(dir: WalkDir, name: string): string {
    return HAS_PROC_FD ? `/proc/self/fd/${dir.fd}/${name}` : `${dir.host}/${name}`;
  }

  /**
   * Opens a directory by host path for a walk and checks it is still `host` (inside the root);
   * undefined when it vanished or was replaced.
   */
  openWalkDirSync(host: string): number | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(host, DIR_FLAGS);
      const real = HAS_PROC_FD ? readlinkSync(`/proc/self/fd/${fd}`) : realpathSync(host);
      if (real !== host || !this.contains(real)) {
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
  openChildDirSync(dir: WalkDir, name: string, path: string): WalkDir | undefined {
    const host = `${dir.host}/${name}`;
    if (!HAS_PROC_FD) {
      const fd = this.openWalkDirSync(host);
      return fd === undefined ? undefined : { fd, path, host, depth: dir.depth + 1 };
    }
    try {
      return { fd: openSync(this.inDir(dir, name), DIR_FLAGS), path, host, depth: dir.depth + 1 };
    } catch {
      return undefined; // vanished, or became a link or a file since it was listed
    }
  }

  /** Real path of an in-root symlink's target when it is a regular file inside the root. */
  linkedFileSync(dir: WalkDir, name: string): string | undefined {
    try {
      const real = realpathSync(this.inDir(dir, name));
      return this.contains(real) && statSync(real).isFile() ? real : undefined;
    } catch {
      return undefined;
    }
  }
}
