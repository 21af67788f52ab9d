#!/usr/bin/env node
/**
 * The import-graph check (CI: `npm run check:imports`). Fails on
 *   1. an import that runs against the layer order below (a "back arrow"), and
 *   2. any import cycle among src files (static, `export … from`, `import type`, and
 *      `import('…')` with a literal path all count: a cycle of types is still two modules
 *      that cannot be understood apart).
 * and prints every offending edge as `from → to`.
 *
 * Layers, lowest first. A module may import from its own folder and from any LOWER layer,
 * never from a higher one, and never from a sibling folder of the same layer (siblings stay
 * independent, so any one of them can be read, tested and replaced alone):
 *
 *  -1  upstream                    every reach into @livekit/agents internals (one door)
 *   0  core                        clock, errors, logging, PII, optional deps
 *   1  outcome.ts                  Outcome<T> and the policies every task shares
 *   2  observability               OpenTelemetry spans and metrics (on upstream's tracer)
 *   3  tasks, tools                typed capture tasks; deep-agent function tools
 *   4  telephony, flows, delegation   IVR kit; flow runner; TaskManager, sub-agents, task tools,
 *                                  delegation records and the memory store
 *   5  deep-agent                  createDeepAgent: wires tools + delegation + tasks
 *   6  app                         call modules, rooms (what a deployment runs)
 *   7  service                     taskline/service: durable delegation stores, bus, workers,
 *                                  HTTP API and its CLI (no call-side code imports it)
 *   8  testing                     taskline/testing: scripted models, simulated caller
 *   9  scenarios                   taskline/scenarios: call scenarios run on the testing kit
 *  10  cli                         the `taskline` command: the entry point, above everything
 *  11  index.ts                    the package's public surface
 *
 * A new folder under src/ must be given a layer here before it can be imported.
 *
 *   node scripts/check-imports.mjs [--root <dir with src/>]
 *
 * Built on TypeScript's own import scanner (`ts.preProcessFile`, already a dev dependency):
 * dependency-cruiser 18 needs Node 22 and madge pulls a resolver stack for the same answer.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The layer of each top-level unit of src/ (a folder, or a file at the root). */
export const LAYERS = {
  upstream: -1,
  core: 0,
  'outcome.ts': 1,
  observability: 2,
  tasks: 3,
  tools: 3,
  telephony: 4,
  flows: 4,
  delegation: 4,
  'deep-agent': 5,
  app: 6,
  service: 7,
  testing: 8,
  scenarios: 9,
  cli: 10,
  'index.ts': 11,
};

function listSources(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listSources(full));
    else if (/\.(ts|mts|tsx)$/.test(name) && !/\.d\.(ts|mts)$/.test(name)) out.push(full);
  }
  return out;
}

/** The src file a relative specifier names (`./x.js` → `x.ts`, `./dir` → `dir/index.ts`). */
function resolveSpecifier(fromFile, spec) {
  const base = resolve(dirname(fromFile), spec);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  const candidates = [
    base,
    `${stem}.ts`,
    `${stem}.mts`,
    `${stem}.tsx`,
    join(base, 'index.ts'),
    join(base, 'index.mts'),
  ];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** Top-level unit of a file relative to src/: its first folder, or the file name itself. */
function unitOf(relPath) {
  return relPath.split(sep)[0];
}

/** Strongly connected components with more than one file, or a file importing itself. */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    // Iterative Tarjan: a deep import chain must not overflow the stack.
    const work = [[v, 0]];
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    on.add(v);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, i] = frame;
      const next = [...(graph.get(node) ?? [])];
      if (i < next.length) {
        frame[1] += 1;
        const w = next[i];
        if (!idx.has(w)) {
          idx.set(w, index);
          low.set(w, index);
          index += 1;
          stack.push(w);
          on.add(w);
          work.push([w, 0]);
        } else if (on.has(w)) {
          low.set(node, Math.min(low.get(node), idx.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === idx.get(node)) {
        const scc = [];
        let w;
        do {
          w = stack.pop();
          on.delete(w);
          scc.push(w);
        } while (w !== node);
        if (scc.length > 1 || graph.get(node)?.has(node)) out.push(scc);
      }
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** One concrete loop through a component, as a list of files ending where it started. */
function loopIn(graph, scc) {
  const members = new Set(scc);
  const start = [...scc].sort()[0];
  const prev = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== undefined && at !== start; at = prev.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/**
 * Checks the src/ folder under `root`. Returns the problems (empty when the graph is clean)
 * and counts for the summary line.
 */
export function checkImports(root, layers = LAYERS) {
  const src = join(root, 'src');
  const files = listSources(src);
  const graph = new Map();
  const problems = [];
  let edges = 0;
  const rel = (f) => relative(root, f).split(sep).join('/');
  for (const file of files) {
    const deps = new Set();
    graph.set(file, deps);
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: spec } of info.importedFiles) {
      if (!spec.startsWith('.')) continue;
      const target = resolveSpecifier(file, spec);
      if (!target) {
        problems.push(`unresolved import: ${rel(file)} → '${spec}'`);
        continue;
      }
      if (!target.startsWith(src + sep)) {
        problems.push(`import leaves src/: ${rel(file)} → ${rel(target)}`);
        continue;
      }
      edges += 1;
      deps.add(target);
      const from = unitOf(relative(src, file));
      const to = unitOf(relative(src, target));
      if (from === to) continue;
      const lf = layers[from];
      const lt = layers[to];
      for (const [unit, layer, who] of [
        [from, lf, file],
        [to, lt, target],
      ]) {
        if (layer === undefined) {
          problems.push(
            `unknown layer: ${rel(who)} is in src/${unit}, which has no layer; add it to LAYERS in scripts/check-imports.mjs`,
          );
        }
      }
      if (lf === undefined || lt === undefined) continue;
      if (lt > lf) {
        problems.push(
          `back arrow: ${rel(file)} → ${rel(target)} (${from} is layer ${lf}, ${to} is layer ${lt}: a lower layer must not import a higher one)`,
        );
      } else if (lt === lf) {
        problems.push(
          `sibling import: ${rel(file)} → ${rel(target)} (${from} and ${to} are both layer ${lf}: move the shared part down a layer)`,
        );
      }
    }
  }
  for (const scc of cycles(graph)) {
    const loop = loopIn(graph, scc);
    const more = scc.length > loop.length - 1 ? ` (${scc.length} files in this cycle)` : '';
    problems.push(`cycle: ${loop.map(rel).join(' → ')}${more}`);
  }
  return { files: files.length, edges, problems: [...new Set(problems)] };
}

function main(argv) {
  let root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--root' && argv[i + 1]) root = resolve(argv[++i]);
    else {
      console.error(
        `Unknown option ${argv[i]}. Usage: node scripts/check-imports.mjs [--root <dir>]`,
      );
      return 2;
    }
  }
  if (!existsSync(join(root, 'src'))) {
    console.error(`No src/ folder under ${root}.`);
    return 2;
  }
  const { files, edges, problems } = checkImports(root);
  if (problems.length === 0) {
    console.log(`import graph: ${files} files, ${edges} imports, no cycles, no back arrows`);
    return 0;
  }
  console.error(`import graph: ${problems.length} problem(s) in ${files} files, ${edges} imports`);
  for (const p of problems) console.error(`  ✗ ${p}`);
  console.error(
    'Layer order (lowest first): see the table at the top of scripts/check-imports.mjs.',
  );
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
