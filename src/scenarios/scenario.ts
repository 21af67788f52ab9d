/**
 * The scenario runner as a library: `runScenarioFile('call.scenario.yaml')` runs one file
 * (every `repeat`) in text or audio mode and returns a report; `taskline test` is this plus
 * discovery, parallel workers and printing.
 */
import { performance } from 'node:perf_hooks';
import { isTasklineError } from '../core/errors.js';
import { resolveScenarioModule } from './call-parts.js';
import type { CallMode } from './driver.js';
import { type LoadedScenario, loadScenario } from './load.js';
import { type RunReport, runScenarioOnce } from './run-call.js';
import { textMode } from './text-mode.js';

/** How one scenario file went. */
export interface ScenarioReport {
  file: string;
  name: string;
  mode: 'text' | 'audio';
  status: 'passed' | 'failed' | 'skipped';
  /** Why it was skipped, or why it could not run at all (a malformed file, a missing module). */
  reason?: string;
  /** One entry per repeat, in order (a run that passed keeps no transcript detail needed). */
  runs: RunReport[];
  durationMs: number;
}

/** Options for {@link runScenarioFile}. */
export interface RunScenarioOptions {
  /** Text (default) or audio mode (see `audioMode()` in `taskline/scenarios`). */
  mode?: CallMode;
  /** Stop repeating at the first failing run (default true). */
  stopOnFailure?: boolean;
  /** What fails a run: everything (default) or only wrong captured values and errors. */
  judge?: 'all' | 'captures';
}

/** Loads and runs one scenario file; never throws for a bad file (the report says why). */
export async function runScenarioFile(
  file: string,
  options: RunScenarioOptions = {},
): Promise<ScenarioReport> {
  const started = performance.now();
  const modeName = options.mode?.name ?? 'text';
  let scenario: LoadedScenario;
  try {
    scenario = loadScenario(file);
  } catch (error) {
    return broken(file, file, modeName, error, started);
  }
  return runScenario(scenario, options);
}

/** Runs a loaded scenario (every `repeat`). */
export async function runScenario(
  scenario: LoadedScenario,
  options: RunScenarioOptions = {},
): Promise<ScenarioReport> {
  const started = performance.now();
  const mode = options.mode ?? textMode;
  const base = { file: scenario.file, name: scenario.name, mode: mode.name };
  if (mode.name === 'audio' && (scenario.spec.audio === false || scenario.spec.skip_audio)) {
    return {
      ...base,
      status: 'skipped',
      reason: scenario.spec.skip_audio
        ? `not in audio mode: ${scenario.spec.skip_audio}`
        : 'the scenario says audio: false (say why with skip_audio: <reason>)',
      runs: [],
      durationMs: 0,
    };
  }
  let parts: Awaited<ReturnType<typeof resolveScenarioModule>>;
  try {
    parts = await resolveScenarioModule(scenario);
  } catch (error) {
    return broken(scenario.file, scenario.name, mode.name, error, started);
  }
  const runs: RunReport[] = [];
  const repeat = scenario.spec.repeat ?? 1;
  for (let i = 0; i < repeat; i++) {
    const run = await runScenarioOnce(scenario, parts, mode, {
      ...(options.judge ? { judge: options.judge } : {}),
    });
    runs.push(run);
    if (!run.ok && options.stopOnFailure !== false) break;
  }
  return {
    ...base,
    status: runs.every((r) => r.ok) ? 'passed' : 'failed',
    runs,
    durationMs: performance.now() - started,
  };
}

function broken(
  file: string,
  name: string,
  mode: 'text' | 'audio',
  error: unknown,
  started: number,
): ScenarioReport {
  const message = error instanceof Error ? error.message : String(error);
  return {
    file,
    name,
    mode,
    status: 'failed',
    reason: isTasklineError(error) ? message : `unexpected error: ${message}`,
    runs: [],
    durationMs: performance.now() - started,
  };
}
