/**
 * Every span name, attribute key and metric name taskline emits, in one place: dashboards,
 * alerts and the tables of docs/observability.md key on these strings, so they change only with a CHANGELOG line.
 */

/** Span names. Each is one unit of a call a person would ask about in a trace viewer. */
export const SPAN = {
  /** One capture task (typed task, collectDigits, menu) from start to outcome. */
  task: 'taskline.task',
  /** One re-prompt inside a capture task (no input, not understood, invalid). */
  reprompt: 'taskline.task.reprompt',
  /** One run of a flow, from claim to result. */
  flow: 'taskline.flow',
  /** One visit of one flow step. */
  step: 'taskline.flow.step',
  /** One checkpoint write of a flow. */
  checkpoint: 'taskline.flow.checkpoint',
  /** One transfer of the call to a person. */
  transfer: 'taskline.transfer',
  /** One delegation, from its start to the delivery of its result. */
  delegation: 'taskline.delegation',
  /** The result of a delegation reaching the caller (spoken or answered inline). */
  delivery: 'taskline.delegation.deliver',
  /** One execution of a delegated sub-task by a worker (possibly in another process). */
  execute: 'taskline.delegation.execute',
} as const;

/** Span attribute keys. Values that may hold what a caller said pass through masking first. */
export const ATTR = {
  taskName: 'taskline.task.name',
  status: 'taskline.outcome.status',
  attempts: 'taskline.outcome.attempts',
  modality: 'taskline.outcome.modality',
  confirmed: 'taskline.outcome.confirmed',
  /** Masked with `maskPII`: a reason may quote the caller. */
  reason: 'taskline.outcome.reason',
  repromptKind: 'taskline.reprompt.kind',
  repromptCount: 'taskline.reprompt.count',
  flowName: 'taskline.flow.name',
  callId: 'taskline.call.id',
  flowStatus: 'taskline.flow.status',
  stepId: 'taskline.flow.step.id',
  stepVisit: 'taskline.flow.step.visit',
  stepOutcome: 'taskline.flow.step.outcome',
  checkpointVersion: 'taskline.checkpoint.version',
  checkpointWritten: 'taskline.checkpoint.written',
  transferMode: 'taskline.transfer.mode',
  /** Only the last four digits of the number are kept. */
  transferTo: 'taskline.transfer.to',
  delegationTask: 'taskline.delegation.task_id',
  delegationId: 'taskline.delegation.id',
  subagentType: 'taskline.delegation.subagent_type',
  delegationMode: 'taskline.delegation.mode',
  delegationStatus: 'taskline.delegation.status',
  delegationDepth: 'taskline.delegation.depth',
  deliveryVia: 'taskline.delegation.delivery',
  delegationType: 'taskline.delegation.type',
  workerAgent: 'taskline.worker.agent_id',
  workerStage: 'taskline.worker.stage',
  workerAttempt: 'taskline.worker.attempt',
} as const;

/** Metric instrument names (units and descriptions live in metrics.ts). */
export const METRIC = {
  taskOutcomes: 'taskline.task.outcomes',
  taskAttempts: 'taskline.task.attempts',
  reprompts: 'taskline.task.reprompts',
  modelCallsAvoided: 'taskline.parser.model_calls_avoided',
  stepDuration: 'taskline.flow.step.duration',
  flowResults: 'taskline.flow.results',
  delegationQueueDepth: 'taskline.delegation.queue_depth',
  delegationLatency: 'taskline.delegation.latency',
  delegationOutcomes: 'taskline.delegation.outcomes',
  workerDuration: 'taskline.worker.duration',
} as const;

/** The record field (inside `sub_task_data`) that carries W3C trace context across processes. */
export const TRACE_CONTEXT_FIELD = 'trace_context';

/** The instrumentation scope name of taskline's tracer and meter. */
export const SCOPE = 'taskline';
