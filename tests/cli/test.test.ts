// `taskline test` as a user runs it: a real process, its output and exit code. A passing
// folder exits 0 with a closing count, a broken expectation fails with file:line and the
// transcript, JUnit XML is written, bad usage exits 2, and audio mode without espeak-ng is
// skipped with the reason outside CI and fails under CI=true.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IVR_BANK, root, scratchDir } from '../scenarios/helpers.js';

const scratch = scratchDir('cli-test');
afterAll(() => scratch.remove());

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function taskline(args: string[], env: Record<string, string | undefined> = {}): Promise<Exit> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  delete childEnv.OPENAI_API_KEY;
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

const good = scratch.write(
  'good.scenario.yaml',
  `module: ${IVR_BANK}\nname: agent by keypad\nturns:\n  - keys: "3"\nexpect:\n  transferred: true\n`,
);
const bad = scratch.write(
  'bad.scenario.yaml',
  `module: ${IVR_BANK}\nname: expects the wrong PIN prompt\nturns:\n  - keys: "1"\n    expect:\n      said: Please say your PIN.\n`,
);

describe('taskline test', () => {
  it('runs a folder: a line per scenario, the failure with file:line and transcript, exit 1, JUnit XML', async () => {
    const junit = join(scratch.dir, 'out', 'junit.xml');
    const r = await taskline(['test', scratch.dir, '--junit', junit]);
    expect(r.code).toBe(1);
    const rel = (p: string) => relative(root, p);
    expect(r.stdout).toContain(`PASS  ${rel(good)}  agent by keypad  (text, `);
    expect(r.stdout).toContain(`FAIL  ${rel(bad)}  expects the wrong PIN prompt  (text, `);
    expect(r.stdout).toContain(
      `      ${rel(bad)}:4  turn 1: expected the agent to say "Please say your PIN."\n      transcript:\n        agent: Welcome to Taskline Bank.`,
    );
    expect(r.stdout).toContain(
      '        caller: [keys 1]\n        agent: Please enter your 4-digit PIN.',
    );
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('scenarios: 1 passed, 1 failed, 0 skipped');
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="taskline" tests="2" failures="1" errors="0" skipped="0">/,
    );
    expect(xml).toContain(`<testcase classname="${rel(good)}" name="agent by keypad"`);
    expect(xml).toContain(
      '<failure message="expected the agent to say &quot;Please say your PIN.&quot;" type="scenario">',
    );
  });

  it('exits 0 when every scenario passes', async () => {
    const r = await taskline(['test', good]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('scenarios: 1 passed, 0 failed, 0 skipped');
    expect(r.stdout).not.toContain('transcript:');
  });

  it('prints the transcript of a passing scenario with --transcript', async () => {
    const r = await taskline(['test', good, '--transcript']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('      transcript:\n        agent: Welcome to Taskline Bank.');
    expect(r.stdout).toContain(
      '        caller: [keys 3]\n        agent: Please hold while I transfer you to a colleague.',
    );
  });

  it.each([
    [['test', '--bogus'], /^taskline test: Unknown option '--bogus'\nusage: taskline test/],
    [['test', '--jobs', 'two'], /^taskline test: --jobs takes a positive number, got "two"/],
    [['test', 'no/such/folder'], /^taskline test: no\/such\/folder: no such file or folder\n$/],
  ])('%j is bad usage: exit 2 with the problem', async (args, message) => {
    const r = await taskline(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('fails when no scenario is found, so an empty run never passes', async () => {
    const r = await taskline(['test', join(root, 'src', 'core')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^taskline test: no \*\.scenario\.yaml found under /);
  });

  it('shows its help', async () => {
    const r = await taskline(['help', 'test']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: taskline test \[paths…\] \[--audio \[--recognizer NAME\]/);
    expect(r.stdout).toContain('--junit FILE');
    expect(r.stdout).toContain(
      '--line NAME     the phone line with a real recogniser: clean, phone, g711',
    );
  });

  it('refuses hearing flags without --audio, and a line the oracle cannot hear through', async () => {
    const [noAudio, oracleLine, badLine, badVoice] = await Promise.all([
      taskline(['test', good, '--recognizer', 'pocketsphinx']),
      taskline(['test', good, '--audio', '--line', 'phone']),
      taskline(['test', good, '--audio', '--recognizer', 'pocketsphinx', '--line', 'tin-can']),
      taskline(['test', good, '--audio', '--voices', 'flite:robot']),
    ]);
    expect(noAudio.code).toBe(2);
    expect(noAudio.stderr).toContain('--recognizer needs --audio');
    expect(oracleLine.code).toBe(2);
    expect(oracleLine.stderr).toContain(
      '--line phone needs a real recogniser (--recognizer pocketsphinx): the oracle hears only the exact audio it made',
    );
    expect(badLine.code).toBe(2);
    expect(badLine.stderr).toContain('there is no line "tin-can": use one of clean, phone, g711');
    expect(badVoice.code).toBe(2);
    expect(badVoice.stderr).toContain('flite has no voice "robot"');
  }, 120_000);

  it('skips audio mode without espeak-ng outside CI, saying why, and fails it under CI=true', async () => {
    const noSpeech = { PATH: '/nonexistent', CI: undefined };
    const skipped = await taskline(['test', good, '--audio'], noSpeech);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(
      /^SKIP {2}audio mode: espeak-ng is not installed \(ENOENT\); install it with: apt-get install espeak-ng/,
    );
    expect(skipped.stdout.trimEnd().split('\n').at(-1)).toBe(
      'scenarios: 0 passed, 0 failed, 1 skipped',
    );
    const failed = await taskline(['test', good, '--audio'], { ...noSpeech, CI: 'true' });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAIL {2}audio mode: espeak-ng is not installed/);
  });
});
