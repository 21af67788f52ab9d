import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './result.js';

const root = new URL('..', import.meta.url).pathname;

/** Milliseconds to import `specifiers` in order in a fresh Node process, each timed. */
function timeImports(script: string): number[] {
  const out = spawnSync(process.execPath, [script], { cwd: root, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`import timing failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').pop() ?? '[]') as number[];
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/**
 * Cold `import 'taskline'` on top of `import '@livekit/agents'` (target ≤ +50 ms), each
 * run in a fresh process against the built package's main export (`npm run build` first).
 */
export async function runImportBench(runs = 9): Promise<BenchResult[]> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, { import: string }>;
  };
  const entry = join(root, pkg.exports['.']?.import ?? 'dist/index.js');
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
await import(${JSON.stringify(entry)});
const t2 = performance.now();
console.log(JSON.stringify([t1 - t0, t2 - t1]));\n`,
  );
  const agents: number[] = [];
  const added: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [a, t] = timeImports(script);
    agents.push(a ?? Number.NaN);
    added.push(t ?? Number.NaN);
  }
  const base = median(agents);
  const extra = median(added);
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
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await runImportBench(), null, 2));
}
