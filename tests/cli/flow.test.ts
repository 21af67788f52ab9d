// `taskline flow check` and `taskline flow draw` as a user runs them: a real process, its
// output and exit code. A valid document is ok (0), a bad one lists every problem as
// file:line (1), a document naming the app's own parts loads with --registry, and bad usage
// exits 2.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, scratchDir } from '../scenarios/helpers.js';

const scratch = scratchDir('cli-flow');
afterAll(() => scratch.remove());

function taskline(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin/taskline.js'), ...args], {
      cwd: root,
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

const SURVEY = 'examples/survey/survey.flow.yaml';
/** The survey's registry: its repair transfer (`repair.human.escalate`). */
const SURVEY_REGISTRY = ['--registry', 'examples/survey/registry.ts'];

const bad = scratch.write(
  'bad.flow.yaml',
  `flow: bad
version: 1
steps:
  - id: a
    task: yesno
    with: { question: Ok? }
  - id: b
    announce: Bye.
    next: nowhere
    maxVisits: three
`,
);

const own = scratch.write(
  'own.flow.json',
  JSON.stringify(
    {
      flow: 'own',
      version: 1,
      steps: [
        { id: 'plan', task: 'plan', next: { pick: 'tier', to: ['vip', 'end'] } },
        { id: 'vip', announce: 'Welcome, {{plan}} member!' },
      ],
    },
    null,
    2,
  ),
);
const registry = scratch.write(
  'registry.ts',
  `import { z } from 'zod';
import { defineTask } from 'taskline/tasks';
export const registry = {
  tasks: { plan: defineTask({ name: 'plan', instructions: 'Plan?', schema: z.enum(['gold', 'silver']) }) },
  picks: { tier: (v: string) => (v === 'gold' ? 'vip' : 'end') },
};
`,
);

describe('taskline flow', { timeout: 120_000 }, () => {
  it('check: a valid document is ok', async () => {
    const r = await taskline(['flow', 'check', SURVEY, ...SURVEY_REGISTRY]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${SURVEY}: ok (flow "survey" version 1, 6 steps)\n`);
    expect(r.code).toBe(0);
  });

  it('check: a bad document lists every problem as file:line and exits 1', async () => {
    const r = await taskline(['flow', 'check', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      `${bad}:10: expected a number, got "three"`,
      `${bad}: 1 problem`,
      '',
    ]);
    const fixed = scratch.write(
      'bad2.flow.yaml',
      (await import('node:fs')).readFileSync(bad, 'utf8').replace('    maxVisits: three\n', ''),
    );
    const again = await taskline(['flow', 'check', fixed]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${fixed}:5: unknown task "yesno"`);
    expect(again.stderr).toContain(
      `${fixed}:9: Step "b" goes to "nowhere", which is not a step of flow "bad"`,
    );
  });

  it('check and draw: a document naming the app’s own parts loads with --registry', async () => {
    const without = await taskline(['flow', 'check', own]);
    expect(without.code).toBe(1);
    expect(without.stderr).toContain(`${own}:7: unknown task "plan"`);
    const r = await taskline(['flow', 'check', own, '--registry', registry]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const drawn = await taskline([
      'flow',
      'draw',
      own,
      '--registry',
      registry,
      '--direction',
      'LR',
    ]);
    expect(drawn.code).toBe(0);
    expect(drawn.stdout).toContain('flowchart LR\n');
    expect(drawn.stdout).toContain('  plan --> vip\n');
  });

  it('draw: prints the survey as Mermaid', async () => {
    const r = await taskline(['flow', 'draw', SURVEY, ...SURVEY_REGISTRY]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  score -->|0-6| reason\n');
  });

  it('bad usage exits 2 with the usage', async () => {
    for (const args of [
      ['flow', 'lint', SURVEY],
      ['flow', 'check', SURVEY, '--direction', 'LR'],
    ]) {
      const r = await taskline(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('usage: taskline flow check <file>');
    }
  });
});
