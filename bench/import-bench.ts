import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './result.js';

const root = new URL('..', import.meta.url).pathname;

/** Milliseconds to import @livekit/agents, then `entry`, in a fresh Node process. */
function timeImports(script: string, entry: string): number[] {
  const out = spawnSync(process.execPath, [script, entry], { cwd: root, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`import timing failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').pop() ?? '[]') as number[];
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** Minified bytes of an app bundle (esbuild, dependencies external) made of `code`. */
async function appBytes(code: string): Promise<number> {
  const { build } = await import('esbuild');
  const out = await build({
    stdin: { contents: code, resolveDir: root, loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    minify: true,
    logLevel: 'silent',
  });
  return out.outputFiles[0]?.contents.length ?? Number.NaN;
}

/**
 * Cold `import 'taskline'` on top of `import '@livekit/agents'` (target ≤ +50 ms), each
 * run in a fresh process against the built package's main export (`npm run build` first);
 * then, in the same runs, one concern's subpath (`taskline/telephony`) against the root, and
 * what an app bundler keeps (tree-shaking) of the root for one name against all of it.
 */
export async function runImportBench(runs = 9): Promise<BenchResult[]> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, { import: string }>;
  };
  const entry = join(root, pkg.exports['.']?.import ?? 'dist/index.js');
  const subEntry = join(root, pkg.exports['./telephony']?.import ?? 'dist/telephony/index.js');
  if (!existsSync(entry)) {
    return [
      {
        name: 'cold import',
        metric: 'added ms',
        value: Number.NaN,
        unit: 'ms',
        note: 'the built package is missing: run `npm run build` first',
      },
    ];
  }
  const dir = mkdtempSync(join(root, 'node_modules/.taskline-bench-'));
  const script = join(dir, 'import.mjs');
  writeFileSync(
    script,
    `const t0 = performance.now();
await import('@livekit/agents');
const t1 = performance.now();
await import(process.argv[2]);
const t2 = performance.now();
console.log(JSON.stringify([t1 - t0, t2 - t1]));\n`,
  );
  const agents: number[] = [];
  const added: number[] = [];
  const addedSub: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [a, t] = timeImports(script, entry);
    agents.push(a ?? Number.NaN);
    added.push(t ?? Number.NaN);
    addedSub.push(timeImports(script, subEntry)[1] ?? Number.NaN);
  }
  const base = median(agents);
  const extra = median(added);
  const extraSub = median(addedSub);
  const one = await appBytes(
    `import { defineTask } from ${JSON.stringify(entry)}; console.log(defineTask);`,
  );
  const all = await appBytes(`import * as t from ${JSON.stringify(entry)}; console.log(t);`);
  return [
    {
      name: 'cold import taskline on top of @livekit/agents',
      metric: 'added time (median of fresh processes)',
      value: +extra.toFixed(1),
      unit: 'ms',
      baseline: +base.toFixed(1),
      ratio: +((base + extra) / base).toFixed(3),
      note: `target ≤ +50 ms; ${runs} runs`,
    },
    {
      name: 'cold import taskline/telephony (one concern) on top of @livekit/agents',
      metric: 'added time (median of fresh processes), against the root entry',
      value: +extraSub.toFixed(1),
      unit: 'ms',
      baseline: +extra.toFixed(1),
      ratio: +(extraSub / extra).toFixed(3),
      note: `${runs} runs, interleaved with the root's`,
    },
    {
      name: "app bundle of `import { defineTask } from 'taskline'` (tree-shaken)",
      metric: 'minified bytes kept by esbuild, against the whole root',
      value: +(one / 1024).toFixed(1),
      unit: 'kB',
      baseline: +(all / 1024).toFixed(1),
      ratio: +(one / all).toFixed(3),
      note: 'dependencies external; sideEffects: false lets the bundler drop unused namespaces',
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await runImportBench(), null, 2));
}
