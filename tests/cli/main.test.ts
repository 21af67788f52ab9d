// `taskline` as a user runs it: a real process (bin/taskline.js), its stdout, stderr and
// exit code. Help and version go to stdout with exit 0, bad usage names the problem and
// exits 2, a failed command or call prints one line with the cause and exits 1.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../src/testing/openai-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const version = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }
).version;
// Inside the repository, so a module there resolves @livekit/agents like an app's would.
const scratch = join(root, '.tmp', `cli-main-${process.pid}`);
mkdirSync(scratch, { recursive: true });
const servers: FakeOpenAIServer[] = [];
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await Promise.all(servers.map((s) => s.close()));
});

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function taskline(args: string[], env: Record<string, string | undefined> = {}): Promise<Exit> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  if (!('OPENAI_API_KEY' in env)) delete childEnv.OPENAI_API_KEY;
  if (!('LOG_LEVEL' in env)) delete childEnv.LOG_LEVEL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin/taskline.js'), ...args], {
      cwd: root,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('taskline: help, version, usage errors', () => {
  it.each([
    [['--help'], /^usage: taskline <command>/],
    [['-h'], /^usage: taskline <command>/],
    [['help', 'run'], /^usage: taskline run <module>/],
    [['run', '--help'], /^usage: taskline run <module>/],
    [['run', '-h'], /^usage: taskline run <module>/],
    [['delegations', '--help'], /^usage: taskline delegations serve/],
    [['delegations', 'serve', '--help'], /^usage: taskline delegations serve/],
  ])('taskline %j prints help on stdout and exits 0', { timeout: 60_000 }, async (args, usage) => {
    const r = await taskline(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(usage);
    expect(r.stderr).not.toMatch(/usage/);
  });

  it('prints the package version', { timeout: 60_000 }, async () => {
    for (const flag of ['--version', '-v']) {
      const r = await taskline([flag]);
      expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
    }
  });

  it('names an unknown command, option or subcommand and exits 2', {
    timeout: 60_000,
  }, async () => {
    const unknown = await taskline(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^taskline: unknown command "frobnicate"\nusage: taskline/);
    const option = await taskline(['run', 'examples/callback', '--frob']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^taskline run: Unknown option '--frob'/);
    const none = await taskline(['delegations']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^taskline delegations: missing subcommand\nusage:/);
    const sub = await taskline(['delegations', 'start']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toMatch(/^taskline delegations: unknown subcommand "start"/);
    const noModule = await taskline(['run']);
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toMatch(/^taskline run: missing <module>/);
  });
});

describe('taskline run: failures exit 1 with one line', () => {
  it('a missing module', { timeout: 60_000 }, async () => {
    const r = await taskline(['run', 'examples/nope']);
    expect(r).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'taskline: No module at examples/nope.\n',
    });
  });

  it('a wrong OpenAI key, through the real openai plugin', { timeout: 60_000 }, async () => {
    const server = await startFakeOpenAI([{ content: 'never sent' }], { apiKey: 'sk-right' });
    servers.push(server);
    const r = await taskline(['run', 'examples/callback'], {
      OPENAI_API_KEY: 'sk-wrong',
      OPENAI_BASE_URL: server.url,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'taskline: the call failed: the model failed (openai.LLM): 401 Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.\n',
    );
    expect(r.stdout).toContain('caller: Could someone call me back about my claim?');
    expect(r.stdout).not.toContain('result:');
  });

  it("an exception in the bot's onEnter, with the stack under --verbose", {
    timeout: 60_000,
  }, async () => {
    const bot = join(scratch, 'crashing-bot.mjs');
    writeFileSync(
      bot,
      `import { voice } from '@livekit/agents';
class Crashing extends voice.Agent {
  constructor() { super({ id: 'crashing', instructions: 'x' }); }
  async onEnter() { throw new Error('the CRM is down'); }
}
export default {
  name: 'crashing', description: 'throws in onEnter',
  createCall: () => ({ agent: new Crashing(), result: () => 'never' }),
  demoScript: [{ say: 'hello?' }],
  createScriptedModel: () => new voice.testing.FakeLLM([]),
};
`,
    );
    const quiet = await taskline(['run', bot], { OPENAI_API_KEY: undefined });
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).toBe(
      'taskline: the call failed: crashing.onEnter threw: the CRM is down\n',
    );
    const verbose = await taskline(['run', bot, '--verbose']);
    expect(verbose.code).toBe(1);
    expect(verbose.stderr).toMatch(
      /^taskline: the call failed: crashing\.onEnter threw: the CRM is down\nTasklineError: crashing\.onEnter threw[\s\S]*\ncaused by: Error: the CRM is down\n\s+at Crashing\.onEnter/,
    );
  });

  it('a bad script, before the call starts', { timeout: 60_000 }, async () => {
    const script = join(scratch, 'bad.json');
    writeFileSync(script, '[{"say":"balance"},{"dtmf":"12x"}]');
    const r = await taskline(['run', 'examples/ivr-bank', '--script', script]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^taskline: .*bad\.json, action 2 \(\{"dtmf":"12x"\}\): dtmf takes keys/,
    );
  });
});
