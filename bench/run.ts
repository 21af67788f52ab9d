/**
 * `npm run bench`: runs every benchmark in bench/, prints one JSON array of results and
 * writes it to bench/results/latest.json.
 *
 *   npm run bench                      all benchmarks at default size
 *   npm run bench -- --quick           smaller sizes (a smoke run in seconds)
 *   npm run bench -- --only kit,tasks  just these (repeat --only or separate with commas)
 *
 * A bench module is `bench/<name>-bench.ts` exporting `run<Name>Bench()` that resolves
 * `BenchResult[]`. files, kit and tasks are built in; any other module present (flows, ...)
 * is found and loaded when it exists and called with no arguments; under --quick the
 * environment has TASKLINE_BENCH_QUICK=1 so it can pick smaller sizes itself.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initializeLogger } from '@livekit/agents';
import { runFilesBench } from './files-bench.js';
import { runKitBench } from './kit-bench.js';
import type { BenchResult } from './result.js';
import { runSandboxBench } from './sandbox-bench.js';
import { runTasksBench } from './tasks-bench.js';

initializeLogger({ pretty: false, level: 'silent' });

const here = dirname(fileURLToPath(import.meta.url));

/** A benchmark the runner knows how to run at default and quick size. */
interface BenchModule {
  name: string;
  run: (quick: boolean) => Promise<unknown>;
}

const builtIn: BenchModule[] = [
  {
    name: 'kit',
    run: (quick) => runKitBench(quick ? { runs: 5, warmup: 1 } : {}),
  },
  {
    name: 'tasks',
    run: (quick) => runTasksBench(quick ? { captures: 3, runs: 5, warmup: 1 } : {}),
  },
  {
    name: 'files',
    run: (quick) => runFilesBench(quick ? { files: 1000, totalMb: 10, runs: 3 } : {}),
  },
  {
    name: 'sandbox',
    run: (quick) => runSandboxBench(quick ? { coldRuns: 3, commands: 20, pythonColdRuns: 1 } : {}),
  },
];

/** bench/<name>-bench.ts files other than the built-in ones (flows, ...), if present. */
function discovered(): BenchModule[] {
  const known = new Set(builtIn.map((b) => b.name));
  const names = readdirSync(here)
    .map((file) => /^([a-z0-9]+)-bench\.ts$/.exec(file)?.[1])
    .filter((name): name is string => name !== undefined && !known.has(name));
  // flows-bench lands separately: load it only once the file exists.
  if (!names.includes('flows') && existsSync(join(here, 'flows-bench.ts'))) names.push('flows');
  return names.sort().map((name) => ({ name, run: (quick) => runDynamic(name, quick) }));
}

async function runDynamic(name: string, quick: boolean): Promise<unknown> {
  const specifier = `./${name}-bench.js`;
  const mod: Record<string, unknown> = await import(specifier);
  const fnName = `run${name[0]!.toUpperCase()}${name.slice(1)}Bench`;
  const fn = mod[fnName];
  if (typeof fn !== 'function') {
    throw new Error(
      `bench/${name}-bench.ts must export ${fnName}(options): Promise<BenchResult[]>`,
    );
  }
  if (quick) process.env.TASKLINE_BENCH_QUICK = '1';
  else delete process.env.TASKLINE_BENCH_QUICK;
  return fn();
}

function isBenchResult(value: unknown): value is BenchResult {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.name === 'string' &&
    typeof r.metric === 'string' &&
    typeof r.value === 'number' &&
    Number.isFinite(r.value) &&
    typeof r.unit === 'string'
  );
}

/** Keeps the documented fields, in the documented order. */
function tidy(r: BenchResult): BenchResult {
  const out: BenchResult = { name: r.name, metric: r.metric, value: r.value, unit: r.unit };
  if (r.baseline !== undefined) out.baseline = r.baseline;
  if (r.ratio !== undefined) out.ratio = r.ratio;
  if (r.note !== undefined) out.note = r.note;
  return out;
}

function parseArgs(argv: string[]): { quick: boolean; only: string[] } {
  const only: string[] = [];
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--only') {
      const value = argv[++i];
      if (!value) throw new Error('--only needs a bench name, e.g. --only kit');
      only.push(...value.split(','));
    } else if (arg.startsWith('--only=')) only.push(...arg.slice('--only='.length).split(','));
    else throw new Error(`Unknown option ${arg}. Use --quick and/or --only <name>[,<name>].`);
  }
  return { quick, only: only.map((s) => s.trim()).filter(Boolean) };
}

async function main(): Promise<number> {
  const { quick, only } = parseArgs(process.argv.slice(2));
  const all = [...builtIn, ...discovered()];
  const unknown = only.filter((name) => !all.some((b) => b.name === name));
  if (unknown.length) {
    console.error(
      `No bench named ${unknown.join(', ')}. Available: ${all.map((b) => b.name).join(', ')}.`,
    );
    return 2;
  }
  const selected = only.length ? all.filter((b) => only.includes(b.name)) : all;
  const results: BenchResult[] = [];
  let failed = 0;
  for (const bench of selected) {
    const t0 = performance.now();
    console.error(`bench ${bench.name}${quick ? ' (quick)' : ''} ...`);
    try {
      const out = await bench.run(quick);
      if (!Array.isArray(out) || !out.every(isBenchResult)) {
        throw new Error(
          'it did not resolve an array of { name, metric, value (a finite number), unit } results',
        );
      }
      results.push(...out.map(tidy));
      console.error(
        `bench ${bench.name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    } catch (error) {
      failed += 1;
      console.error(`bench ${bench.name} FAILED:`, error);
    }
  }
  const json = JSON.stringify(results, null, 2);
  console.log(json);
  const outDir = join(here, 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'latest.json'), `${json}\n`);
  console.error(`wrote ${join('bench', 'results', 'latest.json')} (${results.length} results)`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
