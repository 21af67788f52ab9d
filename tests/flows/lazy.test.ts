import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Imports a module in a fresh process and lists which database drivers got loaded. */
function driversLoadedBy(code: string): string[] {
  const script = `
    import { createRequire } from 'node:module';
    ${code}
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    const drivers = ['better-sqlite3', 'pg'].filter((d) =>
      loaded.some((k) => k.includes(\`/node_modules/\${d}/\`)),
    );
    console.log(JSON.stringify(drivers));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[];
}

it('loads no database driver until a store is opened', { timeout: 60_000 }, () => {
  expect(driversLoadedBy(`await import('./src/flows/index.ts');`)).toEqual([]);
  expect(
    driversLoadedBy(`
      const { openCheckpointStore } = await import('./src/flows/index.ts');
      const store = await openCheckpointStore({ kind: 'sqlite', path: ':memory:' });
      await store.close();
    `),
  ).toEqual(['better-sqlite3']);
});
