import { TasklineError } from '../../../../core/errors.js';
import {
  type FileBackend,
  FileError,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
  type SkippedLine,
} from '../backend.js';
import { compileGlob, createPathFilter, splitGlob } from '../glob.js';
import { isWithin, normalizePath, ROOT, relativeTo } from '../paths.js';
import { checkMaxCount } from '../search.js';

/** Options for {@link CompositeBackend}. */
export interface CompositeBackendOptions {
  /** Where every path not under a route goes. */
  default: FileBackend;
  /** Path prefix (e.g. "/memories/") to the backend that owns everything under it. */
  routes: Record<string, FileBackend>;
}

interface Mount {
  path: string;
  backend: FileBackend;
}

function isNotFound(err: unknown): boolean {
  return err instanceof FileError && err.code === 'not_found';
}

/**
 * Several backends behind one tree: each path goes to the route with the longest matching
 * prefix (e.g. "/memories/" to a persistent store, the rest to memory). As in deepagents'
 * CompositeBackend, a routed backend sees paths relative to its route — "/memories/a.md" is
 * "/a.md" in the store routed at "/memories/", and `{ '/docs/': new DiskBackend({ root:
 * './knowledge' }) }` serves ./knowledge/refunds.md as "/docs/refunds.md" — while listings,
 * search results and error messages name the full path the model used. ls, glob and grep
 * merge across routes; a mount point always exists and appears in a listing of its parent;
 * files a backend holds under another (nested) route are hidden.
 */
export class CompositeBackend implements FileBackend {
  readonly kind = 'composite';
  readonly #default: FileBackend;
  readonly #mounts: Mount[];

