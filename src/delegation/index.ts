/**
 * Delegation inside a call — hand work to sub-agents while the caller keeps talking: the
 * `TaskManager` and its model-facing `task` tools, sub-agents (headless and voice
 * specialists), delegation records and the in-memory store the manager writes them to.
 * Import it as `taskline/delegation`, or use the `delegation` namespace of `taskline`.
 * Durable stores, the bus, workers, remote sub-agents and the HTTP API are the service:
 * `taskline/service`.
 *
 * @packageDocumentation
 */

export {
  type DeliveryEntry,
  defaultReplyInstructions,
  type ReplyInstructions,
} from './channel.js';
export type { DeliverAt } from './floor.js';
export { type StartTaskOptions, TaskManager, type TaskManagerOptions } from './manager.js';
export { MemoryDelegationStore, type MemoryDelegationStoreOptions } from './memory-store.js';
export {
  type DelegationFilter,
  type DelegationPage,
  type DelegationPatch,
  type DelegationRecord,
  DelegationState,
  type DelegationStore,
  isFinished,
  type OverdueRecord,
  RESULT_STAGE,
  type StageStatus,
  type StageUpdate,
  type StatusMap,
} from './record.js';
export {
  type AnySubAgent,
  defineSubAgent,
  GENERAL_PURPOSE,
  type SubAgentSpec,
  type SubAgentToolContext,
  specialistFromTask,
  type VoiceSpecialistSpec,
  voiceSpecialist,
} from './subagent.js';
export {
  createDelegationTools,
  type DelegationTools,
  type DelegationToolsOptions,
} from './task-tools.js';
export type {
  DelegationHost,
  DeliveryState,
  FinalTaskStatus,
  SubAgentInfo,
  TaskEvent,
  TaskMode,
  TaskResult,
  TaskSnapshot,
  TaskStatus,
  TaskToolArgs,
} from './types.js';
