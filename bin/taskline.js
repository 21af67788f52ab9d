#!/usr/bin/env node
// The `taskline` command. It runs the built JavaScript (dist/bundle/cli/main.js). When tsx is
// installed (in this repository, or in an app that has it), modules written in TypeScript can
// be run too, and in this repository the CLI itself runs from its TypeScript sources.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/cli/main.ts', import.meta.url);
const repoTsconfig = fileURLToPath(new URL('../tsconfig.json', import.meta.url));
let entry = new URL('../dist/bundle/cli/main.js', import.meta.url).href;
try {
  const { register } = await import('tsx/esm/api');
  register(existsSync(repoTsconfig) ? { tsconfig: repoTsconfig } : {});
  if (existsSync(fileURLToPath(source))) entry = source.href;
} catch {
  // tsx is a dev tool: without it, modules must be JavaScript.
}
const { main } = await import(entry);
process.exitCode = await main(process.argv.slice(2));
// Sessions may leave idle handles behind after closing; the call is over.
process.exit();
