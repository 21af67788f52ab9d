import type { Clock } from '../../../../core/clock.js';
import {
  type FileBackend,
  FileError,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
} from '../backend.js';
import { compileGlob, createPathFilter, splitGlob } from '../glob.js';
import { isWithin, normalizePath, parentPath, ROOT, relativeTo } from '../paths.js';
import { checkMaxCount, compileSearcher, SearchBudget } from '../search.js';
import {
  checkSizeCaps,
  checkTextContent,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  sizeOption,
} from './limits.js';

/** Options for {@link MemoryBackend}. */
export interface MemoryBackendOptions {
  /** Largest file, in UTF-8 bytes (default 5 MiB). */
  maxFileBytes?: number;
  /** Largest total across all files, in bytes (default 64 MiB). */
  maxTotalBytes?: number;
  /** Source of `modifiedAt` times (default: the wall clock). */
  clock?: Pick<Clock, 'now'>;
}

interface Entry {
  content: string;
  bytes: number;
  modifiedAt: number;
}

/** Ancestors of a normalized path, nearest first, excluding the root. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let p = parentPath(path); p !== ROOT; p = parentPath(p)) out.push(p);
  return out;
}

/**
 * Files kept in process memory: one instance per session (or sub-agent), gone when dropped.
 * Directories are implicit (they exist while a file is under them). Size-capped per file
 * and in total.
 */
export class MemoryBackend implements FileBackend {
  readonly kind = 'memory';
  readonly #files = new Map<string, Entry>();
  /** Implicit directories and how many files lie under each. */
  readonly #dirs = new Map<string, number>();
  #sorted: string[] | undefined;
  #used = 0;
  readonly #maxFileBytes: number;
  readonly #maxTotalBytes: number;
  readonly #clock: Pick<Clock, 'now'>;

  constructor(options: MemoryBackendOptions = {}) {
    this.#maxFileBytes = sizeOption('maxFileBytes', options.maxFileBytes, DEFAULT_MAX_FILE_BYTES);
    this.#maxTotalBytes = sizeOption(
      'maxTotalBytes',
      options.maxTotalBytes,
      DEFAULT_MAX_TOTAL_BYTES,
    );
    this.#clock = options.clock ?? { now: () => Date.now() };
  }

  /** Bytes currently stored, for callers that show usage. */
  get usedBytes(): number {
    return this.#used;
  }

  #sortedPaths(): string[] {
    this.#sorted ??= [...this.#files.keys()].sort();
    return this.#sorted;
  }

  #isDir(path: string): boolean {
    return path === ROOT || this.#dirs.has(path);
  }

  #info(path: string, entry: Entry): FileInfo {
    return { path, isDir: false, size: entry.bytes, modifiedAt: entry.modifiedAt };
  }

  async ls(path: string): Promise<FileInfo[]> {
    const dir = normalizePath(path);
    const file = this.#files.get(dir);
    if (file) return [this.#info(dir, file)];
    if (!this.#isDir(dir)) throw new FileError('not_found', `${dir} does not exist`);
    const seen = new Map<string, FileInfo>();
    for (const p of this.#sortedPaths()) {
      if (p === dir || !isWithin(p, dir)) continue;
      const rel = relativeTo(dir, p);
      const slash = rel.indexOf('/');
      const child = (dir === ROOT ? '' : dir) + '/' + (slash < 0 ? rel : rel.slice(0, slash));
      if (seen.has(child)) continue;
      const entry = this.#files.get(child);
      seen.set(child, entry ? this.#info(child, entry) : { path: child, isDir: true });
    }
    return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const p = normalizePath(path);
    const file = this.#files.get(p);
    if (file) return this.#info(p, file);
    return this.#isDir(p) ? { path: p, isDir: true } : undefined;
  }

  async read(path: string): Promise<string> {
    const p = normalizePath(path);
    const file = this.#files.get(p);
    if (file) return file.content;
    if (this.#isDir(p)) throw new FileError('is_directory', `${p} is a directory, not a file`);
    throw new FileError('not_found', `${p} does not exist`);
  }

  async write(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    const text = checkTextContent(content);
    if (this.#isDir(p)) {
      throw new FileError('is_directory', `${p} is a directory; choose a file name inside it`);
    }
    const parents = ancestors(p);
    for (const a of parents) {
      if (this.#files.has(a)) {
        throw new FileError('invalid_path', `${a} is a file, so ${p} cannot be created inside it`);
      }
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    const previous = this.#files.get(p);
    checkSizeCaps(p, bytes, previous?.bytes ?? 0, this.#used, {
      maxFileBytes: this.#maxFileBytes,
      maxTotalBytes: this.#maxTotalBytes,
    });
    this.#files.set(p, { content: text, bytes, modifiedAt: this.#clock.now() });
    this.#used += bytes - (previous?.bytes ?? 0);
    if (!previous) {
      this.#sorted = undefined;
      for (const a of parents) this.#dirs.set(a, (this.#dirs.get(a) ?? 0) + 1);
    }
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    const file = this.#files.get(p);
    if (!file) {
      if (this.#isDir(p)) {
        throw new FileError('is_directory', `${p} is a directory; delete the files inside it`);
      }
      throw new FileError('not_found', `${p} does not exist`);
    }
    this.#files.delete(p);
    this.#used -= file.bytes;
    this.#sorted = undefined;
    for (const a of ancestors(p)) {
      const n = (this.#dirs.get(a) ?? 1) - 1;
      if (n <= 0) this.#dirs.delete(a);
      else this.#dirs.set(a, n);
    }
  }

  async glob(pattern: string, base = ROOT): Promise<FileInfo[]> {
    const split = splitGlob(pattern, base);
    const glob = compileGlob(split.pattern);
    if (!this.#isDir(split.base)) {
      if (this.#files.has(split.base)) return [];
      if (split.base === normalizePath(base)) {
        throw new FileError('not_found', `${split.base} does not exist`);
      }
      return []; // a literal prefix taken from the pattern: simply nothing matches
    }
    const out: FileInfo[] = [];
    for (const p of this.#sortedPaths()) {
      if (p === split.base || !isWithin(p, split.base)) continue;
      if (!glob.matches(relativeTo(split.base, p))) continue;
      const entry = this.#files.get(p);
      if (entry) out.push(this.#info(p, entry));
    }
    return out;
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const searcher = compileSearcher(pattern, { regex: options.regex });
    const limit = checkMaxCount(options.maxCount);
    const base = normalizePath(options.path ?? ROOT);
    const filter = createPathFilter(options.glob, base);
    const budget = new SearchBudget(options.signal, options.onSkippedLine);
    budget.check();
    let paths: string[];
    if (this.#files.has(base)) paths = [base];
    else if (this.#isDir(base)) paths = this.#sortedPaths().filter((p) => isWithin(p, base));
    else throw new FileError('not_found', `${base} does not exist`);
    const out: GrepMatch[] = [];
    for (const p of paths) {
      if (out.length >= limit) break;
      if (!filter(p)) continue;
      const entry = this.#files.get(p);
      if (!entry) continue;
      const hits = await searcher.search(p, entry.content, limit - out.length, budget);
      for (const h of hits) out.push(h);
      await budget.step();
    }
    return out;
  }
}
