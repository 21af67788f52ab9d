/**
 * Delegation: the TaskManager, sub-agents (headless and voice specialists), the in-memory
 * delegation store, and the model-facing `task` tools.
 *
 * @packageDocumentation
 */

export * from './api/auth.js';
export * from './api/server.js';
export * from './bus/contract.js';
export * from './bus/in-process.js';
export * from './bus/nats.js';
export * from './bus/publisher.js';
export * from './bus/sender.js';
export * from './bus/types.js';
export {
  DeliveryChannel,
  type DeliveryEntry,
  defaultReplyInstructions,
  type ReplyInstructions,
} from './channel.js';
export * from './constraints.js';
export * from './expiry.js';
export { runSpecialist } from './foreground.js';
export {
  DEFAULT_COALESCE_MS,
  DEFAULT_FOREGROUND_CAP_MS,
  DEFAULT_INLINE_WINDOW_MS,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_PARALLEL,
  DEFAULT_MAX_TURNS,
  DEFAULT_QUEUE_LIMIT,
  DEFAULT_TASK_TIMEOUT_MS,
  type StartTaskOptions,
  TaskManager,
  type TaskManagerOptions,
} from './manager.js';
export { MemoryDelegationStore, type MemoryDelegationStoreOptions } from './memory-store.js';
export * from './record.js';
export {
  EXECUTION_STAGE,
  initialRecord,
  type RecordParties,
  recordResult,
  recordState,
} from './records.js';
export * from './remote.js';
export {
  type HeadlessProgress,
  type HeadlessRunOptions,
  type HeadlessRunResult,
  newProgress,
  partialOutput,
  runHeadless,
  SUBMIT_RESULT_TOOL,
} from './runner.js';
export * from './select.js';
export * from './stores/postgres.js';
export * from './stores/sqlite.js';
export {
  type AnySubAgent,
  assertSubAgentName,
  defineSubAgent,
  describeOutcome,
  GENERAL_PURPOSE,
  GENERAL_PURPOSE_DESCRIPTION,
  GENERAL_PURPOSE_INSTRUCTIONS,
  isVoiceSpecialist,
  type SubAgentSpec,
  type SubAgentToolContext,
  specialistFromTask,
  type VoiceSpecialistSpec,
  voiceSpecialist,
} from './subagent.js';
export { DEFAULT_SUMMARY_CHARS, summarize } from './summary.js';
export {
  createDelegationTools,
  createSubAgentTaskTools,
  type DelegationTools,
  type DelegationToolsOptions,
} from './task-tools.js';
export { type TaskToolOutput, taskToolOutput } from './tool-output.js';
export * from './types.js';
export { MAX_JSON_DEPTH, parseRecord } from './validate.js';
export * from './worker.js';
export {
  createWorkspace,
  mergeWorkspace,
  taskDir,
  type Workspace,
  writeResult,
} from './workspace.js';
