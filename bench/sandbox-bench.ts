/**
 * The deep agent's sandboxes: cold start and per-command time of the bash sandbox (just-bash
 * in a worker over a FileBackend) next to just-bash run inline on its own in-memory file
 * system, the event loop while a runaway loop runs in each, and the Python sandbox's cold
 * start (pyodide in a permission-confined child) and per-run time.
 */
import { Bash } from 'just-bash';
import { BashSandbox } from '../src/deep-agent/tools/execute/bash.js';
import { PythonSandbox } from '../src/deep-agent/tools/execute/python.js';
import type { FileBackend } from '../src/deep-agent/tools/files/backend.js';
import { MemoryBackend } from '../src/deep-agent/tools/files/backends/memory.js';
import { SqliteFileStore } from '../src/deep-agent/tools/files/backends/store-sqlite.js';
import type { BenchResult } from './result.js';

/** Sizes of the sandbox bench. */
export interface SandboxBenchOptions {
  /** Fresh sandboxes started for the cold-start figures. */
  coldRuns?: number;
  /** Commands timed warm. */
  commands?: number;
  /** Python interpreters loaded for the cold-start figure. */
  pythonColdRuns?: number;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

const round = (n: number) => Math.round(n * 100) / 100;

async function seed(backend: FileBackend): Promise<void> {
  const lines = Array.from({ length: 2000 }, (_, i) => `row ${i},${i % 7 === 0 ? 'match' : 'x'}`);
  await backend.write('/data/rows.csv', `${lines.join('\n')}\n`);
}

/** Longest gap of a 5 ms interval while `fn` runs (how long the event loop was blocked). */
async function longestStall(fn: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  await fn();
  clearInterval(timer);
  return Math.max(worst, performance.now() - last);
}

/** Runs the sandbox bench. */
export async function runSandboxBench(options: SandboxBenchOptions = {}): Promise<BenchResult[]> {
  const quick = process.env.TASKLINE_BENCH_QUICK === '1';
  const coldRuns = options.coldRuns ?? (quick ? 3 : 10);
  const commands = options.commands ?? (quick ? 20 : 200);
  const pyCold = options.pythonColdRuns ?? (quick ? 1 : 3);
  const results: BenchResult[] = [];

  // Bash: cold start (worker + just-bash load + first command) vs inline just-bash.
  const cold: number[] = [];
  for (let i = 0; i < coldRuns; i++) {
    const sandbox = new BashSandbox({ backend: new MemoryBackend() });
    const r = await sandbox.exec('echo hi');
    cold.push(r.durationMs);
    await sandbox.close();
  }
  const inlineCold: number[] = [];
  for (let i = 0; i < coldRuns; i++) {
    const t = performance.now();
    await new Bash().exec('echo hi');
    inlineCold.push(performance.now() - t);
  }
  results.push({
    name: 'bash sandbox cold start',
    metric: 'first command',
    value: round(median(cold)),
    unit: 'ms',
    baseline: round(median(inlineCold)),
    ratio: round(median(cold) / median(inlineCold)),
    note: 'worker thread + just-bash load + `echo hi`; baseline: new Bash() inline (module already loaded)',
  });

  // Bash: per-command time, warm, on memory and SQLite, vs inline just-bash.
  const script =
    'grep -c match /data/rows.csv && cut -d, -f2 /data/rows.csv | sort | uniq -c | wc -l';
  const inline = new Bash({ files: { '/data/rows.csv': '' } });
  await seed({
    write: (p: string, c: string) => inline.writeFile(p, c),
  } as unknown as FileBackend);
  const inlineTimes: number[] = [];
  for (let i = 0; i < commands; i++) {
    const t = performance.now();
    await inline.exec(script);
    inlineTimes.push(performance.now() - t);
  }
  const stores: Array<[string, FileBackend, () => void]> = [
    ['memory', new MemoryBackend(), () => {}],
  ];
  const sqlite = new SqliteFileStore({ path: ':memory:', tenant: 'bench', user: 'u' });
  stores.push(['sqlite', sqlite, () => sqlite.close()]);
  for (const [kind, backend, close] of stores) {
    await seed(backend);
    const sandbox = new BashSandbox({ backend });
    await sandbox.exec('true');
    const times: number[] = [];
    for (let i = 0; i < commands; i++) times.push((await sandbox.exec(script)).durationMs);
    results.push({
      name: `bash sandbox per command (${kind})`,
      metric: 'grep + cut|sort|uniq|wc on 2,000 lines',
      value: round(median(times)),
      unit: 'ms',
      baseline: round(median(inlineTimes)),
      ratio: round(median(times) / median(inlineTimes)),
      note: 'baseline: the same script on inline just-bash with its in-memory file system',
    });
    await sandbox.close();
    close();
  }

  // A runaway loop: how long the caller's event loop stalls.
  const sandbox = new BashSandbox({ backend: new MemoryBackend(), timeoutMs: 500 });
  await sandbox.exec('true');
  const workerStall = await longestStall(() => sandbox.exec('while true; do :; done'));
  await sandbox.close();
  const inlineStall = await longestStall(() =>
    new Bash({ executionLimits: { maxExecutionTimeMs: 500 } }).exec('while true; do :; done'),
  );
  results.push({
    name: 'runaway bash loop (500 ms limit)',
    metric: 'longest event-loop stall',
    value: round(workerStall),
    unit: 'ms',
    baseline: round(inlineStall),
    ratio: round(workerStall / inlineStall),
    note: 'sandbox in a worker vs just-bash inline on the main thread',
  });

  // Python: cold start and per-run time.
  const loads: number[] = [];
  const firstRuns: number[] = [];
  for (let i = 0; i < pyCold; i++) {
    const py = new PythonSandbox({ backend: new MemoryBackend() });
    const t = performance.now();
    await py.warm();
    loads.push(performance.now() - t);
    firstRuns.push((await py.run('print(1)')).durationMs);
    await py.close();
  }
  results.push({
    name: 'python sandbox cold start',
    metric: 'interpreter load',
    value: round(median(loads)),
    unit: 'ms',
    note: 'child process under the permission model + pyodide + standard library; prewarm hides it',
  });
  const backend = new MemoryBackend();
  await seed(backend);
  const py = new PythonSandbox({ backend });
  await py.warm();
  const runs: number[] = [];
  const code =
    "import csv\nrows = list(csv.reader(open('/data/rows.csv')))\nprint(sum(1 for r in rows if r[1] == 'match'))";
  for (let i = 0; i < Math.max(5, commands / 10); i++) runs.push((await py.run(code)).durationMs);
  results.push({
    name: 'python sandbox per run',
    metric: 'csv count on 2,000 lines (warm)',
    value: round(median(runs)),
    unit: 'ms',
    note: `first run after load: ${round(median(firstRuns))} ms; includes syncing changed files in and out`,
  });
  await py.close();
  return results;
}
