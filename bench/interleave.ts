/**
 * Fair side-by-side timing for the benchmarks: every contender is warmed up, then run
 * once per round in a rotating order (so none always goes first), in the same process,
 * with a full GC before each run; the median of the rounds is reported. Set-up and
 * clean-up stay outside the timed region.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BenchResult } from './result.js';

/** One timed run of a contender: the time it measured, and what to tear down afterwards. */
export interface Sample {
  /** Measured wall time for the unit of work (e.g. ms per turn). */
  ms: number;
  /** CPU time (user + system) for the same unit of work. */
  cpuMs: number;
  /** Untimed clean-up (closing sessions); all of a round's clean-ups run together. */
  cleanup?: () => Promise<void>;
}

/** A contender: does its own untimed set-up, times its work, returns a {@link Sample}. */
export type Trial = () => Promise<Sample>;

/** How many untimed warm-up rounds and timed rounds to run. */
export interface InterleaveOptions {
  warmup: number;
  runs: number;
}

/** The timed samples of one contender, in round order. */
export interface Timing {
  wall: number[];
  cpu: number[];
}

/** Runs `trials` interleaved, round by round, and returns each one's samples. */
export async function interleave<K extends string>(
  trials: Record<K, Trial>,
  options: InterleaveOptions,
): Promise<Record<K, Timing>> {
  const names = Object.keys(trials) as K[];
  const out = {} as Record<K, Timing>;
  for (const name of names) out[name] = { wall: [], cpu: [] };
  const rounds = options.warmup + options.runs;
  for (let round = 0; round < rounds; round++) {
    const cleanups: Array<() => Promise<void>> = [];
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      collectGarbage();
      const sample = await trials[name]();
      if (sample.cleanup) cleanups.push(sample.cleanup);
      if (round >= options.warmup) {
        out[name].wall.push(sample.ms);
        out[name].cpu.push(sample.cpuMs);
      }
    }
    await Promise.all(cleanups.map((c) => c()));
  }
  return out;
}

/** Starts a stopwatch of wall and CPU time; `stop(units)` gives both per unit of work. */
export function stopwatch(): { stop(units: number): { ms: number; cpuMs: number } } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return {
    stop(units) {
      const ms = performance.now() - wall;
      const used = process.cpuUsage(cpu);
      return { ms: ms / units, cpuMs: (used.user + used.system) / 1000 / units };
    },
  };
}

/**
 * A result row comparing a candidate with a baseline on wall or CPU time: medians as value
 * and baseline, ratio = value / baseline, and the paired ratio (see {@link pairedRatio})
 * in the note next to `notes`.
 */
export function compareTimings(
  row: { name: string; metric: string; notes: readonly string[] },
  candidate: Timing,
  baseline: Timing,
  clock: 'wall' | 'cpu',
): BenchResult {
  const value = median(candidate[clock]);
  const base = median(baseline[clock]);
  const paired = pairedRatio(candidate[clock], baseline[clock]);
  return {
    name: row.name,
    metric: row.metric,
    value: round3(value),
    unit: 'ms',
    baseline: round3(base),
    ratio: round3(value / base),
    note: [`paired per-round ratio ${round3(paired)}`, ...row.notes].join('; '),
  };
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The median of round-by-round ratios a[i] / b[i]: samples from the same round ran back to
 * back, so this ratio is steadier than a ratio of medians when the machine's load drifts.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  return median(Array.from({ length: n }, (_, i) => a[i]! / b[i]!));
}

/** Rounds to 3 decimals for readable JSON. */
export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** A positive number given on the command line as `--name N`, if any. */
export function argNumber(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

let gc: (() => void) | undefined;

/** A full GC, so a heap measurement starts from live data only. */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('gc');
    gc = typeof fn === 'function' ? () => fn() : () => undefined;
  }
  gc();
}
