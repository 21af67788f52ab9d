// Checks the built package the way a user gets it:
//  1. In the repository: `taskline` and every subpath of package.json "exports" resolve,
//     no production entry (the root and its concern subpaths) reaches the testing kit, each
//     root namespace is its subpath (the same bindings, from one build), and a call driven
//     from `taskline/testing` reaches tasks from `taskline` (one shared call context).
//  2. In a fresh app (scripts/check-fresh-app.mjs): the packed tarball installed next to
//     @livekit/agents@1.9.0 and zod@4, exactly as a user would; every subpath imports and
//     type-checks there. Skip it with --no-fresh-app.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const testingFile = resolve(root, pkg.exports['./testing'].import);
/** Subpaths that are test tooling; every other entry is production code. */
const TOOLING = new Set(['./testing', './scenarios']);
/** The root namespace each concern subpath also is. */
const NAMESPACES = {
  './app': 'app',
  './tasks': 'tasks',
  './parsers': 'parsers',
  './telephony': 'telephony',
  './flows': 'flows',
  './deep-agent': 'deepAgent',
  './delegation': 'delegation',
  './observability': 'observability',
};
const entries = Object.entries(pkg.exports).filter(([, v]) => typeof v === 'object');

/** Every file reachable from `entry` through relative static imports. */
function reachable(entry) {
  const seen = new Set();
  const stack = [entry];
  while (stack.length) {
    const file = stack.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:import|export)\s*(?:[^'";]*?from\s*)?['"](\.[^'"]+)['"]/g)) {
      stack.push(resolve(dirname(file), m[1]));
    }
  }
  return seen;
}

let main;
for (const [subpath, entry] of entries) {
  if (TOOLING.has(subpath)) continue;
  const files = reachable(resolve(root, entry.import));
  if (subpath === '.') main = files;
  const leaked = [...files].filter((f) => f === testingFile || f.includes('/testing/'));
  if (leaked.length) {
    const name = `taskline${subpath.slice(1)}`;
    console.error(`import '${name}' reaches the testing kit:\n  ${leaked.join('\n  ')}`);
    process.exit(1);
  }
  // The durable service is its own wing: the in-call surface (and the root) never loads it
  // statically (esbuild marks each bundled module with a `// dist/<path>` line).
  const service =
    subpath === './service'
      ? []
      : [...files].filter((f) => /^\/\/ dist\/service\//m.test(readFileSync(f, 'utf8')));
  if (service.length) {
    const name = `taskline${subpath.slice(1)}`;
    console.error(`import '${name}' reaches taskline/service:\n  ${service.join('\n  ')}`);
    process.exit(1);
  }
}

const taskline = await import('taskline');
const testing = await import('taskline/testing');
for (const name of ['defineTask', 'defineCallModule', 'attachCall', 'callOf', 'TasklineError']) {
  if (!(name in taskline)) throw new Error(`taskline does not export ${name}`);
}
for (const [subpath] of entries) {
  const name = `taskline${subpath.slice(1)}`;
  const mod = await import(name);
  if (Object.keys(mod).length === 0) throw new Error(`${name} exports nothing`);
  const ns = NAMESPACES[subpath];
  if (ns === undefined) continue;
  const inRoot = taskline[ns];
  if (!inRoot) throw new Error(`taskline has no \`${ns}\` namespace for ${name}`);
  const keys = Object.keys(mod).sort().join(',');
  if (Object.keys(inRoot).sort().join(',') !== keys) {
    throw new Error(`taskline.${ns} and ${name} export different names`);
  }
  for (const key of Object.keys(mod)) {
    if (inRoot[key] !== mod[key]) throw new Error(`taskline.${ns}.${key} is not ${name}'s ${key}`);
  }
}
for (const subpath of Object.keys(NAMESPACES)) {
  if (!(subpath in pkg.exports)) throw new Error(`package.json "exports" lacks ${subpath}`);
}
if ('date' in taskline || 'number' in taskline || 'email' in taskline) {
  throw new Error('a generic name (date, number, email) leaked into the root of taskline');
}
for (const name of [
  'ScriptedLLM',
  'SimulatedCaller',
  'VirtualClock',
  'startFakeOpenAI',
  'expectCall',
]) {
  if (!(name in testing)) throw new Error(`taskline/testing does not export ${name}`);
}

// A keyed PIN from the simulated caller (testing entry) must reach collectDigits (main entry).
const { initializeLogger, llm, voice } = await import('@livekit/agents');
initializeLogger({ pretty: false, level: 'silent' });
const pin = taskline.telephony.collectDigits({
  name: 'pin',
  prompt: 'PIN?',
  minDigits: 4,
  maxDigits: 4,
});
let outcome;
class Desk extends voice.Agent {
  constructor() {
    super({
      instructions: 'desk',
      tools: {
        ask: llm.tool({
          description: 'ask',
          execute: async () => {
            outcome = await pin.run();
            return outcome.status;
          },
        }),
      },
    });
  }
}
const model = new testing.ScriptedLLM().for(Desk, [
  { toolCalls: [{ name: 'ask' }] },
  { say: 'ok' },
]);
const caller = await testing.SimulatedCaller.start({ agent: new Desk(), llm: model });
await caller.say('pin please');
await caller.dtmf('4321');
await caller.close();
if (outcome?.status !== 'ok' || outcome.value !== '4321') {
  throw new Error(`a call across entry points failed: ${JSON.stringify(outcome)}`);
}
console.log(
  `package ok: 'taskline' is ${main.size} files; ${entries.length} entry points resolve, the production ones without the testing kit; a call works across entries`,
);
if (!process.argv.includes('--no-fresh-app')) {
  const fresh = spawnSync(process.execPath, [resolve(root, 'scripts/check-fresh-app.mjs')], {
    stdio: 'inherit',
  });
  process.exit(fresh.status ?? 1);
}
process.exit(0);
