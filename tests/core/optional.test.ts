// The one loader for optional peer dependencies: a missing package is a missing_dependency
// error naming the package, the feature and the install command; anything else passes through.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isTasklineError, type TasklineError } from '../../src/core/errors.js';
import {
  isMissingPackage,
  loadOptional,
  OPTIONAL_PACKAGES,
  requireOptional,
} from '../../src/core/optional.js';

// A package name no registry has; resolving it goes through Node's real resolver.
const ABSENT = 'taskline-package-that-is-not-installed';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('loadOptional', () => {
  it('turns a package that is not installed into missing_dependency naming it and the feature', async () => {
    const specifier: string = ABSENT;
    const error = await rejection(
      loadOptional(() => import(specifier), ABSENT, 'the widget store'),
    );
    expect(isTasklineError(error, 'missing_dependency')).toBe(true);
    expect((error as TasklineError).message).toBe(
      `The package "${ABSENT}" is needed for the widget store but is not installed. Install it in your app: npm install ${ABSENT}`,
    );
    expect((error as TasklineError).details).toEqual({
      package: ABSENT,
      feature: 'the widget store',
    });
  });

  it('adds the version range package.json declares for a known optional peer', async () => {
    const error = await rejection(
      loadOptional(
        () =>
          Promise.reject(
            Object.assign(new Error("Cannot find package 'pg' imported from /app/x.js"), {
              code: 'ERR_MODULE_NOT_FOUND',
            }),
          ),
        'pg',
        'the PostgreSQL stores',
      ),
    );
    expect((error as TasklineError).message).toContain(`npm install pg@"${OPTIONAL_PACKAGES.pg}"`);
  });

  it('loads an installed package unchanged', async () => {
    const pg = await loadOptional(() => import('pg'), 'pg', 'the PostgreSQL stores');
    expect(typeof pg.default.Pool).toBe('function');
  });

  it('passes on any other failure: a broken package, or a missing dependency of the package', async () => {
    const broken = new Error('native module failed to load');
    expect(await rejection(loadOptional(() => Promise.reject(broken), 'pg', 'x'))).toBe(broken);
    const inner = Object.assign(
      new Error("Cannot find package 'pg-pool' imported from /n/pg/lib/index.js"),
      {
        code: 'ERR_MODULE_NOT_FOUND',
      },
    );
    expect(await rejection(loadOptional(() => Promise.reject(inner), 'pg', 'x'))).toBe(inner);
  });
});

describe('requireOptional', () => {
  it('does the same for synchronous require sites', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    let error: unknown;
    try {
      requireOptional(() => require(ABSENT), ABSENT, 'the SQLite file store');
    } catch (e) {
      error = e;
    }
    expect(isTasklineError(error, 'missing_dependency')).toBe(true);
    expect((error as Error).message).toContain(`"${ABSENT}" is needed for the SQLite file store`);
    expect(requireOptional(() => require('pg') as { Pool: unknown }, 'pg', 'x').Pool).toBeTypeOf(
      'function',
    );
  });

  it('recognises CommonJS and ESM "not found" errors for the package or a path inside it', () => {
    const cjs = Object.assign(
      new Error(`Cannot find module '${ABSENT}'\nRequire stack:\n- /x.js`),
      {
        code: 'MODULE_NOT_FOUND',
      },
    );
    const deep = Object.assign(new Error(`Cannot find module '${ABSENT}/lib/x.js'`), {
      code: 'MODULE_NOT_FOUND',
    });
    expect(isMissingPackage(cjs, ABSENT)).toBe(true);
    expect(isMissingPackage(deep, ABSENT)).toBe(true);
    expect(isMissingPackage(cjs, 'pg')).toBe(false);
    expect(isMissingPackage(new Error(`Cannot find module '${ABSENT}'`), ABSENT)).toBe(false);
  });
});

describe('package.json and the loader agree', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    peerDependencies: Record<string, string>;
    peerDependenciesMeta: Record<string, { optional?: boolean }>;
    devDependencies: Record<string, string>;
    dependencies: Record<string, string>;
  };

  it('lists every optional peer with the range package.json declares', () => {
    const optional = Object.entries(pkg.peerDependenciesMeta)
      .filter(([, meta]) => meta.optional)
      .map(([name]) => name)
      .sort();
    expect(Object.keys(OPTIONAL_PACKAGES).sort()).toEqual(optional);
    for (const [name, range] of Object.entries(OPTIONAL_PACKAGES)) {
      expect(pkg.peerDependencies[name], name).toBe(range);
    }
  });

  it('keeps @livekit/agents, rtc-node and zod as required peers, and every peer as a dev dependency', () => {
    for (const name of ['@livekit/agents', '@livekit/rtc-node', 'zod']) {
      expect(pkg.peerDependencies[name], name).toBeDefined();
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBeUndefined();
      expect(pkg.dependencies[name], name).toBeUndefined();
    }
    for (const name of Object.keys(pkg.peerDependencies)) {
      expect(pkg.devDependencies[name], name).toBeDefined();
    }
  });
});
