import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { initializeLogger, loggerOptions, voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallModule, defineCallModule, loadCallDemo } from '../../src/app/module.js';
import { loadCallModule, readScript, runCall } from '../../src/cli/run.js';
import { isTasklineError, type TasklineError } from '../../src/core/errors.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../src/testing/openai-server.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';

const saved = {
  key: process.env.OPENAI_API_KEY,
  url: process.env.OPENAI_BASE_URL,
  level: process.env.LOG_LEVEL,
};
const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const [name, value] of [
    ['OPENAI_API_KEY', saved.key],
    ['OPENAI_BASE_URL', saved.url],
    ['LOG_LEVEL', saved.level],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await Promise.all(servers.splice(0).map((s) => s.close()));
  initializeLogger({ pretty: false, level: 'silent' });
});

function capture() {
  const lines: string[] = [];
  return { lines, print: (line: string) => lines.push(line) };
}

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'taskline-run-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

async function failure(promise: Promise<unknown>): Promise<TasklineError> {
  try {
    await promise;
  } catch (error) {
    if (isTasklineError(error)) return error;
    throw error;
  }
  throw new Error('expected the run to fail');
}

describe('taskline run', () => {
  it('plays the module demo and prints the conversation and the typed result', async () => {
    delete process.env.OPENAI_API_KEY;
    const out = capture();
    const result = await runCall(await loadCallModule('examples/callback'), out);
    expect(out.lines).toContain('agent: Who should we ask for?');
    expect(out.lines).toContain('caller: Jane Doe');
    expect(out.lines.at(-1)).toMatch(/^result: \{/);
    expect(result).toMatchObject({ phone: '+14155550199', time: '15:30' });
  });

  it('plays a JSON script file', async () => {
    const script = tempFile(
      'call.json',
      JSON.stringify([{ say: 'call me back' }, { hangup: true }]),
    );
    const out = capture();
    const result = await runCall(await loadCallModule('examples/callback'), {
      ...out,
      script,
      scripted: true,
    });
    expect(out.lines).toContain('caller: (hangs up)');
    expect(result).toBeUndefined();
  });

  it('plays a scenario file as the script: one caller format for run and test', async () => {
    const out = capture();
    const warnings: string[] = [];
    const result = await runCall(await loadCallModule('examples/ivr-bank'), {
      ...out,
      script: 'examples/ivr-bank/balance.scenario.yaml',
      scripted: true,
      warn: (line) => warnings.push(line),
    });
    expect(out.lines).toContain('caller: [keys ****]');
    expect(out.lines).toContain(
      'agent: Your balance is $1,234.56. Thank you for calling. Goodbye.',
    );
    expect(result).toMatchObject({ outcome: 'balance_read' });
    expect(warnings).toEqual([]);
    const turns = tempFile(
      'turns.yaml',
      '- say: how much money is in my account?\n- keys: "4321"\n  gap: 300ms\n',
    );
    expect(readScript(turns).turns).toEqual([
      { say: 'how much money is in my account?' },
      { keys: '4321', gap: '300ms' },
    ]);
  });

  it('still plays the earlier action list, with a deprecation notice naming the new form', async () => {
    const script = tempFile(
      'old.json',
      JSON.stringify([{ say: 'how much money is in my account?' }, { dtmf: '4321', gapMs: 300 }]),
    );
    const read = readScript(script);
    expect(read.turns).toEqual([
      { say: 'how much money is in my account?' },
      { keys: '4321', gap: 300 },
    ]);
    expect(read.deprecation).toMatch(/earlier action format .* \{"keys": "123#", "gap": 250\}/);
    const warnings: string[] = [];
    await runCall(await loadCallModule('examples/ivr-bank'), {
      ...capture(),
      script,
      scripted: true,
      warn: (line) => warnings.push(line),
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^taskline run: deprecated: /);
    const bad = tempFile('bad.json', JSON.stringify([{ say: 'hi' }, { keys: '12x' }]));
    expect(() => readScript(bad)).toThrow(/turn 2 .*keys are DTMF: 0-9 \* # A-D/);
  });

  it('takes typed lines, key presses and /hangup in interactive mode', async () => {
    const input = new PassThrough();
    const out = capture();
    const running = runCall(await loadCallModule('examples/callback'), {
      ...out,
      interactive: true,
      scripted: true,
      input,
    });
    input.write('call me back please\n#12\n/hangup\n');
    input.end();
    await running;
    expect(out.lines).toContain('caller: call me back please');
    expect(out.lines).toContain('caller: [keys 12]');
    expect(out.lines).toContain('caller: (hangs up)');
  });

  it('explains a bad script and a bad module', async () => {
    const bad = tempFile('bad.json', JSON.stringify([{ say: 'hi' }, { shout: 'hi' }]));
    expect(() => readScript(bad)).toThrow(
      /bad\.json, turn 2 \(\{"shout":"hi"\}\): a turn is one of: say: "…", keys: "123#", silence: 8s, barge_in: "…", hangup\. The script must be a scenario file/,
    );
    expect(() => readScript(tempFile('keys.json', '[{"dtmf":"12x"}]'))).toThrow(
      /action 1 .*dtmf takes keys 0-9 \* # A-D/,
    );
    expect(() => readScript(tempFile('text.json', '[{"say": ""}]'))).toThrow(/turn 1 .*say:/);
    expect(() => readScript(tempFile('broken.json', '[{"say": '))).toThrow(/is not YAML or JSON/);
    expect(() => readScript(join(tmpdir(), 'taskline-no-such-script.json'))).toThrow(
      /taskline-no-such-script\.json does not exist/,
    );
    const mod = tempFile('mod.mjs', 'export default { name: 1 };');
    await expect(loadCallModule(mod)).rejects.toThrow(/must export default defineCallModule/);
    await expect(loadCallModule(join(tmpdir(), 'taskline-missing-module'))).rejects.toThrow(
      /No module at/,
    );
  });

  it('checks the script before the call starts: nothing is played or printed', async () => {
    const bad = tempFile('bad.json', '[{"say":"balance"},{"silence":-5}]');
    const out = capture();
    const error = await failure(
      runCall(await loadCallModule('examples/ivr-bank'), { ...out, script: bad, scripted: true }),
    );
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toMatch(/turn 2 .*silence: Too small/);
    expect(out.lines).toEqual([]);
  });

  it('fails a call whose model rejects the API key: the cause, no result, nothing after the failure', async () => {
    const server = await startFakeOpenAI([{ content: 'never sent' }], { apiKey: 'sk-right' });
    servers.push(server);
    process.env.OPENAI_API_KEY = 'sk-wrong';
    process.env.OPENAI_BASE_URL = server.url;
    const out = capture();
    const error = await failure(runCall(await loadCallModule('examples/callback'), out));
    expect(error.code).toBe('call_failed');
    expect(error.details).toEqual({ source: 'model' });
    expect(error.message).toMatch(
      /^the model failed \(openai\.LLM\): 401 Incorrect API key provided/,
    );
    expect(error.cause).toBeInstanceOf(Error);
    expect(out.lines).toEqual([
      '# callback: Books a callback: name, phone number, time and a reminder, all typed.',
      `# model: gpt-4o-mini (openai.LLM, ${server.url})`,
      'agent: Thanks for calling Acme Insurance. How can I help?',
      'caller: Could someone call me back about my claim?',
    ]);
    expect(server.failures.map((f) => f.status)).toContain(401);
    expect(server.requests).toEqual([]);
  });

  it("fails a call whose agent's onEnter throws", async () => {
    class Broken extends voice.Agent {
      constructor() {
        super({ id: 'front_desk', instructions: 'desk' });
      }
      override async onEnter(): Promise<void> {
        throw new Error('the CRM is down');
      }
    }
    const broken = defineCallModule({
      name: 'broken',
      description: 'onEnter throws',
      createCall: () => ({ agent: new Broken(), result: () => 'never printed' }),
      createScriptedModel: () => new ScriptedLLM(),
      demoScript: [{ say: 'hello?' }, { say: 'anyone there?' }],
    });
    const out = capture();
    const error = await failure(runCall(broken as CallModule, out));
    expect(error.code).toBe('call_failed');
    expect(error.details).toEqual({ source: 'agent' });
    expect(error.message).toBe('front_desk.onEnter threw: the CRM is down');
    expect((error.cause as Error).message).toBe('the CRM is down');
    expect(out.lines.some((l) => l.startsWith('result:'))).toBe(false);
    expect(out.lines).not.toContain('caller: anyone there?');
  });

  it('says what to do when a module has no scripted model and there is no API key', async () => {
    delete process.env.OPENAI_API_KEY;
    const production = defineCallModule({
      name: 'production',
      description: 'no demo parts',
      createCall: () => ({ agent: new voice.Agent({ instructions: 'hi' }), result: () => 1 }),
    });
    const out = capture();
    const interactive = await failure(
      runCall(production as CallModule, { ...out, interactive: true, input: new PassThrough() }),
    );
    expect(interactive.code).toBe('invalid_argument');
    expect(interactive.message).toMatch(
      /^production has no scripted model and OPENAI_API_KEY is not set\. Set OPENAI_API_KEY .* demo: \(\) => import\('\.\/demo\.js'\)/,
    );
    const demo = await failure(runCall(production as CallModule, out));
    expect(demo.message).toMatch(
      /^production has no demo script: pass --script call\.scenario\.yaml or --interactive/,
    );
    expect(out.lines).toEqual([]);
  });

  it('echoes keys masked whenever the listening task masks its input', async () => {
    const script = tempFile(
      'pin.json',
      JSON.stringify([{ say: 'how much money is in my account?' }, { dtmf: '4321' }]),
    );
    const out = capture();
    await runCall(await loadCallModule('examples/ivr-bank'), { ...out, script, scripted: true });
    expect(out.lines).toContain('caller: [keys ****]');
    expect(out.lines.join('\n')).not.toContain('4321');

    const input = new PassThrough();
    const typed = capture();
    const running = runCall(await loadCallModule('examples/ivr-bank'), {
      ...typed,
      interactive: true,
      scripted: true,
      input,
    });
    input.end('how much money is in my account?\n#4321\n');
    await running;
    expect(typed.lines).toContain('caller: [keys ****]');
    expect(typed.lines).toContain(
      'agent: Your balance is $1,234.56. Thank you for calling. Goodbye.',
    );
  });

  it('keys the menu choice in clear: only a masked task masks', async () => {
    const script = tempFile('menu.json', JSON.stringify([{ dtmf: '1' }, { dtmf: '4321' }]));
    const out = capture();
    await runCall(await loadCallModule('examples/ivr-bank'), { ...out, script, scripted: true });
    expect(out.lines.filter((l) => l.startsWith('caller:'))).toEqual([
      'caller: [keys 1]',
      'caller: [keys ****]',
    ]);
  });

  it('honours LOG_LEVEL', async () => {
    process.env.LOG_LEVEL = 'warn';
    await runCall(await loadCallModule('examples/callback'), { ...capture(), scripted: true });
    expect(loggerOptions()?.level).toBe('warn');
    process.env.LOG_LEVEL = 'chatty';
    const error = await failure(runCall(await loadCallModule('examples/callback'), capture()));
    expect(error.message).toBe(
      'LOG_LEVEL=chatty is not a log level; use one of trace, debug, info, warn, error, fatal, silent.',
    );
  });
});

describe('call modules', () => {
  it('load their demo parts from a sibling file only when asked', async () => {
    const bank = await loadCallModule('examples/ivr-bank');
    expect(bank.createScriptedModel).toBeUndefined();
    expect(bank.demoScript).toBeUndefined();
    const demo = await loadCallDemo(bank);
    expect(demo.createScriptedModel?.()).toBeInstanceOf(ScriptedLLM);
    expect(demo.demoScript).toEqual([
      { say: 'how much money is in my account?' },
      { keys: '4321' },
    ]);
  });

  it('keep inline demo parts working', async () => {
    const inline = defineCallModule({
      name: 'inline',
      description: 'inline demo',
      createCall: () => ({ agent: new voice.Agent({ instructions: 'hi' }), result: () => 1 }),
      demoScript: [{ hangup: true }],
    });
    expect((await loadCallDemo(inline)).demoScript).toEqual([{ hangup: true }]);
  });
});
