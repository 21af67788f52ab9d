#!/usr/bin/env node
// The `taskline` command. In this repository it runs the TypeScript sources through tsx;
// in an installed package it runs the built JavaScript.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
let entry = new URL('../dist/bundle/cli/main.js', import.meta.url).href;
try {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  if (existsSync(source)) entry = new URL('../src/cli/main.ts', import.meta.url).href;
} catch {
  // tsx is a dev tool: without it, modules must be JavaScript.
}
const { main } = await import(entry);
process.exitCode = await main(process.argv.slice(2));
// Sessions may leave idle handles behind after closing; the call is over.
process.exit();
