/**
 * Delegation — hand work to sub-agents and other processes: the `TaskManager` and its
 * model-facing `task` tools, sub-agents (headless, voice specialists, remote), durable
 * delegation records and their stores (memory, SQLite, Postgres), the delegation bus
 * (in-process, NATS JetStream) with workers and target selection, the expiry checker, and
 * the authenticated HTTP/WebSocket API for the records. Import it as `taskline/delegation`,
 * or use the `delegation` namespace of `taskline`.
 *
 * @packageDocumentation
 */

export { DEFAULT_PG_TIMEOUTS, type PostgresTimeouts } from '../core/postgres.js';
export { type ApiKeyEntry, ApiKeys, type Identity } from './api/auth.js';
export {
  createDelegationsApi,
  DEFAULT_LIMITS,
  type DelegationsApi,
  type DelegationsApiOptions,
  type ServerLimits,
} from './api/server.js';
export { type ContractEvent, type ContractMessage, contractSubject } from './bus/contract.js';
export { type InProcessBusOptions, InProcessDelegationBus } from './bus/in-process.js';
export { NatsDelegationBus, type NatsDelegationBusOptions } from './bus/nats.js';
export {
  type OutboxPublisher,
  type OutboxPublisherOptions,
  startOutboxPublisher,
} from './bus/publisher.js';
export {
  type AwaitResultOptions,
  createDelegationSender,
  type DelegationResult,
  type DelegationSender,
  type DelegationSenderOptions,
  type NewDelegation,
} from './bus/sender.js';
export type {
  BusSubscription,
  DelegationBus,
  DelegationEventHandler,
  DeliveryInfo,
  PublishAck,
  SubscribeOptions,
  WatchOptions,
} from './bus/types.js';
export {
  type DeliveryEntry,
  defaultReplyInstructions,
  type ReplyInstructions,
} from './channel.js';
export {
  type ResultCheck,
  type ResultCheckOptions,
  type ResultRejection,
  ResultSchemaRegistry,
  type ResultSubmission,
} from './constraints.js';
export {
  type ExpiredStage,
  type ExpiryChecker,
  type ExpiryOptions,
  expireOverdue,
  startExpiryChecker,
} from './expiry.js';
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
export { type RemoteSubAgentOptions, remoteSubAgent } from './remote.js';
export {
  type AgentInfo,
  type Bid,
  type PlanRule,
  type Selection,
  type SelectionAnswers,
  type SelectionContext,
  type SelectionStrategy,
  type SelectionTask,
  selectTarget,
} from './select.js';
export {
  PostgresDelegationStore,
  type PostgresDelegationStoreOptions,
} from './stores/postgres.js';
export { SqliteDelegationStore, type SqliteDelegationStoreOptions } from './stores/sqlite.js';
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
export {
  type DelegatedTask,
  type DelegationTaskHandler,
  type DelegationWorker,
  type ServeDelegationsOptions,
  serveDelegations,
} from './worker.js';
