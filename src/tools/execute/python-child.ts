/**
 * The body of the Python sandbox child process. It is started from its source text
 * (`pythonChildSource`), so it must stay self-contained: no imports, no references outside
 * the function. The host starts it under Node's permission model (no file system beyond
 * pyodide's own folder, no writes, no child processes, no workers, no native addons) and
 * with code generation from strings disabled; this body closes the rest before pyodide
 * loads: every network connect throws, pyodide's JavaScript globals (`import js`) are an
 * empty object, and the pyodide API calls that mount host folders, open sockets or download
 * packages are removed. Files arrive from the host before a run and changed files go back
 * after it; the workspace lives at the same paths as in the file tools.
 */

/** The pyodide API surface this child uses. */
interface PyodideApi {
  runPython(code: string, options?: { globals?: unknown }): unknown;
  globals: { get(name: string): unknown };
  setStdout(options: { write: (buf: Uint8Array) => number }): void;
  setStderr(options: { write: (buf: Uint8Array) => number }): void;
  FS: {
    readdir(path: string): string[];
    stat(path: string): { mode: number; mtime: Date | number };
    isDir(mode: number): boolean;
    isFile(mode: number): boolean;
    readFile(path: string): Uint8Array;
    writeFile(path: string, data: string | Uint8Array): void;
    unlink(path: string): void;
    mkdirTree(path: string): void;
    utime(path: string, atime: number, mtime: number): void;
  };
  [key: string]: unknown;
}

