/**
 * Capture tasks — ask the caller one thing and get a typed `Outcome` back: `defineTask`
 * (a zod schema in, a typed value out, with retry and confirmation policies), the
 * `TypedTask` it runs as (the one capture engine, also under `collectDigits` and `menu`), and
 * the prebuilt tasks (yesNo, choice, number, date, time, email,
 * phone, personName, address, likert, freeText, digits). Import it as `taskline/tasks`, or
 * use the `tasks` namespace of `taskline`. The deterministic answer parsers are
 * `taskline/parsers`.
 *
 * @packageDocumentation
 */

export type { FailedOutcome, FailureStatus, OkOutcome, Outcome } from '../outcome.js';
export { isOk, valueOr } from '../outcome.js';
export {
  type CaptureDefinition,
  type DefineTaskConfig,
  defineTask,
  type TaskDefinition,
  type TaskOverrides,
} from './define.js';
export {
  type ConfirmPolicy,
  DEFAULT_RETRY,
  DEFAULT_WATCHDOG,
  type OnExhausted,
  type RepromptSet,
  type RetryPolicy,
  type Watchdog,
} from './policy.js';
export {
  type Address,
  address,
  type ChoiceTaskOption,
  choice,
  date,
  digits,
  email,
  freeText,
  likert,
  number,
  type PersonName,
  type PrebuiltOptions,
  personName,
  phone,
  time,
  yesNo,
} from './prebuilt.js';
export {
  TaskAwareTurnDetector,
  type TaskAwareTurnOptions,
  type TextTurnDetector,
  TURN_TIMING,
  TURN_VAD_OPTIONS,
  type TurnDecision,
  taskAwareTurnHandling,
  useTaskAwareTurns,
} from './turn-detector.js';
export {
  type ExpectationSpec,
  type KeypadEntry,
  type ParseContext,
  type SubmitTool,
  type TaskSpec,
  TypedTask,
} from './typed-task.js';
