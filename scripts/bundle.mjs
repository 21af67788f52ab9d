// Bundles the compiled package (dist/) into dist/bundle/: one file per entry point (the
// root, each concern's subpath, testing, scenarios, the CLI) plus shared chunks, so
// `import 'taskline'` loads a few dozen files instead of ~120 modules (the cold-import target
// is ≤ +50 ms over @livekit/agents) and a subpath loads only its concern's. All entry points
// go through one build with code splitting, so state such as the per-session call context
// exists once whichever entry a module was loaded from. Dependencies stay external.
import { copyFileSync } from 'node:fs';
import { build } from 'esbuild';

await build({
  entryPoints: [
    'dist/index.js',
    'dist/app/index.js',
    'dist/tasks/index.js',
    'dist/tasks/parsers/index.js',
    'dist/telephony/index.js',
    'dist/flows/index.js',
    'dist/deep-agent/index.js',
    'dist/delegation/index.js',
    'dist/service/index.js',
    'dist/testing/index.js',
    'dist/observability/index.js',
    'dist/scenarios/index.js',
    'dist/scenarios/worker.js',
    'dist/cli/main.js',
  ],
  outbase: 'dist',
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});

// The live console (console/*.ts, browser code) served by `taskline delegations serve` at
// /console: one module plus chunks, Mermaid bundled in (loaded when a diagram is first shown),
// nothing fetched from another origin.
await build({
  entryPoints: ['console/main.ts'],
  outdir: 'dist/bundle/console',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  chunkNames: 'chunk-[hash]',
  legalComments: 'linked',
  logLevel: 'warning',
});
for (const file of ['index.html', 'style.css'])
  copyFileSync(`console/${file}`, `dist/bundle/console/${file}`);
