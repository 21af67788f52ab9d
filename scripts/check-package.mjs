// Checks the built package the way a user gets it:
//  1. In the repository: `taskline` and `taskline/testing` resolve through package.json
//     "exports", the main entry never reaches the testing kit, and a call driven from
//     `taskline/testing` reaches tasks from `taskline` (one shared call context).
//  2. In a fresh app (scripts/check-fresh-app.mjs): the packed tarball installed next to
//     @livekit/agents@1.9.0 and zod@4, exactly as a user would. Skip it with --no-fresh-app.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const mainFile = resolve(root, pkg.exports['.'].import);
const testingFile = resolve(root, pkg.exports['./testing'].import);

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

const main = reachable(mainFile);
const leaked = [...main].filter((f) => f === testingFile || f.includes('/testing/'));
if (leaked.length) {
  console.error(`import 'taskline' reaches the testing kit:\n  ${leaked.join('\n  ')}`);
  process.exit(1);
}

const taskline = await import('taskline');
const testing = await import('taskline/testing');
for (const name of [
  'defineTask',
  'TypedTask',
  'collectDigits',
  'flow',
  'TaskManager',
  'createFileTools',
]) {
  if (!(name in taskline)) throw new Error(`taskline does not export ${name}`);
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
const pin = taskline.collectDigits({ name: 'pin', prompt: 'PIN?', minDigits: 4, maxDigits: 4 });
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
  `package ok: 'taskline' is ${main.size} files, none from the testing kit; a call works across entries`,
);
if (!process.argv.includes('--no-fresh-app')) {
  const fresh = spawnSync(process.execPath, [resolve(root, 'scripts/check-fresh-app.mjs')], {
    stdio: 'inherit',
  });
  process.exit(fresh.status ?? 1);
}
process.exit(0);
