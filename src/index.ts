/**
 * taskline: awaitable, typed voice-agent workflows on LiveKit Agents.
 *
 * The root keeps what nearly every bot uses — `defineTask` and its outcome and policy
 * types, `defineCallModule`, the call context (`attachCall` / `callOf`) and `TasklineError`
 * — plus one namespace per concern, grouped as upstream groups `voice`, `llm` and
 * `workflows`: `tasks`, `parsers`, `telephony`, `flows`, `deepAgent`, `delegation`, `app`,
 * `observability`.
 * Each namespace is also a subpath (`taskline/flows`, `taskline/deep-agent`, …); the testing
 * kit and call scenarios are `taskline/testing` and `taskline/scenarios` only.
 *
 * @packageDocumentation
 */

/** Call modules and the LiveKit room entry; also `taskline/app`. */
export * as app from './app/index.js';
export {
  type CallerAction,
  type CallerTurn,
  type CallInstance,
  type CallModule,
  type CallSetup,
  defineCallModule,
} from './app/module.js';
export {
  attachCall,
  CallContext,
  type CallEnd,
  type CallEvents,
  type CallOptions,
  callOf,
  type HangupEvent,
  type InputModality,
} from './core/call.js';
export type { Clock, TimerHandle } from './core/clock.js';
export { isTasklineError, TasklineError, type TasklineErrorCode } from './core/errors.js';
export type { AnswerKind, Expectation, TurnJudgement } from './core/expectation.js';
export type { InterceptedTurn, TurnAction, TurnInterceptor } from './core/interception.js';
export {
  applyRecognizerHints,
  keytermHints,
  type PromptableStt,
  type PromptHintOptions,
  promptHints,
  type RecognizerHints,
  transcriptionPrompt,
} from './core/recognizer-hints.js';
/** The deep agent and its tools: files, todos, execution, skills; also `taskline/deep-agent`. */
export * as deepAgent from './deep-agent/index.js';
/** TaskManager, sub-agents, delegation records, bus and API; also `taskline/delegation`. */
export * as delegation from './delegation/index.js';
/** Multi-step flows, checkpoints and resume; also `taskline/flows`. */
export * as flows from './flows/index.js';
/** OpenTelemetry tracing and metrics: span names, masking, trace context; also `taskline/observability`. */
export * as observability from './observability/index.js';
export {
  type FailedOutcome,
  type FailureStatus,
  isOk,
  type OkOutcome,
  type Outcome,
  valueOr,
} from './outcome.js';
export {
  type DefineTaskConfig,
  defineTask,
  type TaskDefinition,
  type TaskOverrides,
} from './tasks/define.js';
/** Capture tasks: `defineTask`, `TypedTask` and the prebuilt tasks; also `taskline/tasks`. */
export * as tasks from './tasks/index.js';
/** Deterministic answer parsers and read-back helpers; also `taskline/parsers`. */
export * as parsers from './tasks/parsers/index.js';
export type { ConfirmPolicy, RetryPolicy } from './tasks/policy.js';
/** The IVR kit: DTMF, digits, menus, transfer, voicemail; also `taskline/telephony`. */
export * as telephony from './telephony/index.js';