  constructor(options: CompositeBackendOptions) {
    this.#default = options.default;
    this.#mounts = Object.entries(options.routes).map(([prefix, backend]) => {
      const path = normalizePath(prefix);
      if (path === ROOT) {
        throw new TasklineError(
          'invalid_argument',
          'a route cannot be "/"; pass that backend as `default` instead',
        );
      }
      return { path, backend };
    });
    // Longest first, so the first mount that contains a path is its owner.
    this.#mounts.sort((a, b) => b.path.length - a.path.length);
    const seen = new Set<string>();
    for (const m of this.#mounts) {
      if (seen.has(m.path)) {
        throw new TasklineError('invalid_argument', `route ${m.path} is given twice`);
      }
      seen.add(m.path);
    }
  }

  /** The mount owning `path` (undefined: the default backend). */
  #mountOf(path: string): Mount | undefined {
    return this.#mounts.find((m) => isWithin(path, m.path));
  }

  /** True when `path` belongs to the area served by `owner` (a mount, or the default). */
  #ownedBy(path: string, owner: Mount | undefined): boolean {
    return this.#mountOf(path) === owner;
  }

  /** Mount points strictly below `dir`. */
  #mountsBelow(dir: string): Mount[] {
    return this.#mounts.filter((m) => m.path !== dir && isWithin(m.path, dir));
  }

  #isMountPoint(path: string): boolean {
    return this.#mounts.some((m) => m.path === path);
  }

  /** Runs one call on the backend owning `path`, with the path as that backend sees it. */
  async #routed<T>(
    path: string,
    fn: (backend: FileBackend, inner: string) => Promise<T>,
  ): Promise<T> {
    const owner = this.#mountOf(path);
    try {
      return await fn(owner?.backend ?? this.#default, innerPath(path, owner));
    } catch (err) {
      throw outerError(err, owner);
    }
  }

  async ls(path: string): Promise<FileInfo[]> {
    const p = normalizePath(path);
    const owner = this.#mountOf(p);
    const below = this.#mountsBelow(p);
    let entries: FileInfo[];
    try {
      entries = await this.#routed(p, (b, inner) => b.ls(inner));
    } catch (err) {
      if (!isNotFound(err) || (below.length === 0 && owner?.path !== p)) throw err;
      entries = [];
    }
    const out = new Map<string, FileInfo>();
    for (const e of entries) {
      const outer = { ...e, path: outerPath(e.path, owner) };
      if (this.#ownedBy(outer.path, owner)) out.set(outer.path, outer);
    }
    for (const m of below) {
      const first = relativeTo(p, m.path).split('/')[0] ?? '';
      const child = (p === ROOT ? '' : p) + '/' + first;
      out.set(child, { path: child, isDir: true });
    }
    return [...out.values()].sort((a, b) => comparePaths(a.path, b.path));
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const p = normalizePath(path);
    if (this.#isMountPoint(p)) return { path: p, isDir: true };
    const info = await this.#routed(p, (b, inner) => b.stat(inner));
    if (info) return { ...info, path: p };
    return this.#mountsBelow(p).length > 0 ? { path: p, isDir: true } : undefined;
  }

  #refuseDirectory(p: string): void {
    if (this.#isMountPoint(p) || (p !== ROOT && this.#mountsBelow(p).length > 0)) {
      throw new FileError('is_directory', `${p} is a directory, not a file`);
    }
  }

  async read(path: string): Promise<string> {
    const p = normalizePath(path);
    this.#refuseDirectory(p);
    return this.#routed(p, (b, inner) => b.read(inner));
  }

  async write(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    this.#refuseDirectory(p);
    return this.#routed(p, (b, inner) => b.write(inner, content));
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    this.#refuseDirectory(p);
    return this.#routed(p, (b, inner) => b.delete(inner));
  }

  /**
   * Runs `fn` on every area that can hold paths under `base` — its owner, searched from
   * `base`, and each mount below it, searched whole — and returns what each found that it
   * owns, with full paths. not_found only if no area knows `base`.
   */
  async #collect<T extends { path: string }>(
    base: string,
    fn: (
      backend: FileBackend,
      from: string,
      whole: boolean,
      outer: (path: string) => string,
    ) => Promise<T[]>,
  ): Promise<T[]> {
    const owner = this.#mountOf(base);
    const areas: Array<{ mount: Mount | undefined; from: string; whole: boolean }> = [
      { mount: owner, from: innerPath(base, owner), whole: false },
      ...this.#mountsBelow(base).map((mount) => ({ mount, from: ROOT, whole: true })),
    ];
    const results = await Promise.all(
      areas.map(async ({ mount, from, whole }) => {
        try {
          const items = await fn(mount?.backend ?? this.#default, from, whole, (path) =>
            outerPath(path, mount),
          );
          return items
            .map((item) => ({ ...item, path: outerPath(item.path, mount) }))
            .filter((item) => this.#ownedBy(item.path, mount));
        } catch (err) {
          if (isNotFound(err) && (areas.length > 1 || mount?.path === base)) return [];
          throw outerError(err, mount);
        }
      }),
    );
    return results.flat();
  }

  async glob(pattern: string, base = ROOT): Promise<FileInfo[]> {
    const requested = normalizePath(base);
    const split = splitGlob(pattern, requested);
    const matcher = compileGlob(split.pattern);
    const found = await this.#collect(split.base, async (b, from, whole) =>
      // A mount below the base is listed whole and matched here, against full paths.
      whole ? b.glob(ALL_FILES, ROOT) : b.glob(split.pattern, from),
    );
    const unique = new Map(
      found.filter((f) => matcher.matches(relativeTo(split.base, f.path))).map((f) => [f.path, f]),
    );
    return [...unique.values()].sort((a, b) => comparePaths(a.path, b.path));
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const limit = checkMaxCount(options.maxCount);
    const base = normalizePath(options.path ?? ROOT);
    const keep = createPathFilter(options.glob, base);
    const glob = options.glob;
    // A basename glob ("*.md") means the same to every area; a relative one means the same
    // to the area searched from the base. Anything else is matched here on full paths.
    const passGlob = (whole: boolean) =>
      glob === undefined || glob === '' || !glob.includes('/') || (!whole && !glob.startsWith('/'));
    const report = options.onSkippedLine;
    const found = await this.#collect(base, (b, from, whole, outer) => {
      // Skipped lines are reported under the full path, like hits, and only where hits would be.
      const onSkippedLine =
        report &&
        ((s: SkippedLine) => {
          const path = outer(s.path);
          if (keep(path)) report({ ...s, path });
        });
      return passGlob(whole)
        ? b.grep(pattern, { ...options, path: from, onSkippedLine })
        : b.grep(pattern, {
            ...options,
            path: from,
            glob: undefined,
            maxCount: undefined,
            onSkippedLine,
          });
    });
    const hits = found.filter((h) => keep(h.path));
    hits.sort((a, b) => comparePaths(a.path, b.path) || a.line - b.line);
    return hits.slice(0, limit);
  }
}

/** Every file under a base. */
const ALL_FILES = '**';

/** A full path as the backend routed at `owner` sees it ("/memories/a.md" → "/a.md"). */
function innerPath(path: string, owner: Mount | undefined): string {
  if (!owner) return path;
  return path === owner.path ? ROOT : path.slice(owner.path.length);
}

/** A routed backend's path as the model sees it ("/a.md" → "/memories/a.md"). */
function outerPath(path: string, owner: Mount | undefined): string {
  if (!owner) return path;
  return path === ROOT ? owner.path : owner.path + path;
}

/** Paths in a routed backend's error message, rewritten to the full paths the model used. */
function outerError(err: unknown, owner: Mount | undefined): unknown {
  if (!owner || !(err instanceof FileError)) return err;
  const message = err.message.replace(
    /(^|[\s"'`(])(\/[^\s"'`(),;]*)/g,
    (_, lead: string, path: string) => lead + outerPath(path, owner),
  );
  return message === err.message ? err : new FileError(err.code, message);
}

function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
