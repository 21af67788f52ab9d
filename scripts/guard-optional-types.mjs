#!/usr/bin/env node
// Keeps the types of optional peer dependencies from leaking into an app that does not
// install them. taskline's declarations import types from its optional peers (pg, fastify,
// better-sqlite3, NATS, the openai plugin, ...); in an app without one of them, and with
// `skipLibCheck: false`, each such import is an error ("Cannot find module 'pg'"). This step
// of `npm run build` marks every such import in dist/**/*.d.ts with `// @ts-expect-error`: with the
// package installed its real types are used; without it the import is `any` and no error is
// reported. scripts/check-fresh-app.mjs checks the result in a fresh app with skipLibCheck off.
//
//   node scripts/guard-optional-types.mjs [--root <dir with package.json and dist/>]
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const rootArg = args.indexOf('--root');
const root =
  rootArg >= 0
    ? resolve(args[rootArg + 1])
    : resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The guard line; its text says why it is there. */
const GUARD = '// @ts-ignore -- optional peer dependency: its types when installed, any otherwise';

/** Adds the guard before every line of `text` that names one of `optional` as a module. */
export function guardOptionalImports(text, optional) {
  const names = optional.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
  const specifier = new RegExp(`(?:from\\s+|import\\()\\s*['"](?:${names})(?:/[^'"]*)?['"]`);
  const out = [];
  for (const line of text.split('\n')) {
    const comment = /^\s*(\*|\/\/|\/\*)/.test(line);
    if (!comment && specifier.test(line) && out.at(-1)?.trim() !== GUARD) {
      out.push(`${line.match(/^\s*/)[0]}${GUARD}`);
    }
    out.push(line);
  }
  return out.join('\n');
}

function declarations(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) found.push(...declarations(full));
    else if (name.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const optional = Object.entries(pkg.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta.optional)
    .map(([name]) => name);
  let guarded = 0;
  for (const file of declarations(join(root, 'dist'))) {
    const text = readFileSync(file, 'utf8');
    const next = guardOptionalImports(text, optional);
    if (next !== text) {
      writeFileSync(file, next);
      guarded += 1;
    }
  }
  console.log(`optional peer types: guarded the imports of ${guarded} declaration file(s)`);
}
