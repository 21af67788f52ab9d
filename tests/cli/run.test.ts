import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadCallModule, readScript, runCall } from '../../src/cli/run.js';

const savedKey = process.env.OPENAI_API_KEY;
afterEach(() => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

function capture() {
  const lines: string[] = [];
  return { lines, print: (line: string) => lines.push(line) };
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
    const dir = mkdtempSync(join(tmpdir(), 'taskline-run-'));
    const script = join(dir, 'call.json');
    writeFileSync(script, JSON.stringify([{ say: 'call me back' }, { hangup: true }]));
    const out = capture();
    const result = await runCall(await loadCallModule('examples/callback'), {
      ...out,
      script,
      scripted: true,
    });
    expect(out.lines).toContain('caller: (hangs up)');
    expect(result).toBeUndefined();
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
    const dir = mkdtempSync(join(tmpdir(), 'taskline-run-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ shout: 'hi' }]));
    expect(() => readScript(bad)).toThrow(/must be a JSON array/);
    const mod = join(dir, 'mod.mjs');
    writeFileSync(mod, 'export default { name: 1 };');
    await expect(loadCallModule(mod)).rejects.toThrow(/must export default defineCallModule/);
    await expect(loadCallModule(join(dir, 'missing'))).rejects.toThrow(/No module at/);
  });
});
