import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = 'scripts/check-imports.mjs';
const roots: string[] = [];

/** A throwaway project with the given src/ files. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'taskline-imports-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, 'src', path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  return root;
}

function check(root?: string) {
  const args = root ? [SCRIPT, '--root', root] : [SCRIPT];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('scripts/check-imports.mjs', () => {
  it('passes on the repository itself', () => {
    const { code, out } = check();
    expect(out).toMatch(/no cycles, no back arrows/);
    expect(code).toBe(0);
  });

  it('passes when every import points down the layers', () => {
    const root = fixture({
      'core/clock.ts': 'export const now = () => 0;\n',
      'deep-agent/tools/todo.ts':
        "import { now } from '../../core/clock.js';\nexport const t = now;\n",
      'delegation/manager.ts':
        "import { t } from '../deep-agent/tools/todo.js';\nimport type { X } from './types.js';\nexport const m = t;\n",
      'delegation/types.ts': 'export type X = number;\n',
    });
    const { code, out } = check(root);
    expect(out).toBe('import graph: 4 files, 3 imports, no cycles, no back arrows\n');
    expect(code).toBe(0);
  });

  it('names the edge of a back arrow, a type-only one included', () => {
    const root = fixture({
      'delegation/types.ts': 'export type Host = { run(): void };\n',
      'deep-agent/tools/task.ts':
        "import type { Host } from '../../delegation/types.js';\nexport type T = Host;\n",
    });
    const { code, err } = check(root);
    expect(code).toBe(1);
    expect(err).toContain(
      'back arrow: src/deep-agent/tools/task.ts → src/delegation/types.ts (deep-agent/tools is layer 3, delegation is layer 4',
    );
  });

  it('gives a sub-folder with a layer of its own its own unit: it never imports its parent', () => {
    const root = fixture({
      'deep-agent/agent.ts': "import { t } from './tools/todo.js';\nexport const a = t;\n",
      'deep-agent/tools/todo.ts': "import { a } from '../agent.js';\nexport const t = () => a;\n",
    });
    const { code, err } = check(root);
    expect(code).toBe(1);
    expect(err).toContain(
      'back arrow: src/deep-agent/tools/todo.ts → src/deep-agent/agent.ts (deep-agent/tools is layer 3, deep-agent is layer 5',
    );
  });

  it('names every file of an import cycle, dynamic imports included', () => {
    const root = fixture({
      'core/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'core/b.ts': "export const b = 1;\nexport const load = () => import('./c.js');\n",
      'core/c.ts': "export { a } from './a.js';\n",
    });
    const { code, err } = check(root);
    expect(code).toBe(1);
    expect(err).toContain('cycle: src/core/a.ts → src/core/b.ts → src/core/c.ts → src/core/a.ts');
  });

  it('refuses sibling imports and folders without a layer', () => {
    const root = fixture({
      'flows/run.ts': "import { d } from '../telephony/digits.js';\nexport const r = d;\n",
      'telephony/digits.ts': 'export const d = 1;\n',
      'extras/x.ts': "import { r } from '../flows/run.js';\nexport const x = r;\n",
    });
    const { code, err } = check(root);
    expect(code).toBe(1);
    expect(err).toContain(
      'sibling import: src/flows/run.ts → src/telephony/digits.ts (flows and telephony are both layer 4',
    );
    expect(err).toContain('unknown layer: src/extras/x.ts is in src/extras, which has no layer');
  });

  it('reports an import it cannot resolve', () => {
    const root = fixture({
      'core/a.ts': "import { z } from './missing.js';\nexport const a = z;\n",
    });
    const { code, err } = check(root);
    expect(code).toBe(1);
    expect(err).toContain("unresolved import: src/core/a.ts → './missing.js'");
  });
});
