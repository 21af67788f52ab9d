import { TasklineError } from '../../../core/errors.js';
import {
  type FileBackend,
  FileError,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
} from '../backend.js';
import { splitGlob } from '../glob.js';
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
 * prefix (e.g. "/memories/" to a persistent store, the rest to memory). Routed backends see
 * the full virtual path ("/memories/a.md"), so errors name the path the model used and one
 * store can serve several prefixes. ls, glob and grep merge across routes; a mount point
 * always exists and appears in a listing of its parent; files a backend holds under another
 * route's prefix are hidden.
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

  #backendOf(path: string): FileBackend {
    return this.#mountOf(path)?.backend ?? this.#default;
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

  async ls(path: string): Promise<FileInfo[]> {
    const p = normalizePath(path);
    const owner = this.#mountOf(p);
    const below = this.#mountsBelow(p);
    let entries: FileInfo[];
    try {
      entries = await (owner?.backend ?? this.#default).ls(p);
    } catch (err) {
      if (!isNotFound(err) || (below.length === 0 && owner?.path !== p)) throw err;
      entries = [];
    }
    const out = new Map<string, FileInfo>();
    for (const e of entries) if (this.#ownedBy(e.path, owner)) out.set(e.path, e);
    for (const m of below) {
      const first = relativeTo(p, m.path).split('/')[0] ?? '';
      const child = (p === ROOT ? '' : p) + '/' + first;
      out.set(child, { path: child, isDir: true });
    }
    return [...out.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const p = normalizePath(path);
    if (this.#isMountPoint(p)) return { path: p, isDir: true };
    const info = await this.#backendOf(p).stat(p);
    if (info) return info;
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
    return this.#backendOf(p).read(p);
  }

  async write(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    this.#refuseDirectory(p);
    return this.#backendOf(p).write(p, content);
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    this.#refuseDirectory(p);
    return this.#backendOf(p).delete(p);
  }

  /** The owners that can hold files under `base`: its own owner plus mounts below it. */
  #areas(base: string): Array<Mount | undefined> {
    return [this.#mountOf(base), ...this.#mountsBelow(base)];
  }

  /** Runs `fn` on every area under `base`; not_found only if no area knows `base`. */
  async #collect<T extends { path: string }>(
    base: string,
    fn: (backend: FileBackend, owner: Mount | undefined) => Promise<T[]>,
  ): Promise<T[]> {
    const areas = this.#areas(base);
    const results = await Promise.all(
      areas.map(async (owner) => {
        try {
          const items = await fn(owner?.backend ?? this.#default, owner);
          return items.filter((item) => this.#ownedBy(item.path, owner));
        } catch (err) {
          if (isNotFound(err) && (areas.length > 1 || owner?.path === base)) return [];
          throw err;
        }
      }),
    );
    return results.flat();
  }

  async glob(pattern: string, base = ROOT): Promise<FileInfo[]> {
    const requested = normalizePath(base);
    const split = splitGlob(pattern, requested);
    const found = await this.#collect(split.base, (b) => b.glob(split.pattern, split.base));
    const unique = new Map(found.map((f) => [f.path, f]));
    return [...unique.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const limit = checkMaxCount(options.maxCount);
    const base = normalizePath(options.path ?? ROOT);
    // Every area sees full paths and the same base, so a relative `glob` means the same to all.
    const found = await this.#collect(base, (b) => b.grep(pattern, { ...options, path: base }));
    found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
    return found.slice(0, limit);
  }
}
