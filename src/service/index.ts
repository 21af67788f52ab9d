/**
 * The durable delegation service — work handed across processes and kept across restarts:
 * delegation stores (SQLite, PostgreSQL), the delegation bus (in-process, NATS JetStream)
 * with its outbox publisher and sender, workers and target selection, remote sub-agents,
 * the expiry checker, and the authenticated HTTP/WebSocket API (with the console's live-calls
 * board). Import it as `taskline/service`. What runs inside one call (TaskManager, sub-agents,
 * task tools, the record model and the memory store) is `taskline/delegation`, which never
 * imports this.
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
  type DelegatedTask,
  type DelegationTaskHandler,
  type DelegationWorker,
  type ServeDelegationsOptions,
  serveDelegations,
} from './worker.js';
