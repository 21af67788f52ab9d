/**
 * The disk backend: file operations (ls, stat, read, write, delete, glob, grep) and the size
 * caps, on a host directory, never outside it.
 */
import { isUtf8 } from 'node:buffer';
import { promises as fsp, lstatSync } from 'node:fs';
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
import { checkMaxCount, compileSearcher, SearchBudget, searchLiteralBytes } from '../search.js';
import {
  ConfinedRoot,
  CREATE_FLAGS,
  childPath,
  closeQuietly,
  errno,
  NotADirectory,
  notFound,
  notRegular,
  type OpenDir,
  outside,
} from './disk-containment.js';
import { type FileVisitor, GrepReader, isText, walkFiles } from './disk-walk.js';
import {
  checkSizeCaps,
  checkTextContent,
  DEFAULT_MAX_FILE_BYTES,
  formatBytes,
  sizeOption,
} from './limits.js';

/** Default cap on everything under a disk root, in bytes (256 MiB). */
export const DEFAULT_DISK_MAX_TOTAL_BYTES = 256 * 1024 * 1024;

function byPath<T extends { path: string }>(a: T, b: T): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

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
  readonly #confined: ConfinedRoot;
  readonly #maxFileBytes: number;
  readonly #maxTotalBytes: number;
  readonly #hooks: DiskBackendHooks;
  #used: number | undefined;

  constructor(options: DiskBackendOptions) {
    this.#confined = new ConfinedRoot(options.root);
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
    return this.#confined.real;
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

  /** Walks the files under a verified directory (see {@link walkFiles}). */
  #walk(path: string, host: string, maxDepth: number, budget: SearchBudget, visit: FileVisitor) {
    const hook = this.#hooks.beforeOpen;
    return walkFiles(
      this.#confined,
      {
        path,
        host,
        maxDepth,
        budget,
        ...(hook ? { beforeEntry: (p: string) => hook(p, 'walk') } : {}),
      },
      visit,
    );
  }

  async #usage(): Promise<number> {
    if (this.#used !== undefined) return this.#used;
    let total = 0;
    await this.#walk(
      ROOT,
      this.#confined.real,
      Number.POSITIVE_INFINITY,
      new SearchBudget(),
      (dir, name) => {
        const st = lstatSync(this.#confined.inDir(dir, name), { throwIfNoEntry: false });
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
      dir = await this.#confined.openDir(p, false);
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
      const entries = await fsp.readdir(this.#confined.at(dir), { withFileTypes: true });
      const out: FileInfo[] = [];
      for (const entry of entries) {
        const child = childPath(p, entry.name);
        if (!this.#validName(child)) continue;
        const at = this.#confined.at(dir, entry.name);
        let st = await fsp.lstat(at).catch(() => undefined);
        if (st?.isSymbolicLink()) {
          const real = await fsp.realpath(at).catch(() => undefined);
          st =
            real && this.#confined.contains(real)
              ? await fsp.stat(real).catch(() => undefined)
              : undefined;
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
      dir = await this.#confined.openParent(p, false);
    } catch (err) {
      if (err instanceof FileError && err.code === 'not_found') return undefined;
      throw err;
    }
    try {
      const at = this.#confined.at(dir, baseName(p));
      let st = await fsp.lstat(at).catch(() => undefined);
      if (st?.isSymbolicLink()) {
        const real = await this.#confined.resolveLink(at, p);
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
    const handle = await this.#confined.openForRead(p, () => this.#hooks.beforeOpen?.(p, 'read'));
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
    const dir = await this.#confined.openParent(p, true);
    const name = baseName(p);
    let handle: FileHandle | undefined;
    let created = false;
    try {
      await this.#hooks.beforeOpen?.(p, 'write');
      try {
        handle = await fsp.open(this.#confined.at(dir, name), CREATE_FLAGS, 0o644);
        created = true;
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw err;
        handle = await this.#confined.openExistingForWrite(dir, name, p);
      }
      await this.#confined.verify(handle, p);
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
      if (created) await fsp.unlink(this.#confined.at(dir, name)).catch(() => undefined);
      await closeQuietly(dir.handle);
    }
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    if (p === ROOT) throw new FileError('is_directory', `${ROOT} is a directory`);
    const segs = pathSegments(parentPath(p));
    let chain: OpenDir[];
    try {
      chain = await this.#confined.openChain(parentPath(p), false);
    } catch (err) {
      if (err instanceof NotADirectory) throw notFound(p);
      throw err;
    }
    try {
      const dir = chain[chain.length - 1] as OpenDir;
      await this.#hooks.beforeOpen?.(p, 'delete');
      const at = this.#confined.at(dir, baseName(p));
      const st = await fsp.lstat(at).catch(() => undefined);
      if (!st) throw notFound(p);
      if (st.isDirectory()) {
        throw new FileError('is_directory', `${p} is a directory; delete the files inside it`);
      }
      if (st.isSymbolicLink()) {
        const real = await fsp.realpath(at).catch(() => undefined);
        if (real !== undefined && !this.#confined.contains(real)) throw outside(p);
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
          await fsp.rmdir(this.#confined.at(chain[i - 1] as OpenDir, segs[i - 1] as string));
        } catch {
          break;
        }
      }
    } finally {
      await Promise.all(chain.map((d) => closeQuietly(d.handle)));
    }
  }

  async glob(pattern: string, base = ROOT): Promise<FileInfo[]> {
    const requested = normalizePath(base);
    const split = splitGlob(pattern, requested);
    const glob = compileGlob(split.pattern);
    let host: string;
    try {
      host = await this.#confined.dirHost(split.base);
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
      host = await this.#confined.dirHost(base);
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
        target === undefined
          ? reader.read(this.#confined.inDir(dir, name))
          : reader.read(target, target);
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
