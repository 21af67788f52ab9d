// The "drops into an existing LiveKit app" check: packs taskline, creates a fresh app outside
// the repository that already depends on @livekit/agents@1.9.0 and zod@4, installs the tarball
// (from the npm registry and its cache, ONNXRUNTIME_NODE_INSTALL=skip), and checks what a user
// would see:
//   - exactly one copy of @livekit/agents, @livekit/rtc-node and zod; no engine warnings;
//   - every subpath of "exports" imports, and type-checks through its "types" (also with
//     skipLibCheck off: no optional peer's types leak);
//   - defineTask works, a whole call runs through the testing kit, and a feature whose
//     optional package is missing fails with `missing_dependency` naming it;
//   - the README's testing sample (desk.ts + desk-call.ts) runs as is;
//   - a room worker without the speech plugins exits 1 with missing_dependency;
//   - `npx taskline --version` / `--help` (stdout), an unknown command (exit 2), a missing
//     module, a module with no model and a TypeScript module without tsx (exit 1) say what
//     is wrong;
//   - after `npm install zod@3.25.76`, defineTask works with `zod/v4` schemas and rejects a
//     zod 3 one with a clear error.
// Prints the tarball's size and file count and what the fresh app installs. Needs `npm run
// build` first. Keep it under ~90 s: it runs in .ci/run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { readmeSamples } from './readme-samples.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const started = Date.now();
const env = { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip', npm_config_fund: 'false' };
delete env.OPENAI_API_KEY;
delete env.LOG_LEVEL;
for (const key of Object.keys(env)) {
  // npm run passes its own config down; the fresh app must use its own.
  if (key.startsWith('npm_') && key !== 'npm_config_fund' && key !== 'npm_config_cache') {
    delete env[key];
  }
}

let failures = 0;
function check(ok, what, detail = '') {
  if (ok) console.log(`  ok   ${what}`);
  else {
    failures += 1;
    console.error(`  FAIL ${what}${detail ? `\n${indent(detail)}` : ''}`);
  }
}
const indent = (text) =>
  String(text)
    .trim()
    .split('\n')
    .map((l) => `       ${l}`)
    .join('\n');

/** Runs a command (bounded), returning its status and output. */
function run(cmd, args, cwd, timeoutMs = 180_000) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, out: `${r.stdout}${r.stderr}` };
}
function must(cmd, args, cwd, timeoutMs) {
  const r = run(cmd, args, cwd, timeoutMs);
  if (r.status !== 0) {
    console.error(`check-fresh-app: \`${cmd} ${args.join(' ')}\` failed:\n${r.out}`);
    rmSync(work, { recursive: true, force: true });
    process.exit(1);
  }
  return r;
}
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;

