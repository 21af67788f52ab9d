/**
 * Skills: SKILL.md folders found on the backend, validated at load with errors naming the file,
 * listed in the prompt by name and description only, opened with use_skill / read_reference
 * (confined to the skill's folder) and their scripts run in the sandbox with run_script.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { ExecutionSandbox } from '../../src/deep-agent/tools/execute/sandbox.js';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import {
  createSkillTools,
  loadSkills,
  skillsPrompt,
} from '../../src/deep-agent/tools/skills/tools.js';
import { callTool, toolError } from '../tools/tool-helpers.js';

const TIP_SKILL = `---
name: tip-calculator
description: Work out a tip and split a restaurant bill between people.
license: MIT
---
# Tip calculator

1. Ask for the bill total and how many people.
2. Run scripts/split.py with the total, the tip percent and the number of people.
3. Say each person's share, rounded to cents.
`;

const SPLIT_PY = `import sys
total, tip, people = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
print(f"{total * (1 + tip / 100) / people:.2f}")
`;

async function workspace() {
  const backend = new MemoryBackend();
  await backend.write('/skills/tip-calculator/SKILL.md', TIP_SKILL);
  await backend.write('/skills/tip-calculator/scripts/split.py', SPLIT_PY);
  await backend.write('/skills/tip-calculator/scripts/hello.sh', 'echo "hello $1"\n');
  await backend.write('/skills/tip-calculator/reference/etiquette.md', 'Tip 15 to 20 percent.\n');
  await backend.write('/secret.md', 'not part of any skill\n');
  return backend;
}

const opened: ExecutionSandbox[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

describe('skills', () => {
  it('lists skills by name and description only', async () => {
    const backend = await workspace();
    const skills = await loadSkills(backend, ['/skills', '/missing']);
    expect(skills.map((s) => [s.name, s.dir])).toEqual([
      ['tip-calculator', '/skills/tip-calculator'],
    ]);
    const prompt = skillsPrompt(skills);
    expect(prompt).toContain(
      '- tip-calculator: Work out a tip and split a restaurant bill between people.',
    );
    expect(prompt).not.toContain('scripts/split.py');
  });

  it('opens instructions and references, and runs scripts in the sandbox', async () => {
    const backend = await workspace();
    const skills = await loadSkills(backend, ['/skills']);
    const sandbox = new ExecutionSandbox({ backend });
    opened.push(sandbox);
    const tools = createSkillTools({ backend, skills, sandbox });

    const instructions = await callTool(tools.use_skill, { name: 'tip-calculator' });
    expect(instructions).toContain('2. Run scripts/split.py');
    expect(instructions).toContain('reference/etiquette.md, scripts/hello.sh, scripts/split.py');
    expect(
      await callTool(tools.read_reference, {
        skill: 'tip-calculator',
        path: 'reference/etiquette.md',
      }),
    ).toBe('     1\tTip 15 to 20 percent.');
    expect(
      await callTool(tools.run_script!, {
        skill: 'tip-calculator',
        script: 'scripts/split.py',
        args: ['120', '20', '4'],
      }),
    ).toBe('36.00\n[exit code 0]');
    expect(
      await callTool(tools.run_script!, {
        skill: 'tip-calculator',
        script: 'scripts/hello.sh',
        args: ['Ana Lee; rm -rf /'],
      }),
    ).toBe('hello Ana Lee; rm -rf /\n[exit code 0]');
    expect(await backend.read('/secret.md')).toBe('not part of any skill\n');
  });

  it('keeps references and scripts inside the skill folder, and names unknown skills', async () => {
    const backend = await workspace();
    const skills = await loadSkills(backend, ['/skills']);
    const tools = createSkillTools({ backend, skills });
    expect(tools.run_script).toBeUndefined();
    expect(
      await toolError(
        callTool(tools.read_reference, { skill: 'tip-calculator', path: '../../secret.md' }),
      ),
    ).toMatch(/^outside_root: /);
    expect(
      await toolError(
        callTool(tools.read_reference, { skill: 'tip-calculator', path: '/secret.md' }),
      ),
    ).toMatch(/^outside_root: /);
    expect(await toolError(callTool(tools.use_skill, { name: 'pizza' }))).toBe(
      'not_found: there is no skill "pizza"; the skills are: tip-calculator',
    );
  });

  it('refuses an invalid SKILL.md at load with the file and the problem', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['no-front', '# Just text\n', /must start with YAML front matter/],
      ['unclosed', '---\nname: unclosed\n', /no closing "---"/],
      ['bad-yaml', '---\nname: [oops\n---\nbody\n', /not valid YAML/],
      ['no-desc', '---\nname: no-desc\n---\nbody\n', /description: /],
      ['Bad_Name', '---\nname: Bad_Name\ndescription: x\n---\nbody\n', /name: use lowercase/],
      [
        'mismatch',
        '---\nname: other\ndescription: x\n---\nbody\n',
        /must equal its folder's name "mismatch"/,
      ],
      [
        'extra',
        '---\nname: extra\ndescription: x\ncolour: red\n---\nbody\n',
        /colour|Unrecognized/,
      ],
      ['empty', '---\nname: empty\ndescription: x\n---\n\n', /has no instructions/],
    ];
    for (const [folder, text, problem] of cases) {
      const backend = new MemoryBackend();
      await backend.write(`/skills/${folder}/SKILL.md`, text);
      let error: unknown;
      try {
        await loadSkills(backend, ['/skills']);
      } catch (e) {
        error = e;
      }
      expect(isTasklineError(error, 'invalid_argument'), folder).toBe(true);
      expect((error as Error).message, folder).toContain(`Skill /skills/${folder}/SKILL.md: `);
      expect((error as Error).message, folder).toMatch(problem);
    }
  });

  it('lets a later folder override a skill of the same name', async () => {
    const backend = await workspace();
    await backend.write(
      '/user-skills/tip-calculator/SKILL.md',
      TIP_SKILL.replace('Work out a tip', 'House rules for tips'),
    );
    const skills = await loadSkills(backend, ['/skills', '/user-skills']);
    expect(skills).toHaveLength(1);
    expect(skills[0]?.description).toMatch(/^House rules/);
  });
});
