/**
 * Sandboxed execution: bash (just-bash in a worker) and Python (pyodide in a confined child)
 * share one workspace with the file tools on the memory and SQLite backends; runaway code is
 * stopped by its time limit; nothing leaves a disk root; output over the cap is evicted to a
 * file; there is no network; the local shell needs an explicit opt-in.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { BashSandbox } from '../../src/deep-agent/tools/execute/bash.js';
import { LocalShell } from '../../src/deep-agent/tools/execute/local.js';
import { PythonSandbox } from '../../src/deep-agent/tools/execute/python.js';
import { ExecutionSandbox } from '../../src/deep-agent/tools/execute/sandbox.js';
import { createExecutionTools } from '../../src/deep-agent/tools/execute/tools.js';
import type { FileBackend } from '../../src/deep-agent/tools/files/backend.js';
import { DiskBackend } from '../../src/deep-agent/tools/files/backends/disk.js';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { SqliteFileStore } from '../../src/deep-agent/tools/files/backends/store-sqlite.js';
import { createFileTools } from '../../src/deep-agent/tools/files/tools.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { callTool } from '../tools/tool-helpers.js';

const opened: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

const backends: Array<[string, () => FileBackend]> = [
  ['memory', () => new MemoryBackend()],
  [
    'sqlite',
    () => {
      const store = new SqliteFileStore({
        path: ':memory:',
        tenant: 't',
        user: `u${Math.random()}`,
      });
      opened.push(store);
      return store;
    },
  ],
];

describe.each(backends)('bash and Python share one workspace on the %s backend', (_, make) => {
  it('sees the same files through execute, execute_python and the file tools', async () => {
    const backend = make();
    const sandbox = new ExecutionSandbox({ backend });
    opened.push(sandbox);
    const tools = createExecutionTools(sandbox);
    const files = createFileTools({ backend });
    await callTool(files.write_file, {
      file_path: '/data/orders.csv',
      content: 'item,qty,price\ntea,2,3.50\ncake,1,4.25\n',
    });

    const bash = await callTool(tools.execute!, {
      command:
        'tail -n +2 /data/orders.csv | cut -d, -f1 | sort > /data/items.txt && wc -l < /data/items.txt',
    });
    expect(bash).toBe('2\n[exit code 0]');
    expect(await backend.read('/data/items.txt')).toBe('cake\ntea\n');

    const py = await callTool(tools.execute_python!, {
      code: [
        'import csv',
        "rows = list(csv.DictReader(open('/data/orders.csv')))",
        "total = sum(int(r['qty']) * float(r['price']) for r in rows)",
        "items = open('/data/items.txt').read().split()",
        "open('/data/total.txt', 'w').write(f'{total:.2f}')",
        'print(items, total)',
      ].join('\n'),
    });
    expect(py).toBe("['cake', 'tea'] 11.25\n[saved: /data/total.txt]\n[exit code 0]");

    // What Python saved is visible to bash and to read_file at once.
    expect(await callTool(tools.execute!, { command: 'cat /data/total.txt' })).toBe(
      '11.25\n[exit code 0]',
    );
    expect(await callTool(files.read_file, { file_path: '/data/total.txt' })).toBe('     1\t11.25');

    // A change from bash reaches the next Python run; a deletion in Python reaches the backend.
    await callTool(tools.execute!, { command: "sed -i 's/tea/green tea/' /data/items.txt" });
    expect(
      await callTool(tools.execute_python!, {
        code: "import os\nprint(open('/data/items.txt').read().strip())\nos.remove('/data/total.txt')",
      }),
    ).toBe('cake\ngreen tea\n[deleted: /data/total.txt]\n[exit code 0]');
    expect(await backend.stat('/data/total.txt')).toBeUndefined();
  }, 90_000);
});

describe('time limits', () => {
  it('stops a runaway bash loop with the sandbox deadline and serves the next command', async () => {
    const sandbox = new BashSandbox({ backend: new MemoryBackend(), timeoutMs: 300 });
    opened.push(sandbox);
    const stopped = await sandbox.exec('while true; do :; done');
    expect(stopped.exitCode).not.toBe(0);
    // just-bash's own deadline or command cap, or (on a very loaded machine) the host's stop.
    expect(stopped.stderr).toMatch(/deadline|too many commands|stopped after 300 ms/);
    expect((await sandbox.exec('echo next')).stdout).toBe('next\n');
  });

  it('terminates a bash worker that runs past the hard limit', async () => {
    const clock = new VirtualClock();
    const sandbox = new BashSandbox({
      backend: new MemoryBackend(),
      timeoutMs: 60_000,
      maxCommandCount: 1_000_000_000,
      clock,
    });
    opened.push(sandbox);
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    const result = sandbox.exec('while true; do :; done', { onStarted: () => started() });
    await running;
    await clock.advance(62_000);
    const r = await result;
    expect(r).toMatchObject({ stopped: 'timeout', exitCode: 124 });
    expect(r.stderr).toContain('stopped after 60000 ms');
    expect((await sandbox.exec('echo fresh')).stdout).toBe('fresh\n');
    expect(sandbox.coldStarts).toBe(2);
  });

  it('kills a runaway Python loop at its limit and loads a fresh interpreter for the next run', async () => {
    const clock = new VirtualClock();
    const backend = new MemoryBackend();
    const sandbox = new PythonSandbox({ backend, timeoutMs: 5_000, clock });
    opened.push(sandbox);
    let started!: () => void;
    const running = new Promise<void>((r) => {
      started = r;
    });
    const result = sandbox.run("open('/half.txt','w').write('x')\nwhile True:\n    pass", {
      onStarted: () => started(),
    });
    await running;
    await clock.advance(5_000);
    const r = await result;
    expect(r).toMatchObject({ stopped: 'timeout', exitCode: 124, saved: [] });
    expect(r.stderr).toContain('stopped after 5000 ms');
    expect(await backend.stat('/half.txt')).toBeUndefined();
    expect((await sandbox.run('print(6 * 7)')).stdout).toBe('42\n');
    expect(sandbox.coldStarts).toBe(2);
  }, 120_000);
});

describe('a disk root cannot be left from bash', () => {
  let base: string;
  let root: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'taskline-exec-'));
    root = join(base, 'root');
    mkdirSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(base, 'secret.txt'), 'TOP SECRET\n');
    writeFileSync(join(root, 'sub', 'ok.txt'), 'inside\n');
    symlinkSync(join(base, 'secret.txt'), join(root, 'link.txt'));
    symlinkSync(base, join(root, 'up'));
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('refuses .., absolute host paths and symbolic links that lead out', async () => {
    const sandbox = new BashSandbox({ backend: new DiskBackend({ root }) });
    opened.push(sandbox);
    const run = async (command: string) => {
      const r = await sandbox.exec(command);
      return `${r.stdout}${r.stderr}`;
    };
    // Links that lead out are hidden from listings and refused when used.
    expect(await run('cd .. && cd .. && pwd && ls')).toBe('/\nsub\n');
    expect(await run('cat ../secret.txt; cat /../../secret.txt')).not.toContain('TOP SECRET');
    expect(await run(`cat ${join(base, 'secret.txt')}`)).not.toContain('TOP SECRET');
    expect(await run('cat /link.txt')).not.toContain('TOP SECRET');
    expect(await run('cat /up/secret.txt; ls /up')).not.toContain('TOP SECRET');
    expect(await run('ln -s /etc/passwd /p; cat /p')).not.toMatch(/root:/);
    expect(await run('grep -r SECRET / ; find / -name secret.txt')).not.toContain('TOP SECRET');
    expect(await run('cd /sub && cat ok.txt')).toBe('inside\n');
    // Writes stay inside the root too.
    await run('echo hi > ../../escape.txt');
    expect(await run('cat /escape.txt')).toBe('hi\n');
  });
});

describe('output, network and the local shell', () => {
  it('saves output over the large-result size to a file and previews it', async () => {
    const backend = new MemoryBackend();
    const sandbox = new ExecutionSandbox({ backend, python: false });
    opened.push(sandbox);
    const tools = createExecutionTools(sandbox, { largeResultChars: 2_000 });
    const out = (await callTool(
      tools.execute!,
      { command: 'seq 1 5000' },
      { toolCallId: 'call_big' },
    )) as string;
    expect(out).toContain('is saved at /large_tool_results/call_big');
    expect(out.length).toBeLessThan(2_000);
    const saved = await backend.read('/large_tool_results/call_big');
    expect(saved.startsWith('1\n2\n3\n')).toBe(true);
    expect(saved.endsWith('4999\n5000\n[exit code 0]')).toBe(true);
  });

  it('has no network in either sandbox', async () => {
    const sandbox = new ExecutionSandbox({ backend: new MemoryBackend() });
    opened.push(sandbox);
    expect((await sandbox.exec('curl http://127.0.0.1:9/')).stderr).toContain('command not found');
    const py = await sandbox.runPython(
      "import urllib.request\ntry:\n    urllib.request.urlopen('http://127.0.0.1:9/', timeout=2)\nexcept Exception as e:\n    print('blocked', type(e).__name__)",
    );
    expect(py.stdout).toMatch(/^blocked /);
    const js = await sandbox.runPython('from pyodide.code import run_js\nrun_js("1")');
    expect(js.exitCode).toBe(1);
    const host = await sandbox.runPython(
      "import pyodide_js\npyodide_js.runPython.constructor('return process')()",
    );
    expect(host.stderr).toContain('Code generation from strings disallowed');
  }, 90_000);

  it('refuses a local shell unless it is explicitly allowed, and runs one that is', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'taskline-local-'));
    try {
      let error: unknown;
      try {
        new ExecutionSandbox({
          backend: new MemoryBackend(),
          local: { cwd, dangerouslyAllowUnsandboxed: false },
        });
      } catch (e) {
        error = e;
      }
      expect(isTasklineError(error, 'invalid_argument')).toBe(true);
      expect((error as Error).message).toContain('dangerouslyAllowUnsandboxed: true');
      const shell = new LocalShell({ cwd, dangerouslyAllowUnsandboxed: true });
      const r = await shell.exec('echo local > f.txt && cat f.txt && pwd');
      expect(r.stdout).toBe(`local\n${cwd}\n`);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('a Python run ends all its work', () => {
  // One interpreter for the block: a run that leaves work behind must not cost the next one.
  const backend = new MemoryBackend();
  const python = new PythonSandbox({ backend, timeoutMs: 20_000 });
  afterAll(() => python.close());

  it('clears asyncio tasks and callbacks the code left scheduled, so they never run', async () => {
    await python.warm();
    const coldStarts = python.coldStarts;
    const left = await python.run(
      [
        'import asyncio',
        'async def spin():',
        '    while True:',
        '        pass',
        'asyncio.ensure_future(spin())',
        "asyncio.get_event_loop().call_soon(lambda: open('/late.txt', 'w').write('late'))",
        "print('scheduled')",
      ].join('\n'),
    );
    expect(left).toMatchObject({ exitCode: 0, stdout: 'scheduled\n', saved: [] });
    expect(left.stderr).toContain('2 callbacks (asyncio tasks, timers) still scheduled');
    // The next, innocent run is served at once by the same interpreter: the busy task never ran.
    const next = await python.run("import os\nprint('innocent', os.path.exists('/late.txt'))");
    expect(next).toMatchObject({ exitCode: 0, stdout: 'innocent False\n', saved: [] });
    expect(next.stopped).toBeUndefined();
    expect(python.coldStarts).toBe(coldStarts);
    expect(await backend.stat('/late.txt')).toBeUndefined();
  }, 90_000);

  it('replaces an interpreter whose event loop the code left busy (a promise loop)', async () => {
    const coldStarts = python.coldStarts;
    const left = await python.run(
      [
        'import pyodide_js',
        'info = pyodide_js._module.makePromise()',
        'info.resolve(1)',
        'def again(_):',
        '    info.promise.then(again)',
        'info.promise.then(again)',
        "print('armed')",
      ].join('\n'),
    );
    expect(left).toMatchObject({ exitCode: 0, stdout: 'armed\n' });
    expect(left.stderr).toContain('left work running after it ended; the interpreter was stopped');
    const next = await python.run("print('innocent')");
    expect(next).toMatchObject({ exitCode: 0, stdout: 'innocent\n' });
    expect(python.coldStarts).toBe(coldStarts + 1);
  }, 120_000);
});

describe('a Python crash is a failure, with the files the run wrote', () => {
  const backend = new MemoryBackend();
  const python = new PythonSandbox({ backend, timeoutMs: 20_000 });
  afterAll(() => python.close());

  it('reports a fatal interpreter error as crashed (exit code 125) and saves its files', async () => {
    const r = await python.run(
      "open('/before.txt', 'w').write('kept')\nprint('about to crash')\nimport os\nos.abort()",
    );
    expect(r).toMatchObject({ stopped: 'crashed', exitCode: 125, saved: ['/before.txt'] });
    expect(r.error).toBeTruthy();
    expect(r.stdout).toContain('about to crash');
    expect(r.stderr).toContain('python: the interpreter crashed');
    expect(await backend.read('/before.txt')).toBe('kept');
    const next = await python.run("print(open('/before.txt').read())");
    expect(next).toMatchObject({ exitCode: 0, stdout: 'kept\n' });
  }, 120_000);

  it('answers os.system like a machine without a shell, and keeps the interpreter', async () => {
    await python.warm();
    const coldStarts = python.coldStarts;
    const r = await python.run(
      "open('/sys_out.txt', 'w').write('x')\nimport os\nprint(os.system('ls /'))",
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: `${127 << 8}\n`, saved: ['/sys_out.txt'] });
    expect(r.stderr).toContain('running programs is not available in this sandbox');
    expect(r.stopped).toBeUndefined();
    expect(python.coldStarts).toBe(coldStarts);
  }, 90_000);

  it('hands back files next to a symbolic-link loop and reports the link as not saved', async () => {
    const r = await python.run(
      [
        'import os',
        "os.makedirs('/tree', exist_ok=True)",
        "open('/tree/data.txt', 'w').write('inside')",
        "os.symlink('/tree', '/tree/loop')",
        "print('linked')",
      ].join('\n'),
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: 'linked\n', saved: ['/tree/data.txt'] });
    expect(r.notSaved).toEqual([
      { path: '/tree/loop', reason: 'symbolic link: only regular files are saved' },
    ]);
    expect(await backend.read('/tree/data.txt')).toBe('inside');
    expect((await python.run("print('next')")).stdout).toBe('next\n');
    // A workspace file written elsewhere under the link's path replaces the link in Python.
    await python.run("import os\nos.makedirs('/aside')\nos.symlink('/aside', '/inbox')");
    await backend.write('/inbox/new.txt', 'from bash');
    const read = await python.run("print(open('/inbox/new.txt').read())");
    expect(read).toMatchObject({ exitCode: 0, stdout: 'from bash\n', deleted: [] });
    expect(await backend.read('/inbox/new.txt')).toBe('from bash');
  }, 90_000);

  it("keeps os._exit's exit code and files, and loads a fresh interpreter next", async () => {
    await python.warm();
    const coldStarts = python.coldStarts;
    const r = await python.run("open('/exit.txt', 'w').write('bye')\nimport os\nos._exit(3)");
    expect(r).toMatchObject({ exitCode: 3, saved: ['/exit.txt'] });
    expect(r.stopped).toBeUndefined();
    expect((await python.run("print('again')")).stdout).toBe('again\n');
    expect(python.coldStarts).toBe(coldStarts + 1);
  }, 120_000);
});

describe('Python memory is capped', () => {
  const python = new PythonSandbox({ backend: new MemoryBackend(), memoryLimitMb: 64 });
  afterAll(() => python.close());

  it('raises MemoryError at memoryLimitMb and keeps serving', async () => {
    // 100 chunks of 10 MB would be 1 GB: far past the limit.
    const r = await python.run(
      [
        'chunks = []',
        'try:',
        '    for _ in range(100):',
        '        chunks.append(bytearray(10_000_000))',
        'except MemoryError:',
        "    print('MemoryError after', len(chunks))",
        'del chunks',
      ].join('\n'),
    );
    expect(r.exitCode).toBe(0);
    const n = Number(/^MemoryError after (\d+)\n$/.exec(r.stdout)?.[1]);
    expect(n).toBeLessThan(7);
    expect(r.stderr).toContain('reached the memory limit of this sandbox (64 MiB)');
    expect((await python.run("print('still here')")).stdout).toBe('still here\n');
    expect(python.coldStarts).toBe(1);
  }, 90_000);

  // The process data limit (ulimit -d) is enforced by Linux; elsewhere only the WebAssembly cap.
  if (process.platform !== 'linux') console.info('skipped: the process data limit is Linux-only');
  it.skipIf(process.platform !== 'linux')(
    'bounds what Python makes JavaScript allocate too (the process data limit)',
    async () => {
      // 150 JavaScript copies of 10 MB: 1.5 GB, past the process limit of 64 MiB + 1 GiB.
      const r = await python.run(
        [
          'from pyodide.ffi import to_js',
          'kept = []',
          'try:',
          '    for _ in range(150):',
          "        kept.append(to_js(b'x' * 10_000_000))",
          'except Exception as e:',
          "    print('refused after', len(kept))",
          'del kept',
        ].join('\n'),
      );
      // Where the limit bites decides the outcome: an ArrayBuffer refused (a Python exception),
      // or V8's own heap (the process ends: a crash, reported as one). Never all 1.5 GB.
      if (r.stopped === 'crashed') {
        expect(r).toMatchObject({ exitCode: 125, error: expect.stringMatching(/out of memory/) });
      } else {
        expect(r.exitCode).toBe(0);
        expect(Number(/^refused after (\d+)\n$/.exec(r.stdout)?.[1])).toBeLessThan(150);
      }
      expect((await python.run("print('still here')")).stdout).toBe('still here\n');
    },
    90_000,
  );
});
