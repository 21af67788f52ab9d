import type { Clock } from '../../../../core/clock.js';
import { TasklineError } from '../../../../core/errors.js';
import type { TableSpec } from '../../../../core/sql/tables.js';
import {
  type FileBackend,
  FileError,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
} from '../backend.js';
import { compileGlob, createPathFilter, splitGlob } from '../glob.js';
import { normalizePath, relativeTo } from '../paths.js';
import { checkMaxCount, compileSearcher, SearchBudget } from '../search.js';
import {
  checkSizeCaps,
  checkTextContent,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  formatBytes,
  sizeOption,
} from './limits.js';

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

/** The half-open key range [lo, hi) that holds every path strictly below directory `dir`. */
export interface PathRange {
  lo: string;
  hi: string;
}

/** Key range of the paths below `dir` ("/a" gives ["/a/", "/a0")), for indexed SQL scans. */
export function rangeBelow(dir: string): PathRange {
  const lo = dir === '/' ? '/' : dir + '/';
  // "/" + 1 is "0": every path that starts with `lo` sorts before `hi` in code point order.
  return { lo, hi: lo.slice(0, -1) + '0' };
}

/** The ancestors of a path, outermost first, without "/" ("/a/b/c" gives ["/a", "/a/b"]). */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  let at = path.indexOf('/', 1);
  while (at !== -1) {
    out.push(path.slice(0, at));
    at = path.indexOf('/', at + 1);
  }
  return out;
}

/** Orders paths the same way on every store: by UTF-16 code unit, like `Array.prototype.sort`. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// The store backend, minus its storage
// ---------------------------------------------------------------------------------------------

/** The file table, the same on SQLite and PostgreSQL: one row per tenant, user and path. */
export const FILES_TABLE: TableSpec = {
  columns: {
    tenant: 'text',
    user_id: 'text',
    path: 'key',
    size: 'integer',
    modified_at: 'bigint',
    content: 'text',
  },
  primaryKey: ['tenant', 'user_id', 'path'],
};

/** Options every store takes: whose files, how much of them, and which clock stamps them. */
export interface StoreNamespaceOptions {
  /** Tenant (organisation, deployment); files of one tenant are invisible to every other. */
  tenant: string;
  /** User within the tenant; files of one user are invisible to every other. */
  user: string;
  /** Largest file, in UTF-8 bytes (default 5 MiB, as for every backend). */
  maxFileBytes?: number;
  /** Largest total of this tenant/user's files, in UTF-8 bytes (default 64 MiB). */
  maxTotalBytes?: number;
  /** Source of `modifiedAt`; the wall clock by default. */
  clock?: Pick<Clock, 'now'>;
}

/** A stored file's metadata row. */
export interface StoreMetaRow {
  path: string;
  size: number;
  modifiedAt: number;
}

/** A stored file's row including its text. */
export interface StoreContentRow extends StoreMetaRow {
  content: string;
}

/** What a store reads inside its write transaction so {@link checkStoreWrite} can decide. */
export interface StoreWriteSnapshot {
  /** Some file lives below the target path, i.e. the target is a directory. */
  isDirectory: boolean;
  /** The nearest ancestor of the target that is a file, if any. */
  fileAncestor: string | undefined;
  /** Size of the file being replaced, if it exists. */
  oldSize: number | undefined;
  /** Current total bytes of the namespace. */
  totalBytes: number;
}

/** Decides, inside a store's write transaction, whether a write may go ahead. */
export function checkStoreWrite(
  path: string,
  size: number,
  snap: StoreWriteSnapshot,
  caps: { maxFileBytes: number; maxTotalBytes: number },
): void {
  if (snap.isDirectory) {
    throw new FileError('is_directory', `${path} is a directory; choose a file name inside it`);
  }
  if (snap.fileAncestor !== undefined) {
    throw new FileError(
      'invalid_path',
      `${snap.fileAncestor} is a file, so ${path} cannot be created inside it`,
    );
  }
  checkSizeCaps(path, size, snap.oldSize ?? 0, snap.totalBytes, caps);
}

