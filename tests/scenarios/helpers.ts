// Shared helpers of the scenario tests: scratch scenario files next to a real example module,
// and whether espeak-ng (audio mode) is here.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { espeakUnavailable } from '../../src/testing/espeak.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** A scratch folder inside the repository (modules there resolve packages as an app's do). */
export function scratchDir(name: string): {
  dir: string;
  write(file: string, text: string): string;
  remove(): void;
} {
  const dir = join(root, '.tmp', `${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return {
    dir,
    write(file, text) {
      const path = join(dir, file);
      writeFileSync(path, text);
      return path;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The ivr-bank example folder, relative to a scratch dir's files. */
export const IVR_BANK = join(root, 'examples', 'ivr-bank');
export const SURVEY = join(root, 'examples', 'survey');

let probe: Promise<string | undefined> | undefined;

/**
 * Why audio mode cannot run here, or undefined. Outside CI a missing espeak-ng skips the
 * audio suites with the reason printed; under CI=true (.ci/run installs it) it fails.
 */
export function audioMissing(): Promise<string | undefined> {
  probe ??= espeakUnavailable().then((problem) => {
    if (!problem) return undefined;
    if (process.env.CI === 'true') throw new Error(`CI=true and audio mode cannot run: ${problem}`);
    console.warn(`[skipped: needs espeak-ng] ${problem}`);
    return problem;
  });
  return probe;
}