const work = mkdtempSync(join(tmpdir(), 'taskline-fresh-app-'));
try {
  // 1. The tarball.
  const packed = JSON.parse(
    must('npm', ['pack', '--json', '--pack-destination', work], root).stdout,
  );
  const info = packed[0];
  const tarball = join(work, info.filename);
  const unbundled = info.files.filter((f) => /^dist\/(?!bundle\/).*\.js$/.test(f.path));
  console.log(
    `tarball: ${info.filename}, ${(info.size / 1024).toFixed(0)} kB packed, ${(info.unpackedSize / 1024).toFixed(0)} kB unpacked, ${info.entryCount} files`,
  );
  check(
    unbundled.length === 0,
    'the tarball holds no unbundled dist/**/*.js',
    unbundled.map((f) => f.path).join('\n'),
  );
  const entryFiles = Object.values(pkg.exports)
    .filter((v) => typeof v === 'object')
    .flatMap((v) => [v.import, v.types].map((f) => f.replace(/^\.\//, '')));
  // The README's map links a docs/ page per concern: each ships, so the links work in node_modules.
  const docPages = [
    ...new Set(
      [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/\]\((docs\/[\w-]+\.md)/g)].map(
        (m) => m[1],
      ),
    ),
  ];
  check(docPages.length > 0, 'the README links its docs/ pages');
  for (const file of ['LICENSE', 'CHANGELOG.md', 'README.md', ...docPages, ...entryFiles]) {
    check(
      info.files.some((f) => f.path === file),
      `the tarball holds ${file}`,
    );
  }

  // 2. A fresh app that already uses @livekit/agents and zod, then taskline.
  const app = join(work, 'app');
  must('mkdir', ['-p', app], work);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  const base = must('npm', ['install', '--no-audit', '@livekit/agents@1.9.0', 'zod@4'], app);
  const listed = () =>
    run('npm', ['ls', '--all', '--parseable'], app).stdout.split('\n').filter(Boolean);
  const before = new Set(listed().map((l) => l.slice(app.length)));
  const added = must('npm', ['install', '--no-audit', tarball], app);
  const engineWarnings = `${base.out}${added.out}`
    .split('\n')
    .filter((l) => /EBADENGINE|Unsupported engine/.test(l));
  check(
    engineWarnings.length === 0,
    `installs on Node ${process.versions.node} with no engine warning`,
    engineWarnings.join('\n'),
  );
  console.log(`  (installed in ${seconds()})`);

  const copies = (name) => {
    const r = run('npm', ['ls', name, '--all', '--parseable'], app);
    return new Set(r.stdout.split('\n').filter((l) => l.endsWith(`/node_modules/${name}`))).size;
  };
  for (const name of ['@livekit/agents', '@livekit/rtc-node', 'zod']) {
    const n = copies(name);
    check(n === 1, `exactly one copy of ${name} (found ${n})`);
  }
  const all = listed();
  const addedByTaskline = all
    .map((l) => l.slice(app.length))
    .filter((l) => l && !before.has(l))
    .map((l) => l.replace(/^\/node_modules\//, ''));
  const du = run('du', ['-sk', join(app, 'node_modules')], app).stdout.split('\t')[0];
  const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) =>
    all.some((l) => l.endsWith(`/node_modules/${name}`)),
  );
  console.log(
    `  the app installs ${all.length - 1} packages, ${(Number(du) / 1024).toFixed(0)} MB; taskline adds ${addedByTaskline.join(', ')}; optional peers present: ${optional.join(', ') || 'none'} (via @livekit/agents)`,
  );
  check(
    !optional.some((n) => /plugin|better-sqlite3|^pg$|fastify|@nats-io/.test(n)),
    'no plugin, database driver, fastify or NATS package is installed',
    optional.join(', '),
  );

  // 3. Every subpath: imports at run time, and its types resolve for tsc (NodeNext, strict).
  const subpaths = Object.entries(pkg.exports)
    .filter(([, v]) => typeof v === 'object')
    .map(([k]) => `taskline${k.slice(1)}`);
  writeFileSync(
    join(app, 'subpaths.mjs'),
    `${subpaths.map((s, i) => `import * as m${i} from '${s}';`).join('\n')}
const mods = { ${subpaths.map((s, i) => `'${s}': m${i}`).join(', ')} };
for (const [name, mod] of Object.entries(mods)) console.log(name + ' ' + Object.keys(mod).length);
process.exit(0);
`,
  );
  const sub = run('node', ['subpaths.mjs'], app, 60_000);
  for (const name of subpaths) {
    const n = Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(sub.stdout)?.[1] ?? 0);
    check(sub.status === 0 && n > 0, `import '${name}' works (${n} exports)`, sub.out);
  }
  writeFileSync(
    join(app, 'subpaths.ts'),
    `${subpaths.map((s, i) => `import * as m${i} from '${s}';`).join('\n')}
import { defineTask, flows, telephony } from 'taskline';
import { flow } from 'taskline/flows';
export const same: typeof flow = flows.flow;
export const digits = telephony.collectDigits({ prompt: 'PIN?', minDigits: 4, maxDigits: 4 });
export const all = [${subpaths.map((_, i) => `m${i}`).join(', ')}, defineTask];
`,
  );
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: [],
        typeRoots: [join(root, 'node_modules/@types')],
      },
      files: ['subpaths.ts'],
    }),
  );
  const tsc = run(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json', '--pretty', 'false'],
    app,
    120_000,
  );
  check(tsc.status === 0, `every subpath type-checks in the app (tsc, NodeNext)`, tsc.out);
  // The same with skipLibCheck off: taskline's declarations must not need the optional peers
  // the app did not install (pg, fastify, better-sqlite3, NATS, the plugins). Errors inside
  // other packages' declarations (upstream's) are theirs, not counted here.
  const strictConfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8'));
  strictConfig.compilerOptions.skipLibCheck = false;
  writeFileSync(join(app, 'tsconfig.strict.json'), JSON.stringify(strictConfig));
  const strict = run(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.strict.json',
      '--pretty',
      'false',
    ],
    app,
    120_000,
  );
  const leaks = strict.out.split('\n').filter((l) => l.includes('node_modules/taskline/'));
  check(
    leaks.length === 0,
    "skipLibCheck false: no error in taskline's declarations without the optional peers",
    leaks.join('\n'),
  );

  // 4. defineTask, a whole call, and a missing optional package.
  const taskScript = (zod) => `import { z } from '${zod}';
import { llm, voice } from '@livekit/agents';
import { defineTask } from 'taskline';
import { openCheckpointStore } from 'taskline/flows';
import { ScriptedLLM, SimulatedCaller } from 'taskline/testing';
const zip = defineTask({
  name: 'zip',
  instructions: 'Collect the caller ZIP code.',
  prompt: 'What is your ZIP code?',
  schema: z.object({ zip: z.string().regex(/^\\d{5}$/) }),
});
let outcome;
class Desk extends voice.Agent {
  constructor() {
    super({ instructions: 'desk', tools: { ask: llm.tool({ description: 'ask', execute: async () => {
      outcome = await zip.run();
      return outcome.status;
    } }) } });
  }
}
const model = new ScriptedLLM()
  .for(Desk, [{ toolCalls: [{ name: 'ask' }] }, { say: 'Thanks.' }])
  .for('zip', [{ toolCalls: [{ name: 'submit', args: { zip: '94107' } }] }]);
const caller = await SimulatedCaller.start({ agent: new Desk(), llm: model });
await caller.say('my zip please');
await caller.say('nine four one zero seven');
await caller.close();
console.log('outcome ' + JSON.stringify(outcome));
try {
  await openCheckpointStore();
  console.log('store opened');
} catch (error) {
  console.log('store error ' + error.code + ': ' + error.message);
}
process.exit(0);
`;
  writeFileSync(join(app, 'task.mjs'), taskScript('zod'));
  const task = run('node', ['task.mjs'], app, 60_000);
  check(
    /outcome \{"status":"ok","value":\{"zip":"94107"\}/.test(task.stdout),
    'defineTask runs a typed capture in a call (zod 4)',
    task.out,
  );
  check(
    /store error missing_dependency: The package "better-sqlite3" is needed for the SQLite checkpoint store but is not installed\. Install it in your app: npm install better-sqlite3/.test(
      task.stdout,
    ),
    'a missing optional package is a missing_dependency error naming it',
    task.out,
  );

  // 5. The README's testing sample, as is (transpiled, not bundled).
  const samples = readmeSamples(readFileSync(join(root, 'README.md'), 'utf8'));
  for (const name of ['desk.ts', 'desk-call.ts']) {
    const sample = samples.find((s) => s.file === name);
    if (!sample) {
      check(false, `README.md has the sample ${name}`);
      continue;
    }
    const js = transformSync(sample.code, { loader: 'ts', format: 'esm', target: 'node20' }).code;
    writeFileSync(join(app, name.replace(/\.ts$/, '.js')), js);
  }
  const sample = run('node', ['desk-call.js'], app, 60_000);
  check(
    sample.status === 0,
    "the README's testing sample runs and passes its own checks",
    sample.out,
  );

  // 6. The command line.
  const npx = (...args) => run('npx', ['--no-install', 'taskline', ...args], app, 60_000);
  const v = npx('--version');
  check(
    v.status === 0 && v.stdout.trim() === pkg.version,
    `npx taskline --version prints ${pkg.version}`,
    v.out,
  );
  const h = npx('--help');
  check(
    h.status === 0 && /usage: taskline/.test(h.stdout) && !/usage/.test(h.stderr),
    'npx taskline --help prints usage on stdout',
    h.out,
  );
  const rh = npx('run', '--help');
  check(
    rh.status === 0 && /usage: taskline run/.test(rh.stdout),
    'npx taskline run --help',
    rh.out,
  );
  const u = npx('frobnicate');
  check(
    u.status === 2 && /unknown command "frobnicate"/.test(u.stderr),
    'an unknown command exits 2 and is named',
    u.out,
  );
  const m = npx('run', './no-such-bot');
  check(
    m.status === 1 && /No module at \.\/no-such-bot/.test(m.stderr),
    'a missing module exits 1 with a message',
    m.out,
  );
  writeFileSync(
    join(app, 'bot.mjs'),
    `import { voice } from '@livekit/agents';
import { defineCallModule } from 'taskline';
export default defineCallModule({
  name: 'bot',
  description: 'a production module: no scripted model, no demo',
  createCall: () => ({ agent: new voice.Agent({ instructions: 'hi' }), result: () => undefined }),
});
`,
  );
  const b = npx('run', './bot.mjs');
  check(
    b.status === 1 && /no demo script|no scripted model/.test(b.stderr),
    'a module with no scripted model and no OPENAI_API_KEY says what to do',
    b.out,
  );

  // A room worker without the speech plugins refuses to start before it registers.
  writeFileSync(
    join(app, 'worker.mjs'),
    `import { cli, voice } from '@livekit/agents';
import { defineCallModule } from 'taskline';
import { roomAgent, roomServerOptions } from 'taskline/app';
export default roomAgent(defineCallModule({
  name: 'bot',
  description: 'a room bot',
  createCall: () => ({ agent: new voice.Agent({ instructions: 'hi' }), result: () => undefined }),
}));
cli.runApp(roomServerOptions(import.meta.url, { agentName: 'fresh-bot' }));
`,
  );
  const w = run('node', ['worker.mjs', 'start'], app, 60_000);
  check(
    w.status === 1 &&
      /taskline: error: The packages "@livekit\/agents-plugin-openai" and "@livekit\/agents-plugin-silero" are needed/.test(
        w.stderr,
      ) &&
      !/exited before initializing/.test(w.out),
    'a room worker without the plugins says missing_dependency at error level and exits 1',
    w.out,
  );

  writeFileSync(join(app, 'bot.ts'), 'export default {};\n');
  const ts = npx('run', './bot.ts');
  check(
    ts.status === 1 && /bot\.ts is TypeScript: install tsx/.test(ts.stderr),
    'a TypeScript module without tsx says to install tsx',
    ts.out,
  );

  // 7. zod 3.25: schemas from zod/v4 work, a zod 3 schema is refused clearly.
  must('npm', ['install', '--no-audit', 'zod@3.25.76'], app);
  check(copies('zod') === 1, 'after npm install zod@3.25.76, still one copy of zod');
  writeFileSync(
    join(app, 'zod3.mjs'),
    `import { z as z3 } from 'zod';
import { z } from 'zod/v4';
import { defineTask } from 'taskline';
const ok = defineTask({ name: 'zip', instructions: 'zip', schema: z.object({ zip: z.string() }) });
console.log('v4 ok ' + ok.name);
try {
  defineTask({ name: 'old', instructions: 'old', schema: z3.object({ zip: z3.string() }) });
  console.log('v3 accepted');
} catch (error) {
  console.log('v3 refused ' + error.code + ': ' + error.message);
}
`,
  );
  const z3 = run('node', ['zod3.mjs'], app, 60_000);
  check(/v4 ok zip/.test(z3.stdout), 'zod 3.25: defineTask works with zod/v4 schemas', z3.out);
  check(
    /v3 refused invalid_argument: .*zod\/v4/.test(z3.stdout),
    'zod 3.25: a zod 3 schema is refused with a clear error',
    z3.out,
  );
  writeFileSync(join(app, 'task.mjs'), taskScript('zod/v4'));
  const task3 = run('node', ['task.mjs'], app, 60_000);
  check(
    /outcome \{"status":"ok"/.test(task3.stdout),
    'zod 3.25: a whole call with a zod/v4 typed capture works',
    task3.out,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log(`fresh app: ${failures === 0 ? 'ok' : `${failures} failed`} in ${seconds()}`);
process.exit(failures === 0 ? 0 : 1);
