/**
 * Call scenarios as files: the `*.scenario.yaml` format, its validator and JSON Schema,
 * and the runner `taskline test` uses — in text mode (simulated caller, virtual clock) or
 * audio mode (upstream's real voice pipeline with espeak-ng speech and Silero VAD). Import
 * it from `taskline/scenarios`.
 *
 * @packageDocumentation
 */

export { type AudioModeOptions, audioMode, audioUnavailable } from './audio/mode.js';
export { RecordingCheckpointStore } from './call-parts.js';
export { findScenarioFiles } from './discover.js';
export type { CallDriver, CallMode, TurnInput, TurnMeasure } from './driver.js';
export { type CallView, checkExpectations } from './expectations.js';
export { type LoadedScenario, loadScenario, parseScenario, SCENARIO_SUFFIX } from './load.js';
export { deepMatch, textMatcher } from './match.js';
export { type RunFilesOptions, runScenarioFiles } from './pool.js';
export {
  formatLatencies,
  formatScenario,
  formatTotals,
  junitXml,
  type LatencySummary,
  latencySummary,
} from './report.js';
export type { RunReport, ScenarioFailure, TurnReport } from './run-call.js';
export {
  type RunScenarioOptions,
  runScenario,
  runScenarioFile,
  type ScenarioReport,
} from './scenario.js';
export {
  durationMs,
  type ExpectationSpec,
  type ScenarioInput,
  type ScenarioSpec,
  scenarioJsonSchema,
  scenarioSchema,
  type TurnSpec,
} from './schema.js';
export { textMode } from './text-mode.js';
