/**
 * Flows: typed multi-step workflows (surveys, IVR paths) that run as one upstream
 * AgentTask, branch on data, checkpoint after every step and resume dropped calls.
 *
 * @packageDocumentation
 */
export { AnnounceTask, announce } from './announce.js';
export { type CheckPick, type Flow, FlowBuilder, type FlowValueOf, flow } from './builder.js';
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
export type { FlowDefinition, FlowOptions, StepDef, StepRunner } from './definition.js';
export { defaultGoodbye, type FlowEnding } from './ending.js';
export { type FlowEdge, flowEdges, type StepEntry } from './graph.js';
export type { AnyStepSource, FlowValue, SourceValue, StepInfo } from './infer.js';
export { type MermaidOptions, toMermaid } from './mermaid.js';
export {
  type CheckpointInfo,
  defaultResumeLine,
  type FlowEvents,
  type FlowRunOptions,
  FlowTask,
  GO_BACK_TOOL,
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
