// Every file the CLI reads is size-capped and every run is bounded, as a user runs it (a real
// `taskline` process): a bot stuck in a busy loop is stopped at --timeout by `taskline test`
// (one file or several sharing a worker, where only the stuck one fails) and by `taskline run`;
// /dev/zero, a pipe and a 2 MiB file are refused before they are read. Each wait is bounded by
// the child's exit, with a hard wall-clock limit.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readScript } from '../../src/cli/run.js';
import { loadScenario } from '../../src/scenarios/load.js';
import { IVR_BANK, root, scratchDir } from '../scenarios/helpers.js';

const scratch = scratchDir('cli-runaway');
afterAll(() => scratch.remove());

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `taskline …`; kills it (and fails) if it is still running after `hardMs`. */
function taskline(
  args: string[],
  hardMs: number,
  stdin: 'ignore' | number = 'ignore',
): Promise<Exit> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin/taskline.js'), ...args], {
      cwd: root,
      env,
      stdio: [stdin, 'pipe', 'pipe'],
      detached: true, // its own group, so the hard limit can stop its workers too
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => {
      stdout += d;
    });
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const hard = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
      reject(
        new Error(
          `taskline ${args.join(' ')} still running after ${hardMs} ms:\n${stdout}\n${stderr}`,
        ),
      );
    }, hardMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(hard);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

// A bot whose first turn never yields: a synchronous loop in onEnter.
const busy = scratch.write(
  'busy.mjs',
  `import { voice } from '@livekit/agents';
class Busy extends voice.Agent {
  constructor() { super({ id: 'busy', instructions: 'x' }); }
  async onEnter() { for (;;) {} }
}
export default {
  name: 'busy', description: 'loops forever in onEnter',
  createCall: () => ({ agent: new Busy(), result: () => 'never' }),
  demoScript: [{ say: 'hello?' }],
  createScriptedModel: () => new voice.testing.FakeLLM([]),
};
`,
);
const looping = scratch.write(
  'looping.scenario.yaml',
  'module: ./busy.mjs\nname: stuck in a loop\nturns:\n  - say: hello?\n',
);
const good = scratch.write(
  'good.scenario.yaml',
  `module: ${IVR_BANK}\nname: agent by keypad\nturns:\n  - keys: "3"\nexpect:\n  transferred: true\n`,
);

describe('taskline test: every run bounded', () => {
  it('stops one busy-looping scenario at --timeout and fails it', { timeout: 90_000 }, async () => {
    const r = await taskline(['test', looping, '--timeout', '4'], 80_000);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('FAIL');
    expect(r.stdout).toContain('gave up after 4000 ms');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('scenarios: 0 passed, 1 failed, 0 skipped');
  });

  it('a looping scenario sharing a worker fails alone: the other passes', {
    timeout: 120_000,
  }, async () => {
    const r = await taskline(['test', looping, good, '--timeout', '8', '--jobs', '1'], 110_000);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('PASS');
    expect(r.stdout).toMatch(/FAIL .*looping\.scenario\.yaml/);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('scenarios: 1 passed, 1 failed, 0 skipped');
  });
});

describe('every file size-capped', () => {
  it('refuses /dev/zero and a pipe named as scenarios, before reading them', {
    timeout: 60_000,
  }, async () => {
    const r = await taskline(['test', '/dev/zero'], 50_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/dev/zero: not a scenario file or a folder');
    const fifo = join(scratch.dir, 'pipe.scenario.yaml');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status === 0) {
      const p = await taskline(['test', fifo], 50_000);
      expect(p.code).toBe(2);
      expect(p.stderr).toContain('not a scenario file or a folder');
      expect(() => loadScenario(fifo)).toThrow(/is a pipe; a scenario file must be a regular file/);
    } else {
      console.warn('[skipped: mkfifo is not available] the pipe case');
    }
  });

  it('fails a 2 MiB scenario file at once, naming the cap', { timeout: 60_000 }, async () => {
    const huge = scratch.write(
      'huge.scenario.yaml',
      `module: ${IVR_BANK}\nturns:\n${'  - say: hello\n'.repeat(150_000)}`,
    );
    expect(() => loadScenario(huge)).toThrow(
      /huge\.scenario\.yaml:1: the file is 2\.\d MiB; a scenario file is at most 1\.0 MiB/,
    );
    const r = await taskline(['test', huge, '--timeout', '30'], 50_000);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('a scenario file is at most 1.0 MiB');
    expect(r.ms).toBeLessThan(30_000);
  });

  it('taskline run refuses --script /dev/zero and a 2 MiB script before the call', {
    timeout: 60_000,
  }, async () => {
    const r = await taskline(['run', 'examples/ivr-bank', '--script', '/dev/zero'], 50_000);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      '/dev/zero: this is a device; a caller script must be a regular file',
    );
    const big = join(scratch.dir, 'big.json');
    writeFileSync(big, `[${'{"say":"hi"},'.repeat(200_000)}{"say":"hi"}]`);
    expect(() => readScript(big)).toThrow(/a caller script is at most 1\.0 MiB/);
    const m = await taskline(['run', '/dev/zero'], 50_000);
    expect(m.code).toBe(2);
    expect(m.stderr).toContain('is not a module file or folder');
  });
});

describe('taskline run: bounded', () => {
  it('--interactive stops on input that never ends a line (stdin from /dev/zero)', {
    timeout: 90_000,
  }, async () => {
    const zero = openSync('/dev/zero', 'r');
    try {
      const r = await taskline(
        ['run', 'examples/ivr-bank', '--interactive', '--scripted'],
        80_000,
        zero,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('A typed line is longer than 8 KiB');
    } finally {
      closeSync(zero);
    }
  });

  it('stops a busy-looping bot at --timeout', { timeout: 90_000 }, async () => {
    const r = await taskline(['run', busy, '--timeout', '3'], 80_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'taskline: the call did not end within 3 s (--timeout); it was stopped',
    );
  });
});
