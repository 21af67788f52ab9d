import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('optional store dependencies load lazily', () => {
  it('importing the tools loads neither better-sqlite3, pg nor re2js; using them does', {
    timeout: 30_000,
  }, () => {
    // A fresh process, so nothing imported by other tests can hide an eager import.
    const script = fileURLToPath(new URL('./fixtures/import-tools.ts', import.meta.url));
    const out = execFileSync(process.execPath, ['--import', 'tsx', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({
      afterImport: { sqlite: false, pg: false, re2js: false },
      afterOpen: { sqlite: true, pg: false, re2js: true },
      read: 'hello',
      regexHits: 1,
    });
  });
});
