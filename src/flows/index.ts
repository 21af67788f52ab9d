/**
 * Flows — typed multi-step workflows (surveys, IVR paths): the `flow()` builder and flow
 * documents (YAML/JSON over a registry of tasks: `loadFlow`, `toData`), a runner that is one
 * upstream AgentTask, branching as data, a checkpoint after every step (memory, SQLite,
 * Postgres stores; checked before it is trusted, masked answers never in clear) and resume of
 * dropped calls, plus `validateFlow`, `toMermaid` and the per-call report. Import it as
 * `taskline/flows`, or use the `flows` namespace of `taskline`.
 *
 * @packageDocumentation
 */
export { DEFAULT_PG_TIMEOUTS, type PostgresTimeouts } from '../core/postgres.js';
export { type AnnounceFactory, type AnnounceLine, AnnounceTask, announce } from './announce.js';
export { type Flow, FlowBuilder, type FlowValueOf, flow } from './builder.js';
export { type CheckpointInfo, DEFAULT_RESUME_WINDOW_MS } from './checkpointing.js';
export {
  type Checkpoint,
  type CheckpointConfig,
  CheckpointConflictError,
  type CheckpointKey,
  type CheckpointStore,
  DEFAULT_CHECKPOINT_PATH,
  type FlowState,
  isCheckpointConflict,
  MemoryCheckpointStore,
  openCheckpointStore,
  type PostgresCheckpointOptions,
  PostgresCheckpointStore,
  type SqliteCheckpointOptions,
  SqliteCheckpointStore,
} from './checkpoints/index.js';
export type { Comparison, Condition, ConditionSubject, Scalar } from './conditions.js';
export type {
  FlowMigration,
  FlowOptions,
  FlowVersion,
  MigrationInput,
} from './definition.js';
export {
  checkFlowFile,
  checkFlowText,
  type FlowCheck,
  FlowDocumentError,
  type FlowDocumentIssue,
  type LoadedFlow,
  type LoadFlowOptions,
  loadFlow,
  MAX_FLOW_DOCUMENT_BYTES,
  parseFlow,
} from './document/load.js';
export { PREBUILT_TASKS, type PrebuiltTask } from './document/prebuilt.js';
export type { FlowRegistry, PickFunction } from './document/registry.js';
export {
  type ConditionDocument,
  type FlowDocument,
  flowDocumentSchema,
  flowJsonSchema,
  type NextDocument,
  type StepDocument,
} from './document/schema.js';
export { stringifyFlow, type ToDataOptions, toData } from './document/to-data.js';
export { defaultGoodbye, type FlowEnding } from './ending.js';
export type { FlowValue } from './infer.js';
export { type MermaidOptions, toMermaid } from './mermaid.js';
export { DEFAULT_REPAIR_LINES, type RepairKind } from './repair/config.js';
export { REPAIR_TOOL } from './repair/desk.js';
export {
  defaultResumeLine,
  type FlowEvents,
  type FlowRunOptions,
  FlowTask,
  type ResumeInfo,
} from './runner.js';
export type { SealKeys } from './secrets.js';
export type {
  AnswersSoFar,
  CheckpointRefusal,
  ContextPolicy,
  Escalate,
  EscalationContext,
  FailurePolicy,
  FlowCompleted,
  FlowIncomplete,
  FlowLike,
  FlowReport,
  FlowResult,
  FlowStatus,
  HumanRepair,
  NextSpec,
  NextTable,
  PickContext,
  PickNext,
  RepairLines,
  RepairOptions,
  StepContext,
  StepMenuMeta,
  StepMeta,
  StepOptions,
  StepRecord,
  StepRepair,
  StepResultKind,
  StepSource,
  TaskDefinitionLike,
  TaskFactory,
  WhenNext,
} from './types.js';
export {
  type FlowIssue,
  type FlowIssueCode,
  type FlowValidation,
  validateFlow,
} from './validate.js';