function namespacePart(name: 'tenant' | 'user', value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 256) {
    throw new TasklineError(
      'invalid_argument',
      `Give the store's ${name} as a string of 1-256 characters.`,
    );
  }
  if (value.includes('\u0000')) {
    throw new TasklineError('invalid_argument', `The store's ${name} cannot contain NUL.`);
  }
  return value;
}

const GREP_PAGE = 64;

/**
 * The FileBackend semantics shared by the SQLite and Postgres stores: implicit directories
 * derived from file paths, caps, listing, glob and grep. Subclasses only move rows.
 */
export abstract class StoreFileBackend implements FileBackend {
  abstract readonly kind: string;
  /** Tenant this store's files belong to. */
  readonly tenant: string;
  /** User this store's files belong to. */
  readonly user: string;
  /** Per-file and per-namespace caps, in bytes. */
  readonly caps: { readonly maxFileBytes: number; readonly maxTotalBytes: number };
  protected readonly clock: Pick<Clock, 'now'>;

  protected constructor(options: StoreNamespaceOptions) {
    this.tenant = namespacePart('tenant', options.tenant);
    this.user = namespacePart('user', options.user);
    this.caps = {
      maxFileBytes: sizeOption('maxFileBytes', options.maxFileBytes, DEFAULT_MAX_FILE_BYTES),
      maxTotalBytes: sizeOption('maxTotalBytes', options.maxTotalBytes, DEFAULT_MAX_TOTAL_BYTES),
    };
    this.clock = options.clock ?? { now: () => Date.now() };
  }

  /** Metadata of the file at exactly `path`. */
  protected abstract getMeta(path: string): Promise<StoreMetaRow | undefined>;
  /** The file at exactly `path`, with its text. */
  protected abstract getFile(path: string): Promise<StoreContentRow | undefined>;
  /** Metadata of every file in `range`, in any order. */
  protected abstract listMeta(range: PathRange): Promise<StoreMetaRow[]>;
  /** Whether any file lies in `range`. */
  protected abstract hasAny(range: PathRange): Promise<boolean>;
  /**
   * Up to `limit` files in `range` with paths after `after`, in path order, optionally only
   * those whose text contains `literal`.
   */
  protected abstract contentPage(
    range: PathRange,
    after: string,
    literal: string | undefined,
    limit: number,
  ): Promise<StoreContentRow[]>;
  /** Upserts a file atomically after calling {@link checkStoreWrite} in the same transaction. */
  protected abstract putChecked(row: StoreContentRow): Promise<void>;
  /** Removes the file at exactly `path`; false if there was none. */
  protected abstract remove(path: string): Promise<boolean>;

  async ls(path: string): Promise<FileInfo[]> {
    const dir = normalizePath(path);
    const file = dir === '/' ? undefined : await this.getMeta(dir);
    if (file) return [toInfo(file)];
    const range = rangeBelow(dir);
    const rows = await this.listMeta(range);
    if (rows.length === 0 && dir !== '/') {
      throw new FileError('not_found', `${dir} does not exist`);
    }
    const dirs = new Set<string>();
    const out: FileInfo[] = [];
    for (const row of rows) {
      const slash = row.path.indexOf('/', range.lo.length);
      if (slash === -1) out.push(toInfo(row));
      else dirs.add(row.path.slice(0, slash));
    }
    for (const d of dirs) out.push({ path: d, isDir: true });
    return out.sort((a, b) => comparePaths(a.path, b.path));
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const p = normalizePath(path);
    if (p === '/') return { path: '/', isDir: true };
    const row = await this.getMeta(p);
    if (row) return toInfo(row);
    return (await this.isDir(p)) ? { path: p, isDir: true } : undefined;
  }

