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
 *
 * A run ends all its work: every timer, immediate and interval scheduled while it ran (which is
 * how pyodide's asyncio loop schedules tasks) is cleared when the code returns, and the host is
 * told `idle` only once the event loop has turned over. The interpreter's WebAssembly memory
 * grows only up to the limit the host gives; past it Python gets a MemoryError. `os.system` and
 * friends fail like a missing shell instead of crashing the interpreter, and a crash that does
 * happen (a fatal pyodide error) is reported with the files the run wrote.
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
    lstat(path: string): { mode: number; mtime: Date | number };
    isDir(mode: number): boolean;
    isLink(mode: number): boolean;
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
  const lock = (target: object, name: string, value: unknown) =>
    Object.defineProperty(target, name, { value, writable: false, configurable: false });
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
  // Programs: the permission model refuses to start them, and pyodide treats that refusal as a
  // fatal error; answer like a machine without a shell instead (os.system returns 127 << 8).
  let noShellNotice: (() => void) | undefined;
  const childProcess = require('node:child_process') as Record<string, unknown>;
  for (const name of ['spawn', 'exec', 'execFile', 'fork', 'execSync', 'execFileSync']) {
    childProcess[name] = denied('running programs');
  }
  childProcess.spawnSync = () => {
    noShellNotice?.();
    return { pid: 0, status: 127, signal: null, output: [null, null, null] };
  };
  const fsConstants = (require('node:fs') as { constants: unknown }).constants;
  const osConstants = (require('node:os') as { constants: unknown }).constants;
  // pyodide reads fs flags through process.binding, which the permission model refuses.
  (process as unknown as { binding: (n: string) => unknown }).binding = (name: string) => {
    if (name === 'constants') return { fs: fsConstants, os: osConstants };
    throw new Error('process.binding is not available in this sandbox');
  };
  const entry = process.env.TASKLINE_PYODIDE ?? '';
  const memoryLimit = Number(process.env.TASKLINE_PYTHON_MEMORY_BYTES) || 0;
  for (const key of Object.keys(process.env)) delete process.env[key];

  // Memory: pyodide's heap is a WebAssembly memory that emscripten grows through
  // Memory.prototype.grow; a refused grow makes malloc fail, which Python raises as MemoryError.
  let memoryRefused = false;
  interface WasmMemory {
    buffer: ArrayBuffer;
    grow(pages: number): number;
  }
  const wasm = (globalThis as unknown as { WebAssembly: { Memory: { prototype: WasmMemory } } })
    .WebAssembly;
  const grow = wasm.Memory.prototype.grow;
  lock(wasm.Memory.prototype, 'grow', function (this: WasmMemory, pages: number) {
    if (memoryLimit > 0 && this.buffer.byteLength + pages * 65536 > memoryLimit) {
      memoryRefused = true;
      throw new RangeError('the memory limit of this sandbox');
    }
    return grow.call(this, pages);
  });

  // Work scheduled on the event loop (asyncio tasks, timers): tracked from the first run on,
  // so that a run's leftovers can be cleared when its code returns.
  const timers = {
    setTimeout: globalThis.setTimeout,
    clearTimeout: globalThis.clearTimeout,
    setInterval: globalThis.setInterval,
    clearInterval: globalThis.clearInterval,
    setImmediate: globalThis.setImmediate,
    clearImmediate: globalThis.clearImmediate,
  };
  const pending = new Map<unknown, () => void>();
  let tracking = false;
  type Callback = (...args: unknown[]) => void;
  const schedule =
    (
      start: (fn: Callback, ...rest: unknown[]) => unknown,
      stop: (handle: unknown) => void,
      repeats: boolean,
    ) =>
    (fn: Callback, ...rest: unknown[]) => {
      if (typeof fn !== 'function') throw new TypeError('a callback function is required');
      const handle = start(
        (...args: unknown[]) => {
          if (!repeats) pending.delete(handle);
          fn(...args);
        },
        ...rest,
      );
      if (tracking) pending.set(handle, () => stop(handle));
      return handle;
    };
  const cancel = (stop: (handle: unknown) => void) => (handle: unknown) => {
    pending.delete(handle);
    stop(handle);
  };
  const g = globalThis as unknown as Record<string, unknown>;
  lock(g, 'setTimeout', schedule(timers.setTimeout as never, timers.clearTimeout as never, false));
  lock(
    g,
    'setInterval',
    schedule(timers.setInterval as never, timers.clearInterval as never, true),
  );
  lock(
    g,
    'setImmediate',
    schedule(timers.setImmediate as never, timers.clearImmediate as never, false),
  );
  lock(g, 'clearTimeout', cancel(timers.clearTimeout as never));
  lock(g, 'clearInterval', cancel(timers.clearInterval as never));
  lock(g, 'clearImmediate', cancel(timers.clearImmediate as never));
  /** Clears everything still scheduled; returns how many there were. */
  const clearPending = () => {
    const n = pending.size;
    for (const stop of pending.values()) stop();
    pending.clear();
    return n;
  };
  let baselineResources: string[] = [];
  /** Event-loop resources beyond those of an idle child (the IPC channel, stderr). */
  const extraResources = () => {
    const left = [...baselineResources];
    const extra: string[] = [];
    for (const r of process.getActiveResourcesInfo()) {
      const i = left.indexOf(r);
      if (i >= 0) left.splice(i, 1);
      else extra.push(r);
    }
    return extra;
  };

  const inWorkspace = (path: string) =>
    !reserved.some((r) => path === r || path.startsWith(`${r}/`));

  let py: PyodideApi;
  /** pyodide's file system, kept apart from `py`: after a fatal error `py.FS` throws. */
  let fs: PyodideApi['FS'];
  let runner: (code: string, filename: string, argv: unknown, cwd: string) => unknown;
  let settleTasks: () => unknown;
  let toPy: (value: unknown) => unknown;
  let crashed: string | undefined;
  /** The interpreter ended itself (os._exit): no further run can use it. */
  let ended = false;
  /** Paths of workspace files the host knows about, all stamped with mtime 0 when synced. */
  const known = new Set<string>();
  /** Files that came with the interpreter outside the reserved folders: never synced. */
  const baseline = new Set<string>();
  /** Symbolic links already reported as not saved. */
  const reportedLinks = new Set<string>();
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
  const errors = collector(() => err);
  const note = (line: string) => errors.write(new TextEncoder().encode(`${line}\n`));
  noShellNotice = () => note('sh: running programs is not available in this sandbox');

  /** Regular files and symbolic links under `dir`, never following a link. */
  const walk = (dir: string, files: string[], links: string[]) => {
    for (const name of fs.readdir(dir)) {
      if (name === '.' || name === '..') continue;
      const path = dir === '/' ? `/${name}` : `${dir}/${name}`;
      if (!inWorkspace(path)) continue;
      const st = fs.lstat(path);
      if (fs.isLink(st.mode)) links.push(path);
      else if (fs.isDir(st.mode)) walk(path, files, links);
      else if (fs.isFile(st.mode)) files.push(path);
    }
  };
  const mtimeOf = (path: string) => {
    const m = fs.lstat(path).mtime;
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
  const message = (e: unknown) => String((e as Error)?.message ?? e);

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
    // Tasks whose callbacks were cleared never finish: keep asyncio from warning about them
    // in a later run's output when they are collected.
    'def __taskline_settle():',
    "    a = sys.modules.get('asyncio')",
    '    if a is None: return',
    '    try:',
    '        for t in a.all_tasks(a.get_event_loop()):',
    '            t._log_destroy_pending = False',
    '    except BaseException:',
    '        pass',
    '(__taskline_run, __taskline_settle)',
  ].join('\n');

  /**
   * Removes symbolic links on the way to a workspace file the host sends: the workspace says
   * a directory (or the file) is there, and writing through a link would put the file where
   * the next walk does not find it, so it would be reported deleted.
   */
  const unlinkAlong = (path: string) => {
    let at = '';
    for (const part of path.split('/').filter(Boolean)) {
      at = `${at}/${part}`;
      let st: { mode: number };
      try {
        st = fs.lstat(at);
      } catch {
        return; // nothing there yet: nothing further down either
      }
      if (fs.isLink(st.mode)) {
        fs.unlink(at);
        reportedLinks.delete(at);
        return;
      }
    }
  };

  /** The files the run changed, deleted, or could not hand back. */
  const collectFiles = () => {
    const files: string[] = [];
    const links: string[] = [];
    const changed: { path: string; content?: string; binary?: boolean }[] = [];
    const skipped: { path: string; reason: string }[] = [];
    walk('/', files, links);
    const present = new Set(files);
    for (const path of files) {
      if (baseline.has(path)) continue;
      if (known.has(path) && mtimeOf(path) === 0) continue;
      const bytes = fs.readFile(path);
      try {
        changed.push({ path, content: decoder.decode(bytes) });
      } catch {
        changed.push({ path, binary: true });
      }
      fs.utime(path, 0, 0);
      known.add(path);
    }
    for (const path of links) {
      if (reportedLinks.has(path)) continue;
      reportedLinks.add(path);
      skipped.push({ path, reason: 'symbolic link: only regular files are saved' });
    }
    const linked = new Set(links);
    for (const path of [...reportedLinks]) if (!linked.has(path)) reportedLinks.delete(path);
    const removed = [...known].filter((p) => !present.has(p));
    for (const p of removed) known.delete(p);
    return { changed, removed, skipped };
  };

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
    memoryRefused = false;
    tracking = true;
    let exitCode = 1;
    try {
      for (const path of msg.remove) {
        try {
          fs.unlink(path);
        } catch {
          // already gone
        }
        known.delete(path);
      }
      for (const f of msg.put) {
        unlinkAlong(f.path);
        const parent = f.path.slice(0, f.path.lastIndexOf('/')) || '/';
        fs.mkdirTree(parent);
        fs.writeFile(f.path, f.content ?? '');
        fs.utime(f.path, 0, 0);
        known.add(f.path);
      }
      fs.mkdirTree(msg.cwd);
      exitCode = Number(runner(msg.code, msg.argv[0] ?? '<string>', toPy(msg.argv), msg.cwd));
    } catch (e) {
      const exit = /^Program terminated with exit\((-?\d+)\)$/.exec(message(e));
      if (exit) {
        // os._exit(): the code chose to end the interpreter; its exit code stands.
        exitCode = Number(exit[1]);
        ended = true;
      } else if ((e as { pyodide_fatal_error?: boolean })?.pyodide_fatal_error) {
        crashed = message(e);
      } else note(message(e));
    }
    const droppedTasks = clearPending();
    if (!crashed && !ended) {
      try {
        settleTasks();
      } catch (e) {
        if ((e as { pyodide_fatal_error?: boolean })?.pyodide_fatal_error) crashed = message(e);
      }
    }
    if (memoryRefused) {
      const mib = Math.round(memoryLimit / 1048576);
      note(`python: the run reached the memory limit of this sandbox (${mib} MiB)`);
    }
    let files: ReturnType<typeof collectFiles> = { changed: [], removed: [], skipped: [] };
    try {
      files = collectFiles();
    } catch (e) {
      crashed ??= `reading back the files failed: ${message(e)}`;
    }
    send({
      type: 'result',
      id: msg.id,
      stdout: text(out),
      stderr: text(err),
      exitCode,
      droppedBytes: dropped,
      ...files,
      pending: droppedTasks,
      ...(crashed ? { crashed } : {}),
      ...(ended ? { ended } : {}),
    });
    if (crashed || ended) return;
    // Idle only once the event loop turned over: work queued as microtasks has run by then,
    // and anything it scheduled is cleared too.
    timers.setImmediate(() => {
      send({ type: 'idle', id: msg.id, pending: clearPending(), resources: extraResources() });
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
      fs = api.FS;
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
      py.setStderr(errors);
      [runner, settleTasks] = py.runPython(DRIVER) as [typeof runner, typeof settleTasks];
      const toPyFn = py.toPy as (v: unknown) => unknown;
      toPy = (v) => toPyFn(v);
      const files: string[] = [];
      walk('/', files, []);
      for (const f of files) baseline.add(f);
      process.on('message', onRun);
      timers.setImmediate(() => {
        baselineResources = process.getActiveResourcesInfo();
        send({ type: 'ready', loadMs: performance.now() - started });
      });
    },
    (e: unknown) => {
      send({ type: 'fatal', message: message(e) });
    },
  );
}
