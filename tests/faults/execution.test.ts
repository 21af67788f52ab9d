// Faults in code execution: the opt-in local shell's commands that escape their process group
// (setsid, nohup, double forks) or hold its output open, and sandboxes closed while they work.
// Each asserts what the command's caller gets, that the time limit held, that no process the
// command started is left (found by a unique argument in /proc), and that close() returns.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalShell } from '../../src/deep-agent/tools/execute/local.js';

const linux = process.platform === 'linux';
if (!linux) console.info('execution faults: skipped, they read /proc (Linux only)');

let seq = 0;
/** A `sleep` duration no other process on this machine has: it marks one test's processes. */
function marker(): string {
  seq += 1;
  return `${600 + (process.pid % 300)}.${Date.now() % 100_000}${seq}`;
}

/** Processes whose command line has `mark` as an argument. */
function processesWith(mark: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(mark);
      } catch {
        return false;
      }
    });
}

/** Waits (bounded) until `check` holds; polling /proc is the only event a process gives. */
async function until(check: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

const cwd = mkdtempSync(join(tmpdir(), 'taskline-local-faults-'));
const leftovers: string[] = [];
afterAll(() => {
  // A failing test must not leave its sleepers behind.
  for (const mark of leftovers) for (const pid of processesWith(mark)) process.kill(pid, 'SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

/** A mark registered for clean-up. */
function mark(): string {
  const m = marker();
  leftovers.push(m);
  return m;
}

describe.skipIf(!linux).each([
  ['auto', 'auto'],
  ['the process-group fallback', 'process-group'],
] as const)('the local shell ends every process a command started (%s)', (_, containment) => {
  // Limits far above what the commands take, but for the one test of the limit itself.
  const shell = new LocalShell({
    cwd,
    dangerouslyAllowUnsandboxed: true,
    timeoutMs: 15_000,
    containment,
  });
  const limited = new LocalShell({
    cwd,
    dangerouslyAllowUnsandboxed: true,
    timeoutMs: 3_000,
    containment,
  });
  afterAll(() => Promise.all([shell.close(), limited.close()]));

  it('returns when the command ends although a setsid child holds its output', async () => {
    const m = mark();
    const r = await shell.exec(`setsid sleep ${m} & echo started`);
    expect(r).toMatchObject({ stdout: 'started\n', exitCode: 0 });
    expect(r.stopped).toBeUndefined();
    expect(await until(() => processesWith(m).length === 0)).toBe(true);
  });

  it('stops a command at its time limit although it waits on a setsid child', async () => {
    const m = mark();
    const r = await limited.exec(`echo before; setsid -w sleep ${m}`);
    expect(r).toMatchObject({ stdout: 'before\n', exitCode: 124, stopped: 'timeout' });
    expect(r.stderr).toContain('stopped after 3000 ms');
    expect(await until(() => processesWith(m).length === 0)).toBe(true);
  });

  it('ends background processes that let go of the output (nohup, double fork)', async () => {
    const a = mark();
    const b = mark();
    const r = await shell.exec(
      `nohup sleep ${a} >/dev/null 2>&1 & (setsid sleep ${b} >/dev/null 2>&1 &); echo started`,
    );
    expect(r).toMatchObject({ stdout: 'started\n', exitCode: 0 });
    expect(await until(() => processesWith(a).length + processesWith(b).length === 0)).toBe(true);
  });

  it('ends a command and its processes on close(), and close() returns', async () => {
    const closing = new LocalShell({
      cwd,
      dangerouslyAllowUnsandboxed: true,
      timeoutMs: 60_000,
      containment,
    });
    const m = mark();
    const running = closing.exec(`setsid sleep ${m} & sleep ${m}`);
    expect(await until(() => processesWith(m).length === 2)).toBe(true);
    await closing.close();
    expect(await running).toMatchObject({ stopped: 'cancelled', exitCode: 130 });
    expect(await until(() => processesWith(m).length === 0)).toBe(true);
    await expect(closing.exec('echo late')).rejects.toMatchObject({ code: 'session_closed' });
  });
});

describe.skipIf(!linux)('where a PID namespace is available', () => {
  it('holds even a process that leaves the session and clears its environment', async (ctx) => {
    const shell = new LocalShell({ cwd, dangerouslyAllowUnsandboxed: true, timeoutMs: 15_000 });
    if ((await shell.containment()) !== 'pid-namespace') {
      console.info('skipped: this machine gives no PID namespace (unshare refused)');
      ctx.skip();
    }
    const m = mark();
    const r = await shell.exec(`setsid env -i sleep ${m} >/dev/null 2>&1 & echo started`);
    expect(r).toMatchObject({ stdout: 'started\n', exitCode: 0 });
    expect(await until(() => processesWith(m).length === 0)).toBe(true);
    await shell.close();
  });
});

/** Runs a module in a fresh Node process (tsx) and resolves with its output and exit code. */
function node(source: string): Promise<{ out: string; code: number | null }> {
  seq += 1;
  const file = join(cwd, `script-${seq}.mts`);
  writeFileSync(file, source);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
    });
    child.stderr.on('data', (b) => {
      out += b;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 140_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ out, code });
    });
  });
}

describe('closing sandboxes while they work', () => {
  const source = (start: string) => `
    import { ExecutionSandbox } from '${join(process.cwd(), 'src/deep-agent/tools/execute/sandbox.ts')}';
    import { MemoryBackend } from '${join(process.cwd(), 'src/deep-agent/tools/files/backends/memory.ts')}';
    const sandbox = new ExecutionSandbox({ backend: new MemoryBackend() });
    let started;
    const running = new Promise((r) => { started = r; });
    const result = ${start};
    await running;
    await sandbox.close();
    console.log('close returned', JSON.stringify((await result).stopped));
  `;

  it('returns from close() while a bash command runs (the process does not just exit)', async () => {
    const r = await node(
      source("sandbox.exec('while true; do :; done', { onStarted: () => started() })"),
    );
    expect(r.out).toContain('close returned "cancelled"');
    expect(r.code).toBe(0);
  }, 60_000);

  it('returns from close() while Python runs', async () => {
    const r = await node(
      source(
        "(async () => { await sandbox.python.warm(); return sandbox.python.run('while True: pass', { onStarted: () => started() }); })()",
      ),
    );
    expect(r.out).toContain('close returned "cancelled"');
    expect(r.code).toBe(0);
  }, 150_000);
});
