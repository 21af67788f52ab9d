/** Finds scenario files: `*.scenario.yaml` under the folders given, or the files named. */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { TasklineError } from '../core/errors.js';
import { SCENARIO_SUFFIX } from './load.js';

const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);

/**
 * The scenario files under `paths` (folders are searched recursively, skipping
 * node_modules, dist and hidden folders; a symbolic link to a scenario file counts, and runs
 * against the module of the folder it is in), sorted and without duplicates. A path that does
 * not exist is a `not_found` error; a file named explicitly is taken whatever its name, but it
 * must be a regular file (`invalid_argument` for a device such as /dev/zero, a pipe or a socket,
 * which would never end or never answer).
 */
export function findScenarioFiles(paths: readonly string[]): string[] {
  const found = new Set<string>();
  for (const path of paths.length ? paths : ['.']) {
    const full = resolve(path);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(full);
    } catch {
      throw new TasklineError('not_found', `${path}: no such file or folder`);
    }
    if (stat.isDirectory()) walk(full, found);
    else if (stat.isFile()) found.add(full);
    else {
      throw new TasklineError(
        'invalid_argument',
        `${path}: not a scenario file or a folder (a device, pipe or socket cannot be read as one)`,
      );
    }
  }
  return [...found].sort();
}

function linksToFile(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink() && statSync(path).isFile();
  } catch {
    return false;
  }
}

function walk(dir: string, found: Set<string>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) walk(path, found);
    } else if (entry.name.endsWith(SCENARIO_SUFFIX) && (entry.isFile() || linksToFile(path))) {
      // A linked scenario runs against the module of the folder it is linked into (the same
      // scenarios for two forms of one bot).
      found.add(path);
    }
  }
}
