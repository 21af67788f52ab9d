/**
 * Soak: does one worker process stay healthy over many calls? Sequential text-mode calls
 * through upstream's real AgentSession machinery (a session, its activity, the agent, the
 * simulated caller's text turns; no room, no audio) in one process, heap and RSS after a
 * full GC after the warm-up and per 1,000 calls. Side by side in one run, each in a process
 * of its own: taskline's survey example (a flow of three captures) vs a plain upstream agent
 * whose scripted model says the same number of lines. Goal (issue 29): at most 1 MB growth
 * per 1,000 calls.
 *
 *   npm run bench -- --only soak     2,000 calls per side after 100 warm-up calls
 *   (TASKLINE_BENCH_QUICK=1: 200 calls after 20, per 100; TASKLINE_SOAK_CALLS overrides)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchResult } from './result.js';

const LOOP = fileURLToPath(new URL('./soak-loop.ts', import.meta.url));
const MB = 1024 * 1024;

interface Sample {
  calls: number;
  rss: number;
  heapUsed: number;
}

interface SideReport {
  side: 'taskline' | 'plain';
  warmup: number;
  calls: number;
  msPerCall: number;
  samples: Sample[];
}

/** Options for {@link runSoakBench}. */
export interface SoakBenchOptions {
  calls?: number;
  warmup?: number;
  /** Calls between samples (default 1,000). */
  every?: number;
}

/** Runs one side's loop in its own process; rejects when a call fails or the loop dies. */
function side(name: 'taskline' | 'plain', warmup: number, calls: number, every: number) {
  return new Promise<SideReport>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', LOOP, name, String(warmup), String(calls), String(every)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        reject(new Error(`soak ${name}: the loop exited ${code} without a report`));
        return;
      }
      resolve(JSON.parse(last) as SideReport);
    });
  });
}

/** Growth per 1,000 calls (MB) of `key`, from the first sample (after warm-up) to the last. */
function growthPer1000(report: SideReport, key: 'rss' | 'heapUsed'): number {
  const first = report.samples[0]!;
  const last = report.samples.at(-1)!;
  return ((last[key] - first[key]) / MB) * (1000 / Math.max(1, last.calls - first.calls));
}

const mb = (bytes: number) => Number((bytes / MB).toFixed(2));

/** The soak rows: growth per 1,000 calls and memory after warm-up, taskline vs plain. */
export async function runSoakBench(options: SoakBenchOptions = {}): Promise<BenchResult[]> {
  const quick = process.env.TASKLINE_BENCH_QUICK === '1';
  const calls = options.calls ?? (Number(process.env.TASKLINE_SOAK_CALLS) || (quick ? 200 : 2000));
  const warmup = options.warmup ?? (quick ? 20 : 100);
  const every = options.every ?? (quick ? 100 : 1000);
  // Both sides at once: each process's memory is its own; the machine's load slows both alike.
  const [mine, theirs] = await Promise.all([
    side('taskline', warmup, calls, every),
    side('plain', warmup, calls, every),
  ]);
  const trail = (r: SideReport) =>
    r.samples.map((s) => `${s.calls}: heap ${mb(s.heapUsed)} MB, RSS ${mb(s.rss)} MB`).join('; ');
  const note = `${calls} sequential text-mode calls per process after ${warmup} warm-up calls (real AgentSession, no room or audio), full GC before each sample; taskline: survey example flow (${mine.msPerCall.toFixed(0)} ms/call) [${trail(mine)}]; baseline: plain upstream agent, scripted model (${theirs.msPerCall.toFixed(0)} ms/call) [${trail(theirs)}]`;
  const rows: BenchResult[] = [];
  const push = (metric: string, value: number, baseline: number, unit: string) =>
    rows.push({
      name: 'soak.calls',
      metric,
      value: Number(value.toFixed(3)),
      unit,
      baseline: Number(baseline.toFixed(3)),
      ratio: baseline === 0 ? 0 : Number((value / baseline).toFixed(3)),
      note,
    });
  push(
    'heap growth per 1,000 calls',
    growthPer1000(mine, 'heapUsed'),
    growthPer1000(theirs, 'heapUsed'),
    'MB',
  );
  push(
    'RSS growth per 1,000 calls',
    growthPer1000(mine, 'rss'),
    growthPer1000(theirs, 'rss'),
    'MB',
  );
  push(
    'heap after warm-up',
    mine.samples[0]!.heapUsed / MB,
    theirs.samples[0]!.heapUsed / MB,
    'MB',
  );
  push('RSS after warm-up', mine.samples[0]!.rss / MB, theirs.samples[0]!.rss / MB, 'MB');
  return rows;
}