  async read(path: string): Promise<string> {
    const p = normalizePath(path);
    const row = p === '/' ? undefined : await this.getFile(p);
    if (!row) throw await this.missing(p);
    if (row.size > this.caps.maxFileBytes) {
      throw new FileError(
        'too_large',
        `${p} is ${formatBytes(row.size)}, over the ${formatBytes(this.caps.maxFileBytes)} ` +
          'limit per file; grep it instead',
      );
    }
    return row.content;
  }

  async write(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    const text = checkTextContent(content);
    if (p === '/')
      throw new FileError('is_directory', '/ is a directory; choose a file name inside it');
    const size = Buffer.byteLength(text, 'utf8');
    // The per-file cap needs no transaction; the total is checked again inside it.
    checkSizeCaps(p, size, 0, 0, { ...this.caps, maxTotalBytes: Number.POSITIVE_INFINITY });
    await this.putChecked({ path: p, content: text, size, modifiedAt: this.clock.now() });
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    if (p !== '/' && (await this.remove(p))) return;
    throw await this.missing(p);
  }

  async glob(pattern: string, base = '/'): Promise<FileInfo[]> {
    const split = splitGlob(pattern, base);
    const glob = compileGlob(split.pattern);
    const rows = await this.listMeta(rangeBelow(split.base));
    if (rows.length === 0 && split.base !== '/') {
      // Same answers as the other backends: a missing base the caller named is not_found;
      // a base that is a file, or a prefix taken from the pattern, simply matches nothing.
      const named = split.base === normalizePath(base);
      if (named && !(await this.getMeta(split.base))) {
        throw new FileError('not_found', `${split.base} does not exist`);
      }
      return [];
    }
    return rows
      .filter((r) => glob.matches(relativeTo(split.base, r.path)))
      .map(toInfo)
      .sort((a, b) => comparePaths(a.path, b.path));
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const searcher = compileSearcher(pattern, { regex: options.regex });
    const limit = checkMaxCount(options.maxCount);
    const root = normalizePath(options.path ?? '/');
    const keep = createPathFilter(options.glob, root);
    const budget = new SearchBudget(options.signal, options.onSkippedLine);
    budget.check();
    const out: GrepMatch[] = [];
    const file = root === '/' ? undefined : await this.getFile(root);
    if (file) {
      if (keep(file.path))
        out.push(...(await searcher.search(file.path, file.content, limit, budget)));
      return out;
    }
    if (!(await this.isDir(root))) throw new FileError('not_found', `${root} does not exist`);
    const range = rangeBelow(root);
    // Let the database skip files without the text every match needs (the literal, or the
    // longest piece a regex requires on its own).
    const mustContain = searcher.literal ?? soleRequiredPiece(searcher.required);
    let after = '';
    for (;;) {
      const page = await this.contentPage(range, after, mustContain, GREP_PAGE);
      for (const row of page) {
        if (!keep(row.path)) continue;
        const hits = await searcher.search(row.path, row.content, limit - out.length, budget);
        out.push(...hits);
        if (out.length >= limit) return out;
        await budget.step();
      }
      if (page.length < GREP_PAGE) return out;
      after = page[page.length - 1]!.path;
    }
  }

  private async isDir(p: string): Promise<boolean> {
    return p === '/' || (await this.hasAny(rangeBelow(p)));
  }

  private async missing(p: string): Promise<FileError> {
    if (await this.isDir(p)) {
      return new FileError('is_directory', `${p} is a directory, not a file`);
    }
    return new FileError('not_found', `${p} does not exist`);
  }
}

function toInfo(row: StoreMetaRow): FileInfo {
  return { path: row.path, isDir: false, size: row.size, modifiedAt: row.modifiedAt };
}

/** The longest piece of text a pattern requires by itself (a one-piece group), if any. */
function soleRequiredPiece(required: readonly (readonly string[])[]): string | undefined {
  let best: string | undefined;
  for (const group of required) {
    const piece = group.length === 1 ? group[0] : undefined;
    if (piece !== undefined && piece.length > (best?.length ?? 0)) best = piece;
  }
  return best;
}
