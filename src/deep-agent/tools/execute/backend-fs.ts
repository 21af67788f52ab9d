/**
 * A POSIX-like file system over a taskline {@link FileBackend}, in the shape just-bash's
 * `IFileSystem` takes, so a sandboxed shell sees and changes exactly the files the file tools
 * do, on every backend. Paths are the backends' virtual paths ("/notes.md"); `..` at the root
 * stays at the root (as in a real shell) and nothing else can lead out, because every call
 * ends in the backend, which is confined. Text only: content that is not UTF-8 is refused
 * with EINVAL. Symbolic and hard links are refused (EPERM). Empty directories made with
 * `mkdir` exist for this sandbox only (backends keep directories implicit).
 */
import { isUtf8 } from 'node:buffer';
import { type FileBackend, FileError, type FileInfo } from '../files/backend.js';
import { normalizePath } from '../files/paths.js';

/** Encodings just-bash passes to read and write calls. */
export type FsEncoding = 'utf8' | 'utf-8' | 'ascii' | 'binary' | 'base64' | 'hex' | 'latin1';

/** What `stat` answers, in just-bash's shape. */
export interface FsStatLike {
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
  mode: number;
  size: number;
  mtime: Date;
}

/** One directory entry with its type, in just-bash's shape. */
export interface FsDirent {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

type EncodingArg = FsEncoding | { encoding?: FsEncoding | null } | null | undefined;

const FILE_MODE = 0o644;
const DIR_MODE = 0o755;
/** The only device a shell script commonly writes to; writes vanish, reads are empty. */
const DEV_NULL = '/dev/null';

/** An errno-style error: just-bash's commands read the code at the start of the message. */
export class FsError extends Error {
  readonly code: string;
  constructor(code: string, text: string, op: string, path: string, detail?: string) {
    super(`${code}: ${text}, ${op} '${path}'${detail ? ` (${detail})` : ''}`);
    this.code = code;
  }
}

const ERRNO: Record<string, [string, string]> = {
  not_found: ['ENOENT', 'no such file or directory'],
  is_directory: ['EISDIR', 'illegal operation on a directory'],
  exists: ['EEXIST', 'file already exists'],
  too_large: ['EFBIG', 'file too large'],
  outside_root: ['EACCES', 'permission denied'],
  invalid_path: ['EINVAL', 'invalid argument'],
  binary: ['EINVAL', 'invalid argument'],
};

function encodingOf(arg: EncodingArg): FsEncoding | null | undefined {
  if (arg === null || arg === undefined) return undefined;
  return typeof arg === 'string' ? arg : arg.encoding;
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The last segment of a normalized path. */
function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

function within(path: string, dir: string): boolean {
  return dir === '/' ? path !== '/' : path.startsWith(`${dir}/`);
}

/**
 * The just-bash file system on a taskline backend (see the module comment). One per sandbox;
 * it remembers the sandbox's empty directories and `chmod` modes.
 */
export class BackendFs {
  readonly #backend: FileBackend;
  readonly #dirs = new Set<string>();
  readonly #modes = new Map<string, number>();

  constructor(backend: FileBackend) {
    this.#backend = backend;
  }

  /** The backend the shell works on. */
  get backend(): FileBackend {
    return this.#backend;
  }

  /** Runs a backend call, turning its FileError into the errno error a shell expects. */
  async #call<T>(op: string, path: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof FileError) {
        const [code, text] = ERRNO[err.code] ?? ['EIO', 'input/output error'];
        throw new FsError(code, text, op, path, `${err.code}: ${err.message}`);
      }
      throw err;
    }
  }

  /** A shell path as a backend path; `..` above the root stays at the root. */
  #path(op: string, path: string): string {
    if (typeof path !== 'string' || path === '') {
      throw new FsError('ENOENT', 'no such file or directory', op, String(path));
    }
    const segments: string[] = [];
    for (const s of path.split('/')) {
      if (s === '' || s === '.') continue;
      if (s === '..') segments.pop();
      else segments.push(s);
    }
    try {
      return normalizePath(`/${segments.join('/')}`);
    } catch (err) {
      if (err instanceof FileError) throw new FsError('EINVAL', 'invalid argument', op, path);
      throw err;
    }
  }

  async #info(op: string, p: string): Promise<FileInfo | undefined> {
    if (p === '/') return { path: '/', isDir: true };
    const info = await this.#call(op, p, () => this.#backend.stat(p));
    if (info) return info;
    return this.#dirs.has(p) ? { path: p, isDir: true } : undefined;
  }

  async #require(op: string, p: string): Promise<FileInfo> {
    const info = await this.#info(op, p);
    if (!info) throw new FsError('ENOENT', 'no such file or directory', op, p);
    return info;
  }

  async #text(op: string, p: string): Promise<string> {
    if (p === DEV_NULL) return '';
    const info = await this.#require(op, p);
    if (info.isDir) throw new FsError('EISDIR', 'illegal operation on a directory', op, p);
    return this.#call(op, p, () => this.#backend.read(p));
  }

  /** Content as text; bytes that are not UTF-8 (or hold NUL) are refused. */
  #decode(op: string, p: string, content: string | Uint8Array, encoding: EncodingArg): string {
    const enc = encodingOf(encoding);
    let bytes: Buffer | undefined;
    if (typeof content !== 'string') bytes = Buffer.from(content);
    else if (enc === 'binary' || enc === 'latin1') bytes = Buffer.from(content, 'latin1');
    else if (enc === 'base64' || enc === 'hex') bytes = Buffer.from(content, enc);
    else return content;
    if (!isUtf8(bytes)) {
      throw new FsError(
        'EINVAL',
        'invalid argument',
        op,
        p,
        'binary: only UTF-8 text can be stored in this workspace',
      );
    }
    return bytes.toString('utf8');
  }

  async #write(op: string, p: string, text: string): Promise<void> {
    if (p === DEV_NULL) return;
    const parent = parentOf(p);
    const dir = await this.#info(op, parent);
    if (dir && !dir.isDir) throw new FsError('ENOTDIR', 'not a directory', op, p);
    await this.#call(op, p, () => this.#backend.write(p, text));
  }

  resolvePath(base: string, path: string): string {
    const joined = path.startsWith('/') ? path : `${base === '/' ? '' : base}/${path}`;
    const out: string[] = [];
    for (const s of joined.split('/')) {
      if (s === '' || s === '.') continue;
      if (s === '..') out.pop();
      else out.push(s);
    }
    return `/${out.join('/')}`;
  }

  async readFile(path: string, options?: EncodingArg): Promise<string> {
    const p = this.#path('open', path);
    const text = await this.#text('open', p);
    const enc = encodingOf(options);
    if (enc === undefined || enc === null || enc === 'utf8' || enc === 'utf-8') return text;
    return Buffer.from(text, 'utf8').toString(enc === 'ascii' ? 'latin1' : enc);
  }

  async readFileBytes(path: string): Promise<string> {
    const p = this.#path('open', path);
    return Buffer.from(await this.#text('open', p), 'utf8').toString('latin1');
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    const p = this.#path('open', path);
    return new Uint8Array(Buffer.from(await this.#text('open', p), 'utf8'));
  }

  async writeFile(path: string, content: string | Uint8Array, options?: EncodingArg) {
    const p = this.#path('open', path);
    await this.#write('open', p, this.#decode('open', p, content, options));
  }

  async appendFile(path: string, content: string | Uint8Array, options?: EncodingArg) {
    const p = this.#path('open', path);
    const added = this.#decode('open', p, content, options);
    const info = await this.#info('open', p);
    if (info?.isDir) throw new FsError('EISDIR', 'illegal operation on a directory', 'open', p);
    const before = info ? await this.#text('open', p) : '';
    await this.#write('open', p, before + added);
  }

  async exists(path: string): Promise<boolean> {
    try {
      return (await this.#info('access', this.#path('access', path))) !== undefined;
    } catch {
      return false;
    }
  }

  async stat(path: string): Promise<FsStatLike> {
    const p = this.#path('stat', path);
    if (p === DEV_NULL) {
      return {
        isFile: true,
        isDirectory: false,
        isSymbolicLink: false,
        mode: 0o666,
        size: 0,
        mtime: new Date(0),
      };
    }
    const info = await this.#require('stat', p);
    return {
      isFile: !info.isDir,
      isDirectory: info.isDir,
      isSymbolicLink: false,
      mode: this.#modes.get(p) ?? (info.isDir ? DIR_MODE : FILE_MODE),
      size: info.size ?? 0,
      mtime: new Date(info.modifiedAt ?? 0),
    };
  }

  lstat(path: string): Promise<FsStatLike> {
    return this.stat(path);
  }

  async mkdir(path: string, options?: { recursive?: boolean }): Promise<void> {
    const p = this.#path('mkdir', path);
    const info = await this.#info('mkdir', p);
    if (info) {
      if (options?.recursive && info.isDir) return;
      throw new FsError('EEXIST', 'file already exists', 'mkdir', p);
    }
    const chain: string[] = [];
    for (let d = p; d !== '/'; d = parentOf(d)) chain.unshift(d);
    for (const d of chain) {
      const at = await this.#info('mkdir', d);
      if (at && !at.isDir) throw new FsError('ENOTDIR', 'not a directory', 'mkdir', d);
      if (!at) {
        if (d !== p && !options?.recursive) {
          throw new FsError('ENOENT', 'no such file or directory', 'mkdir', p);
        }
        this.#dirs.add(d);
      }
    }
  }

  async readdirWithFileTypes(path: string): Promise<FsDirent[]> {
    const p = this.#path('scandir', path);
    const info = await this.#require('scandir', p);
    if (!info.isDir) throw new FsError('ENOTDIR', 'not a directory', 'scandir', p);
    const out = new Map<string, FsDirent>();
    const listed = await this.#call('scandir', p, async () => {
      try {
        return await this.#backend.ls(p);
      } catch (err) {
        // A directory that exists only in this sandbox (mkdir) has nothing in the backend.
        if (err instanceof FileError && err.code === 'not_found') return [];
        throw err;
      }
    });
    for (const entry of listed) {
      const name = nameOf(entry.path);
      out.set(name, {
        name,
        isFile: !entry.isDir,
        isDirectory: entry.isDir,
        isSymbolicLink: false,
      });
    }
    for (const d of this.#dirs) {
      if (parentOf(d) === p && d !== p) {
        const name = nameOf(d);
        if (!out.has(name)) {
          out.set(name, { name, isFile: false, isDirectory: true, isSymbolicLink: false });
        }
      }
    }
    return [...out.values()].sort(byName);
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.readdirWithFileTypes(path)).map((e) => e.name);
  }

  /** Every file under a directory (backend files only; sandbox-only directories hold none). */
  async #filesUnder(op: string, dir: string): Promise<FileInfo[]> {
    return this.#call(op, dir, async () => {
      try {
        return await this.#backend.glob('**/*', dir);
      } catch (err) {
        if (err instanceof FileError && err.code === 'not_found') return [];
        throw err;
      }
    });
  }

  async rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void> {
    const p = this.#path('rm', path);
    const info = await this.#info('rm', p);
    if (!info) {
      if (options?.force) return;
      throw new FsError('ENOENT', 'no such file or directory', 'rm', p);
    }
    if (!info.isDir) {
      await this.#call('rm', p, () => this.#backend.delete(p));
      this.#modes.delete(p);
      return;
    }
    if (p === '/') throw new FsError('EPERM', 'operation not permitted', 'rm', p);
    const files = await this.#filesUnder('rm', p);
    const subdirs = [...this.#dirs].filter((d) => within(d, p));
    if (!options?.recursive && (files.length > 0 || subdirs.length > 0)) {
      throw new FsError('ENOTEMPTY', 'directory not empty', 'rm', p);
    }
    for (const f of files) await this.#call('rm', f.path, () => this.#backend.delete(f.path));
    for (const d of subdirs) this.#dirs.delete(d);
    this.#dirs.delete(p);
  }

  async cp(src: string, dest: string, options?: { recursive?: boolean }): Promise<void> {
    const from = this.#path('cp', src);
    const to = this.#path('cp', dest);
    const info = await this.#require('cp', from);
    if (!info.isDir) {
      await this.#write('cp', to, await this.#text('cp', from));
      return;
    }
    if (!options?.recursive) throw new FsError('EISDIR', 'is a directory', 'cp', from);
    if (to === from || within(to, from)) {
      throw new FsError('EINVAL', `cannot copy '${from}' into itself`, 'cp', to);
    }
    this.#dirs.add(to);
    for (const d of [...this.#dirs]) {
      if (within(d, from)) this.#dirs.add(to + d.slice(from.length));
    }
    for (const f of await this.#filesUnder('cp', from)) {
      await this.#write(
        'cp',
        to + f.path.slice(from === '/' ? 0 : from.length),
        await this.#text('cp', f.path),
      );
    }
  }

  async mv(src: string, dest: string): Promise<void> {
    const from = this.#path('rename', src);
    const to = this.#path('rename', dest);
    if (from === to) return;
    const info = await this.#require('rename', from);
    if (info.isDir && within(to, from)) {
      throw new FsError('EINVAL', `cannot move '${from}' into itself`, 'rename', to);
    }
    await this.cp(from, to, { recursive: true });
    await this.rm(from, { recursive: true, force: true });
  }

  getAllPaths(): string[] {
    // Optional in just-bash; listing a whole store synchronously is not possible here.
    return [];
  }

  async chmod(path: string, mode: number): Promise<void> {
    const p = this.#path('chmod', path);
    await this.#require('chmod', p);
    this.#modes.set(p, mode & 0o7777);
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw new FsError(
      'EPERM',
      'operation not permitted',
      'symlink',
      linkPath,
      'links are not supported in this workspace; copy the file instead',
    );
  }

  async link(_existing: string, newPath: string): Promise<void> {
    throw new FsError(
      'EPERM',
      'operation not permitted',
      'link',
      newPath,
      'links are not supported in this workspace; copy the file instead',
    );
  }

  async readlink(path: string): Promise<string> {
    const p = this.#path('readlink', path);
    await this.#require('readlink', p);
    throw new FsError('EINVAL', 'invalid argument', 'readlink', p);
  }

  async realpath(path: string): Promise<string> {
    const p = this.#path('realpath', path);
    await this.#require('realpath', p);
    return p;
  }

  async utimes(path: string, _atime: Date, _mtime: Date): Promise<void> {
    await this.#require('utimes', this.#path('utimes', path));
  }
}

/** Names of the file-system methods a sandbox worker may call on the host. */
export const FS_METHODS = [
  'readFile',
  'readFileBytes',
  'readFileBuffer',
  'writeFile',
  'appendFile',
  'exists',
  'stat',
  'lstat',
  'mkdir',
  'readdir',
  'readdirWithFileTypes',
  'rm',
  'cp',
  'mv',
  'chmod',
  'symlink',
  'link',
  'readlink',
  'realpath',
  'utimes',
] as const;

/** One of {@link FS_METHODS}. */
export type FsMethod = (typeof FS_METHODS)[number];

/** Calls a file-system method by name for a worker; unknown names are refused. */
export function callFs(fs: BackendFs, method: string, args: unknown[]): Promise<unknown> {
  if (!(FS_METHODS as readonly string[]).includes(method)) {
    return Promise.reject(new FsError('ENOSYS', 'function not implemented', method, ''));
  }
  const fn = fs[method as FsMethod] as (...a: unknown[]) => Promise<unknown>;
  return fn.apply(fs, args);
}
