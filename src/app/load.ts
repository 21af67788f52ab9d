/**
 * Loading a call module from disk: the file or folder a CLI command or a scenario names,
 * imported and checked to be a `defineCallModule` export.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TasklineError } from '../core/errors.js';
import type { CallModule } from './module.js';

/** Loads a CallModule from a file or folder (its index.ts / index.js). */
export async function loadCallModule(path: string): Promise<CallModule> {
  let file = resolve(path);
  if (existsSync(file) && statSync(file).isDirectory()) {
    const index = ['index.ts', 'index.js', 'index.mjs']
      .map((f) => resolve(file, f))
      .find(existsSync);
    if (!index) throw new TasklineError('not_found', `${path} has no index.ts or index.js.`);
    file = index;
  }
  if (!existsSync(file)) throw new TasklineError('not_found', `No module at ${path}.`);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw new TasklineError(
        'invalid_argument',
        `${path} is TypeScript: install tsx in your app (npm install -D tsx) so taskline can run it, or run the compiled JavaScript.`,
      );
    }
    throw error;
  }
  const candidate = mod.default;
  if (!isCallModule(candidate)) {
    throw new TasklineError(
      'invalid_argument',
      `${path} must export default defineCallModule({ name, description, createCall }).`,
    );
  }
  return candidate;
}

function isCallModule(m: unknown): m is CallModule {
  if (typeof m !== 'object' || m === null) return false;
  const o = m as Record<string, unknown>;
  return typeof o.name === 'string' && typeof o.createCall === 'function';
}
