// README.md's samples: the testing-kit sample runs as a user would run it — its own process
// with no test setup (so no logger is initialised for it), `taskline` and `taskline/testing`
// imported by name — and passes its own checks. (CI also type-checks every sample against the
// built package: scripts/check-readme.mjs; and runs this one in a fresh app from the packed
// tarball: scripts/check-fresh-app.mjs.)
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readmeSamples } from '../../scripts/readme-samples.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const samples = readmeSamples(readFileSync(join(root, 'README.md'), 'utf8'));
const dir = join(root, '.tmp', `readme-samples-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README samples', () => {
  it('are each a named or numbered file, or marked as a fragment', () => {
    const named = samples.filter((s) => !s.fragment).map((s) => s.file);
    expect(new Set(named).size).toBe(named.length);
    expect(named).toContain('desk.ts');
    expect(named).toContain('desk-call.ts');
    for (const s of samples.filter((x) => x.fragment)) {
      expect(s.code.split('\n')[0], `README.md:${s.line}`).toMatch(/^\/\/ fragment\b/);
    }
  });

  it('the testing-kit sample runs standalone and passes its own expectations', {
    timeout: 60_000,
  }, async () => {
    mkdirSync(dir, { recursive: true });
    for (const s of samples.filter((x) => x.file === 'desk.ts' || x.file === 'desk-call.ts')) {
      writeFileSync(join(dir, s.file), s.code);
    }
    // The only thing the sample's folder adds: `taskline` resolves to this checkout's sources.
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          paths: {
            taskline: [join(root, 'src/index.ts')],
            'taskline/app': [join(root, 'src/app/index.ts')],
            'taskline/tasks': [join(root, 'src/tasks/index.ts')],
            'taskline/parsers': [join(root, 'src/tasks/parsers/index.ts')],
            'taskline/telephony': [join(root, 'src/telephony/index.ts')],
            'taskline/flows': [join(root, 'src/flows/index.ts')],
            'taskline/deep-agent': [join(root, 'src/deep-agent/index.ts')],
            'taskline/delegation': [join(root, 'src/delegation/index.ts')],
            'taskline/service': [join(root, 'src/service/index.ts')],
            'taskline/testing': [join(root, 'src/testing/index.ts')],
          },
        },
      }),
    );
    const env = { ...process.env };
    delete env.LOG_LEVEL;
    delete env.OPENAI_API_KEY;
    const child = spawn(process.execPath, ['--import', 'tsx', 'desk-call.ts'], { cwd: dir, env });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