/** The child's entry point; see the module comment. */
export function pythonChildMain(): void {
  const reserved = ['/lib', '/dev', '/proc', '/sys'];
  const send = (msg: unknown) => process.send?.(msg);
  const denied = (what: string) => () => {
    throw new Error(`${what} is not available in this sandbox`);
  };
  // Network: every way out of the process goes through these.
  const net = require('node:net') as Record<string, unknown> & {
    Socket: { prototype: Record<string, unknown> };
  };
  net.Socket.prototype.connect = denied('network access');
  net.connect = denied('network access');
  net.createConnection = denied('network access');
  net.createServer = denied('network access');
  const tls = require('node:tls') as Record<string, unknown>;
  tls.connect = denied('network access');
  const dgram = require('node:dgram') as Record<string, unknown>;
  dgram.createSocket = denied('network access');
  const dns = require('node:dns') as Record<string, unknown>;
  dns.lookup = denied('network access');
  for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest']) {
    Object.defineProperty(globalThis, name, { value: undefined, configurable: false });
  }
  const fsConstants = (require('node:fs') as { constants: unknown }).constants;
  const osConstants = (require('node:os') as { constants: unknown }).constants;
  // pyodide reads fs flags through process.binding, which the permission model refuses.
  (process as unknown as { binding: (n: string) => unknown }).binding = (name: string) => {
    if (name === 'constants') return { fs: fsConstants, os: osConstants };
    throw new Error('process.binding is not available in this sandbox');
  };
  const entry = process.env.TASKLINE_PYODIDE ?? '';
  for (const key of Object.keys(process.env)) delete process.env[key];

  const inWorkspace = (path: string) =>
    !reserved.some((r) => path === r || path.startsWith(`${r}/`));

  let py: PyodideApi;
  let runner: (code: string, filename: string, argv: unknown, cwd: string) => unknown;
  let toPy: (value: unknown) => unknown;
  /** Paths of workspace files the host knows about, all stamped with mtime 0 when synced. */
  const known = new Set<string>();
  /** Files that came with the interpreter outside the reserved folders: never synced. */
  const baseline = new Set<string>();
  let out: Uint8Array[] = [];
  let err: Uint8Array[] = [];
  let kept = 0;
  let dropped = 0;
  let cap = 1024 * 1024;
  const collector = (into: () => Uint8Array[]) => ({
    write(buf: Uint8Array): number {
      const room = cap - kept;
      if (room <= 0) dropped += buf.length;
      else {
        const piece = buf.length <= room ? buf.slice() : buf.slice(0, room);
        into().push(piece);
        kept += piece.length;
        dropped += buf.length - piece.length;
      }
      return buf.length;
    },
  });

  const walk = (dir: string, files: string[]) => {
    for (const name of py.FS.readdir(dir)) {
      if (name === '.' || name === '..') continue;
      const path = dir === '/' ? `/${name}` : `${dir}/${name}`;
      if (!inWorkspace(path)) continue;
      const st = py.FS.stat(path);
      if (py.FS.isDir(st.mode)) walk(path, files);
      else if (py.FS.isFile(st.mode)) files.push(path);
    }
  };
  const mtimeOf = (path: string) => {
    const m = py.FS.stat(path).mtime;
    return typeof m === 'number' ? m : m.getTime();
  };
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const text = (parts: Uint8Array[]) => {
    const total = parts.reduce((n, p) => n + p.length, 0);
    const all = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return new TextDecoder('utf-8').decode(all);
  };

  const DRIVER = [
    'import sys, os, traceback',
    'def __taskline_run(code, filename, argv, cwd):',
    '    sys.argv = list(argv)',
    '    os.chdir(cwd)',
    "    g = {'__name__': '__main__', '__file__': filename, '__builtins__': __builtins__}",
    '    try:',
    "        exec(compile(code, filename, 'exec'), g)",
    '        return 0',
    '    except SystemExit as e:',
    '        c = e.code',
    '        if c is None: return 0',
    '        if isinstance(c, int): return c',
    '        print(c, file=sys.stderr)',
    '        return 1',
    '    except BaseException as e:',
    '        traceback.print_exception(type(e), e, e.__traceback__.tb_next)',
    '        return 1',
    '    finally:',
    '        sys.stdout.flush()',
    '        sys.stderr.flush()',
    '__taskline_run',
  ].join('\n');

  const onRun = (msg: {
    type: string;
    id: number;
    code: string;
    argv: string[];
    cwd: string;
    put: { path: string; content?: string }[];
    remove: string[];
    maxOutputBytes: number;
  }) => {
    if (msg.type !== 'run') return;
    send({ type: 'started', id: msg.id });
    out = [];
    err = [];
    kept = 0;
    dropped = 0;
    cap = msg.maxOutputBytes;
    for (const path of msg.remove) {
      try {
        py.FS.unlink(path);
      } catch {
        // already gone
      }
      known.delete(path);
    }
    for (const f of msg.put) {
      const parent = f.path.slice(0, f.path.lastIndexOf('/')) || '/';
      py.FS.mkdirTree(parent);
      py.FS.writeFile(f.path, f.content ?? '');
      py.FS.utime(f.path, 0, 0);
      known.add(f.path);
    }
    let exitCode = 1;
    try {
      py.FS.mkdirTree(msg.cwd);
      exitCode = Number(runner(msg.code, msg.argv[0] ?? '<string>', toPy(msg.argv), msg.cwd));
    } catch (e) {
      err.push(new TextEncoder().encode(`${String((e as Error)?.message ?? e)}\n`));
    }
    const files: string[] = [];
    walk('/', files);
    const present = new Set(files);
    const changed: { path: string; content?: string; binary?: boolean }[] = [];
    for (const path of files) {
      if (baseline.has(path)) continue;
      if (known.has(path) && mtimeOf(path) === 0) continue;
      const bytes = py.FS.readFile(path);
      try {
        changed.push({ path, content: decoder.decode(bytes) });
      } catch {
        changed.push({ path, binary: true });
      }
      py.FS.utime(path, 0, 0);
      known.add(path);
    }
    const removed = [...known].filter((p) => !present.has(p));
    for (const p of removed) known.delete(p);
    send({
      type: 'result',
      id: msg.id,
      stdout: text(out),
      stderr: text(err),
      exitCode,
      droppedBytes: dropped,
      changed,
      removed,
    });
  };

  const started = performance.now();
  let load: (options: Record<string, unknown>) => Promise<PyodideApi>;
  try {
    load = (require(entry) as { loadPyodide: typeof load }).loadPyodide;
  } catch (e) {
    const x = e as { message?: string; code?: string };
    send({ type: 'fatal', message: String(x?.message ?? e), code: x?.code });
    return;
  }
  load({ jsglobals: Object.freeze(Object.create(null)), stdout: () => {}, stderr: () => {} }).then(
    (api) => {
      py = api;
      for (const name of [
        'mountNodeFS',
        'mountNativeFS',
        'useNodeSockFS',
        'loadPackage',
        'loadPackagesFromImports',
        'registerJsModule',
        'registerComlink',
        'unpackArchive',
        'setStdin',
      ]) {
        py[name] = denied(name);
      }
      py.setStdout(collector(() => out));
      py.setStderr(collector(() => err));
      runner = py.runPython(DRIVER) as typeof runner;
      const toPyFn = py.toPy as (v: unknown) => unknown;
      toPy = (v) => toPyFn(v);
      const files: string[] = [];
      walk('/', files);
      for (const f of files) baseline.add(f);
      process.on('message', onRun);
      send({ type: 'ready', loadMs: performance.now() - started });
    },
    (e: unknown) => {
      send({ type: 'fatal', message: String((e as Error)?.message ?? e) });
    },
  );
}
