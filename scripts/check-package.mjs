// Checks the built package the way a user imports it: `taskline` and `taskline/testing`
// resolve through package.json "exports", and the main entry never reaches the testing kit.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Every dist file reachable from `entry` through relative static imports. */
function reachable(entry) {
  const seen = new Set();
  const stack = [entry];
  while (stack.length) {
    const file = stack.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/g)) {
      stack.push(resolve(dirname(file), m[1]));
    }
  }
  return seen;
}

const main = reachable(resolve(root, 'dist/index.js'));
const leaked = [...main].filter((f) => f.includes('/dist/testing/'));
if (leaked.length) {
  console.error(`import 'taskline' reaches the testing kit:\n  ${leaked.join('\n  ')}`);
  process.exit(1);
}
const taskline = await import('taskline');
const testing = await import('taskline/testing');
for (const name of ['defineTask', 'TypedTask', 'attachCall', 'TasklineError']) {
  if (!(name in taskline)) throw new Error(`taskline does not export ${name}`);
}
for (const name of ['ScriptedLLM', 'SimulatedCaller', 'VirtualClock', 'startFakeOpenAI']) {
  if (!(name in testing)) throw new Error(`taskline/testing does not export ${name}`);
}
console.log(`package ok: ${main.size} modules behind 'taskline', none from the testing kit`);
