// Type-checks the TypeScript samples of README.md and docs/*.md against the built package, as a user
// would compile them: each ```ts block that is not marked `// fragment` is written to a
// folder under .tmp/ and compiled with tsc (strict, NodeNext). `taskline` and its
// subpaths (`taskline/telephony`, `taskline/testing`, …) resolve through package.json
// "exports" to dist/ (the bundle's types), not to src/. Errors are reported at their
// README.md (or docs page) line. Run after `npm run build`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readmeSamples } from './readme-samples.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const entry of Object.values(pkg.exports)) {
  if (typeof entry === 'object' && !existsSync(join(root, entry.types))) {
    console.error(`check-readme: ${entry.types} is missing; run \`npm run build\` first.`);
    process.exit(1);
  }
}

// README.md and every docs/*.md page: samples of a page are prefixed with its name, so two
// pages may each have a `// name.ts` of their own.
const pages = [
  'README.md',
  ...(existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => `docs/${f}`)
    : []),
];
const samples = pages.flatMap((page) =>
  readmeSamples(readFileSync(join(root, page), 'utf8')).map((s) => ({
    ...s,
    page,
    file: page === 'README.md' ? s.file : `${page.slice(5, -3)}-${s.file}`,
    code:
      page === 'README.md'
        ? s.code
        : s.code.replace(/(from\s+['"]\.\/)([\w.-]+\.js['"])/g, `$1${page.slice(5, -3)}-$2`),
  })),
);
const compiled = samples.filter((s) => !s.fragment);
const names = new Set();
for (const s of compiled) {
  if (names.has(s.file)) {
    console.error(`check-readme: two samples are named ${s.file} (${s.page} line ${s.line}).`);
    process.exit(1);
  }
  names.add(s.file);
}

// Inside the repository, so `import 'taskline'` is the package's self-reference (its
// "exports" and built types) and dependencies resolve from its node_modules.
const dir = join(root, '.tmp', `readme-check-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
try {
  for (const s of compiled) writeFileSync(join(dir, s.file), s.code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          strict: true,
          // @livekit/agents 1.9's own .d.ts files need it (they import json-schema types
          // it does not depend on), so every app on it compiles with skipLibCheck.
          skipLibCheck: true,
          noEmit: true,
        },
        files: compiled.map((s) => s.file),
      },
      null,
      2,
    ),
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(
    process.execPath,
    [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) {
    const byFile = new Map(compiled.map((s) => [s.file, s]));
    const out = `${result.stdout}${result.stderr}`.replace(
      /^([\w.-]+\.ts)\((\d+),(\d+)\)/gm,
      (all, file, line, col) => {
        const s = byFile.get(file);
        return s ? `${s.page}:${s.line + Number(line) - 1}:${col} (${file})` : all;
      },
    );
    console.error(out.trim());
    console.error(
      'check-readme: a README or docs sample does not compile. Fix it, or mark it with a first line `// fragment`.',
    );
    process.exitCode = 1;
  } else {
    console.log(
      `README and docs samples ok: ${compiled.length} compile against the built package, ${samples.length - compiled.length} marked as fragments`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
