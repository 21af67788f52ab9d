/**
 * Flows — typed multi-step workflows (surveys, IVR paths): the `flow()` builder, a runner
 * that is one upstream AgentTask, branching as data, a checkpoint after every step
 * (memory, SQLite, Postgres stores) and resume of dropped calls, plus `validateFlow`,
 * `toMermaid` and the per-call report. Import it as `taskline/flows`, or use the `flows`
 * namespace of `taskline`.
 *
 * @packageDocumentation
 */
export { DEFAULT_PG_TIMEOUTS, type PostgresTimeouts } from '../core/postgres.js';
export { AnnounceTask, announce } from './announce.js';
export { type Flow, FlowBuilder, type FlowValueOf, flow } from './builder.js';
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
export type { FlowOptions } from './definition.js';
export { defaultGoodbye, type FlowEnding } from './ending.js';
export type { FlowValue } from './infer.js';
export { type MermaidOptions, toMermaid } from './mermaid.js';
export {
  type CheckpointInfo,
  defaultResumeLine,
  type FlowEvents,
  type FlowRunOptions,
  FlowTask,
  type ResumeInfo,
} from './runner.js';
export type {
  AnswersSoFar,
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
  NextSpec,
  NextTable,
  PickNext,
  StepMenuMeta,
  StepMeta,
  StepOptions,
  StepRecord,
  StepResultKind,
  StepSource,
  TaskDefinitionLike,
  TaskFactory,
} from './types.js';
export {
  type FlowIssue,
  type FlowIssueCode,
  type FlowValidation,
  validateFlow,
} from './validate.js';
