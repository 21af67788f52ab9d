/**
 * The body of the bash sandbox worker thread. It is started from its source text
 * (`bashWorkerSource`), so it must stay self-contained: no imports, no references to
 * anything outside the function. just-bash runs here, off the main thread: a runaway loop
 * blocks this worker, never the call's audio, and the host can terminate it. Every file
 * operation is a message to the host, which performs it on the FileBackend.
 */

/** Data the host passes to the worker. */
export interface BashWorkerData {
  /** Absolute path of just-bash's CommonJS entry. */
  justBash: string;
  /** just-bash's own deadline for one exec (the host enforces a hard one too). */
  timeoutMs: number;
  /** Most stdout+stderr bytes one exec may produce. */
  maxOutputBytes: number;
  /** Most commands one exec may run. */
  maxCommandCount: number;
  /** The file-system methods the host serves (backend-fs.ts `FS_METHODS`). */
  fsMethods: readonly string[];
}

/** The worker's entry point; see the module comment. */
export function bashWorkerMain(): void {
  interface Pending {
    resolve: (value: unknown) => void;
    reject: (error: Error) => void;
  }
  interface JustBashModule {
    Bash: new (
      options: Record<string, unknown>,
    ) => {
      exec(
        script: string,
        options: Record<string, unknown>,
      ): Promise<{ stdout: string; stderr: string; exitCode: number }>;
    };
  }
  const { parentPort, workerData } =
    require('node:worker_threads') as typeof import('node:worker_threads');
  const data = workerData as BashWorkerData;
  const port = parentPort!;
  const pending = new Map<number, Pending>();
  let nextId = 1;

  const call = (method: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      port.postMessage({ type: 'fs', id, method, args });
    });

  const methods = data.fsMethods;
  const fs: Record<string, unknown> = {
    resolvePath(base: string, path: string): string {
      const joined = path.startsWith('/') ? path : `${base === '/' ? '' : base}/${path}`;
      const out: string[] = [];
      for (const s of joined.split('/')) {
        if (s === '' || s === '.') continue;
        if (s === '..') out.pop();
        else out.push(s);
      }
      return `/${out.join('/')}`;
    },
    getAllPaths: (): string[] => [],
  };
  for (const m of methods) {
    // Dates, Uint8Arrays and plain objects survive the structured clone unchanged.
    fs[m] = (...args: unknown[]) => call(m, args);
  }

  let mod: JustBashModule;
  try {
    mod = require(data.justBash) as JustBashModule;
  } catch (err) {
    const e = err as { message?: string; code?: string };
    port.postMessage({ type: 'fatal', message: String(e?.message ?? err), code: e?.code });
    return;
  }
  const bash = new mod.Bash({
    fs,
    cwd: '/',
    env: { HOME: '/', PWD: '/', TZ: 'UTC' },
    executionLimits: {
      maxExecutionTimeMs: data.timeoutMs,
      maxOutputSize: data.maxOutputBytes,
      maxCommandCount: data.maxCommandCount,
    },
  });

  port.on('message', (msg: Record<string, unknown>) => {
    if (msg.type === 'fs-result') {
      const waiter = pending.get(msg.id as number);
      if (!waiter) return;
      pending.delete(msg.id as number);
      if (msg.ok) waiter.resolve(msg.value);
      else {
        const e = msg.error as { code: string; message: string };
        waiter.reject(Object.assign(new Error(e.message), { code: e.code }));
      }
      return;
    }
    if (msg.type === 'exec') {
      const id = msg.id as number;
      port.postMessage({ type: 'started', id });
      bash
        .exec(msg.script as string, {
          cwd: msg.cwd,
          env: msg.env,
          ...(msg.args ? { args: msg.args } : {}),
          rawScript: true,
        })
        .then(
          (r) =>
            port.postMessage({
              type: 'result',
              id,
              stdout: r.stdout,
              stderr: r.stderr,
              exitCode: r.exitCode,
            }),
          (err: unknown) =>
            port.postMessage({
              type: 'result',
              id,
              stdout: '',
              stderr: `bash: ${String((err as Error)?.message ?? err)}\n`,
              exitCode: 1,
            }),
        );
    }
  });
}

/**
 * Source text that runs a self-contained function as a CommonJS script (an eval'd worker or
 * `node -e`). esbuild rewrites the copied text: loaders that compile TypeScript on the fly (tsx,
 * vitest) wrap inner functions in `__name(fn, "name")`, and the ESM bundle turns `require` into
 * `__require`; both helpers exist only in the original module, so the prelude defines them.
 */
export function functionSource(main: () => void): string {
  return `var __name = (target) => target;\nvar __require = require;\n(${main.toString()})();`;
}

/** The worker's source text, started with `new Worker(source, { eval: true })`. */
export function bashWorkerSource(): string {
  return functionSource(bashWorkerMain);
}
