import type { llm, voice } from '@livekit/agents';
import type { z } from 'zod/v4';
import type { InputModality } from '../core/call.js';
import type { FailedOutcome, FailureStatus, Outcome } from '../outcome.js';
import type { TaskDefinition } from '../tasks/define.js';
import type { RepairKind } from '../tasks/parsers/repair.js';
import type { Condition } from './conditions.js';

/** The reserved target that ends a flow. */
export const END = 'end';

/** A step target: another step's id, or `'end'`. */
export type Target = string;

/** The answers given so far, keyed by step id (read-only view for branch functions). */
export type AnswersSoFar = Readonly<Record<string, unknown>>;

/** What a pick is told besides the value: the answers so far and when to give up. */
export interface PickContext {
  /** Aborted when the pick's `timeoutMs` passes or the call ends: stop the lookup. */
  readonly signal: AbortSignal;
}

/**
 * A branch decided by a function whose possible targets are declared up front, so the
 * graph can be validated and drawn without running it. The function may be async (a backend
 * lookup mid-flow): it is bounded by `timeoutMs`, and a failure (it throws, times out or
 * returns a target it did not declare) goes to `onError`, or ends the flow `failed` with
 * `error.code` `pick_failed` / `pick_timeout`. A resumed call runs picks again to re-walk
 * its answers, so make a lookup safe to repeat.
 *
 * @example
 * { to: ['why', 'referral', 'thanks'], pick: (score) => (score <= 6 ? 'why' : score >= 9 ? 'referral' : 'thanks') }
 * { to: ['amount', 'locked'], onError: 'locked', timeoutMs: 3000,
 *   pick: async (pin, answers, { signal }) => ((await bank.check(answers.account, pin, { signal })) ? 'amount' : 'locked') }
 */
export interface PickNext<T, To extends string = string> {
  /** Every target `pick` may return. */
  readonly to: readonly To[];
  /** Chooses the next step from the step's value (and the answers so far). */
  readonly pick: (
    value: T,
    answers: AnswersSoFar,
    context: PickContext,
  ) => NoInfer<To> | PromiseLike<NoInfer<To>>;
  /** Where to go when the step was skipped (required if the step can be skipped). */
  readonly skipped?: NoInfer<To>;
  /** Where to go when an async pick fails or times out (default: the flow ends `failed`). */
  readonly onError?: NoInfer<To>;
  /** Longest wait for an async pick, on the call's clock (default 5,000 ms; 100-60,000). */
  readonly timeoutMs?: number;
  /** Edge labels for diagrams, per target. */
  readonly labels?: { readonly [K in NoInfer<To>]?: string };
}

/**
 * A branch on conditions, as data: the first case whose condition holds decides, `else`
 * takes the rest (and a skipped step, unless `skipped` says otherwise).
 *
 * @example
 * { when: [{ if: { lte: 6 }, to: 'reason' }, { if: { gte: 9 }, to: 'referral' }], else: 'thanks' }
 */
export interface WhenNext<To extends string = string> {
  /** Cases in order: `if` a condition holds, go `to` that step. */
  readonly when: readonly { readonly if: Condition; readonly to: To }[];
  /** Where every other answer goes. */
  readonly else: To;
  /** Where a skipped step goes (default `else`). */
  readonly skipped?: To;
  /** Edge labels for diagrams, per target. */
  readonly labels?: { readonly [K in To]?: string };
}

/** Keys a branch table may use for a step value of type `T`. */
export type TableKey<T> = T extends boolean | string | number | bigint ? `${T}` : never;

/**
 * A branch table keyed on the step's value (`String(value)`: `true`/`false`, an enum
 * value, a number) with `skipped` for a skipped step and `default` for anything else.
 */
export type NextTable<T> = { readonly [K in TableKey<T>]?: Target } & {
  readonly default?: Target;
  readonly skipped?: Target;
};

/** Where a step goes next: a step id (or `'end'`), a branch table, conditions, or a declared pick. */
export type NextSpec<T, To extends string = string> =
  | Target
  | NextTable<T>
  | WhenNext<To>
  | PickNext<T, To>;

/** What the runner tells an escalation about the step that failed. */
export interface EscalationContext {
  /** The step that failed. */
  step: string;
  /** The call id the flow runs under. */
  callId: string;
  /** Answers given so far. */
  answers: AnswersSoFar;
  /** The session running the flow. */
  session: voice.AgentSession;
}

/**
 * An escalation: called when the step ends without a value. An `ok` outcome supplies the
 * value and the flow continues; anything else ends the flow as `escalated`.
 */
export type Escalate<T> = (outcome: FailedOutcome, ctx: EscalationContext) => Promise<Outcome<T>>;

/** What happens when a step ends without a value: fail the flow, skip the step, or escalate. */
export type FailurePolicy<T> = 'fail' | 'skip' | Escalate<T>;

/** Generic menu metadata a step can expose so `validateFlow` can check key clashes. */
export interface StepMenuMeta {
  /** Keys that select options. */
  keys?: readonly string[];
  /** Key that repeats the menu. */
  repeatKey?: string;
  /** Key that goes back. */
  backKey?: string;
}

/** Facts about a step's task that the runner cannot see in a plain factory. */
export interface StepMeta extends StepMenuMeta {
  /** The task handles silence itself (re-prompts, ends as `noinput`). */
  handlesNoInput?: boolean;
  /** The step only speaks and never waits for the caller (no go-back tool, no no-input check). */
  listens?: boolean;
}

/** How a step's task starts: its chat context. */
export type ContextPolicy =
  /** A fresh context plus a typed summary of the answers so far (no model call). Default. */
  | 'summary'
  /** The whole conversation of the flow so far. */
  | 'full'
  /** The flow's conversation summarised by the session's model (one extra model call). */
  | 'model-summary'
  /** Any context you build. */
  | ((info: {
      answers: AnswersSoFar;
      history: llm.ChatContext;
      summary: string;
    }) => llm.ChatContext);

/** Options of one step; see {@link FlowBuilder.step}. */
export interface StepOptions<T, To extends string = string> {
  /** Where to go after this step; default the next declared step (the last one ends). */
  next?: NextSpec<T, To>;
  /** The caller may return to this step later (through the `go_back` tool). */
  canRevisit?: boolean;
  /** The caller may skip this step (a refusal such as "skip this" skips it). */
  skippable?: boolean;
  /** When the step ends without a value. Default `'fail'`. */
  onFailure?: FailurePolicy<T>;
  /** Words for people and models: the go-back tool, the resume line, the summary, diagrams. */
  label?: string;
  /** How many times this step may run in one call (bounds loops in the graph). */
  maxVisits?: number;
  /**
   * A watchdog for a task that has no no-input handling of its own (a plain factory):
   * after this long on the call's clock the step ends as `timeout`.
   */
  timeoutMs?: number;
  /** Chat context policy for this step (the flow's by default). */
  context?: ContextPolicy;
  /** Facts about the task for validation (menu keys, no-input handling). */
  meta?: StepMeta;
  /**
   * The answer is a secret (a PIN, an account number): it is never checkpointed in clear
   * (see {@link FlowRunOptions.sealKeys}). Tasks that mask their input (`collectDigits({ mask:
   * true })`) and answers holding a card number are treated so without it.
   */
  mask?: boolean;
  /**
   * The schema of the answer, for a task factory (a definition brings its own): an answer
   * read back from a checkpoint is checked against it. Without one, a resumed call asks
   * such a step again rather than trust its stored answer.
   */
  schema?: z.ZodType<T>;
  /**
   * This step's say on the flow's repair patterns: turn any of them off here (a PIN step:
   * `{ correct: false }`), and the names callers use for its answer in a correction.
   */
  repair?: StepRepair;
}

/** What the runner hands a step's task factory: the answers given so far. */
export interface StepContext {
  readonly answers: AnswersSoFar;
}

/** A factory for any upstream AgentTask that resolves an {@link Outcome}. */
export type TaskFactory<T> = (context?: StepContext) => voice.AgentTask<Outcome<T>>;

/** Result statuses of a flow. */
export type FlowStatus =
  | 'completed'
  | 'failed'
  | 'escalated'
  | 'hangup'
  | 'cancelled'
  | 'transferred'
  | 'conflict';

/** How one step run ended, as reports show it. */
export type StepResultKind =
  | 'ok'
  | 'skipped'
  | 'escalated'
  | 'back'
  | 'kept'
  /** The answer was taken but its branch could not be decided (an async pick failed). */
  | 'error'
  /** An earlier answer changed by the caller's correction. */
  | 'corrected'
  /** A request of the caller's interrupted the step (a cancel not confirmed, a transfer that failed): it runs again. */
  | 'interrupted'
  | FailureStatus;

/** One run of one step, as the per-call report and `step_completed` events show it. */
export interface StepRecord {
  step: string;
  /** 1 for the first run of this step in the call, 2 after a go-back, ... */
  visit: number;
  /** Call-clock time the step started / ended (ms since epoch). */
  startedAt: number;
  endedAt: number;
  /** Call-clock duration in ms. */
  durationMs: number;
  /** Caller answers it took (from the outcome). */
  attempts: number;
  noInput: number;
  noMatch: number;
  invalid: number;
  /** How the step ended. */
  outcome: StepResultKind;
  /** How the accepted answer arrived. */
  modality?: InputModality;
  /** Where the flow went next (`'end'` when it ended). */
  next?: string;
  /** Why, for anything but `ok`. */
  reason?: string;
  /**
   * The caller's repair requests while this step was asked, in order (a repeat, a skip, a
   * correction of an earlier answer, a cancel, asking for a person).
   */
  repairs?: RepairKind[];
}

/** A per-call flow report (JSON-serializable). */
export interface FlowReport {
  flow: string;
  callId: string;
  status: FlowStatus | 'running';
  startedAt: number;
  endedAt?: number;
  /** Call-clock time spent in steps, summed over every session of the call (ms). */
  durationMs: number;
  /** Step ids on the path the final answers take, in order. */
  path: string[];
  /** Every step run, in order, across resumed sessions. */
  steps: StepRecord[];
  /** Sessions that resumed this call. */
  resumes: number;
  /** Go-backs used. */
  backSteps: number;
  totals: { attempts: number; noInput: number; noMatch: number; invalid: number; steps: number };
  /** The caller's repair requests by kind, when there were any (see {@link StepRecord.repairs}). */
  repairs?: Partial<Record<RepairKind, number>>;
}

/** A finished flow with every required answer. */
export interface FlowCompleted<R> {
  status: 'completed';
  value: R;
  answers: Partial<R>;
  report: FlowReport;
  /**
   * Only for a call returned from its checkpoint (`ifCompleted: 'return'`): masked answers
   * that were never stored (no `sealKeys`), so they are missing from `value`.
   */
  withheld?: string[];
}

/** Why a stored checkpoint was not trusted; see {@link FlowIncomplete.refused}. */
export interface CheckpointRefusal {
  code: /** Not a flow state at all (a field missing or of the wrong type, another call's row). */
    | 'corrupt'
    /** An answer fails its step's schema, or names no step of the flow. */
    | 'invalid_answer'
    /** The position or path does not follow from the answers. */
    | 'position_mismatch'
    /** Written by another version of the flow, and no migration took it. */
    | 'version_mismatch'
    /** A sealed (encrypted) answer does not open with the keys given. */
    | 'sealed_answer';
  message: string;
  /** The step it is about, when it is about one. */
  step?: string;
}

/** A flow that ended without completing; `answers` keeps what was given. */
export interface FlowIncomplete<R> {
  status: Exclude<FlowStatus, 'completed'>;
  answers: Partial<R>;
  /** The step it ended on. */
  step?: string;
  /** The failed step's (or escalation's) outcome. */
  outcome?: FailedOutcome;
  reason: string;
  /**
   * Set when the flow stopped on an error of its own: its checkpoint store failed
   * (`store_error`, `timeout`), a stored checkpoint was refused (`checkpoint_refused`), a
   * branch lookup failed (`pick_failed`, `pick_timeout`).
   */
  error?: { code: string; message: string };
  /** Why the call's checkpoint was refused (with `error.code` `checkpoint_refused`). */
  refused?: CheckpointRefusal;
  /**
   * Set when the caller's request ended the flow: they asked to end the call (`cancel`, the
   * flow is `cancelled`) or for a person (`human`, the flow is `transferred`).
   */
  repair?: 'cancel' | 'human';
  report: FlowReport;
}

/** What a flow resolves: completed with a typed value, or why it stopped. */
export type FlowResult<R> = FlowCompleted<R> | FlowIncomplete<R>;

/**
 * Anything with a `create()` that makes an AgentTask resolving an {@link Outcome}: a
 * {@link TaskDefinition}, and the telephony definitions (menus, digit collection).
 */
export interface TaskDefinitionLike<T> {
  readonly name: string;
  create(): voice.AgentTask<Outcome<T>>;
}

/** A task definition, a task factory, or another flow: what a step can run. */
export type StepSource<T> =
  | TaskDefinition<T>
  | TaskDefinitionLike<T>
  | TaskFactory<T>
  | FlowLike<T>;

/** The part of a flow another flow needs to nest it as a step. */
export interface FlowLike<R> {
  readonly kind: 'flow';
  readonly name: string;
  /** @internal phantom field carrying the result type. */
  readonly __result?: (r: R) => R;
}

// ---------- repair patterns (see ./repair/) ----------

/** What the flow says around repairs; `{name}` and `{value}` are filled in where given. */
export interface RepairLines {
  /** After a correction is taken: "Okay, I've changed your {name} to {value}." */
  corrected: string;
  /** Added when the corrected answer leads elsewhere: "That changes what I ask next." */
  pathChanged: string;
  /** Before the question again, when it cannot be skipped. */
  cannotSkip: string;
  /** Asked before the call ends on a cancel (with `cancel.confirm`). */
  confirmCancel: string;
  /** When the caller does not confirm the cancel, before the question again. */
  carryOn: string;
  /** When asking for a person failed (the transfer did not go through). */
  humanUnavailable: string;
}

/** Reaching a person from any question: the words and key that ask, and the transfer. */
export interface HumanRepair {
  /**
   * The transfer (or any escalation): run from the flow when the caller asks for a person.
   * `transferred` ends the flow `transferred`; a value answers the step; anything else (the
   * transfer failed) says `lines.humanUnavailable` and asks the question again.
   */
  escalate: Escalate<unknown>;
  /**
   * More words for a person on this line ("pharmacist", "a nurse"), heard alone or in a
   * request ("can I talk to the pharmacist?"); agent, representative, operator, a person, a
   * human, customer service… always count.
   */
  words?: readonly string[];
  /** A key that asks for a person wherever the question does not take that key ("0"). */
  key?: string;
}

/**
 * The repair patterns a flow hears in every step, declared once. Each is on unless set to
 * false, except `human`, which needs its escalation. Deterministic phrase matchers hear them
 * first; a step whose task asks a model also gets a `repair_request` tool for what they miss.
 */
export interface RepairOptions {
  /**
   * "actually my date of birth is March 3rd 1980", "sorry, my zip code is 94110 not 94101",
   * "can I change my score?": the earlier step reads the new answer with its own parser (or
   * asks again), then the call goes back to where the caller was. Answers after it stay,
   * unless the new answer leads elsewhere: then the flow says so and asks what the new path
   * needs. Counts as a go-back (`maxBackSteps`). Masked steps are never corrected.
   */
  correct?: boolean;
  /** "can you say that again", "what?" (and `key`, e.g. "*"): the question again. */
  repeat?: boolean | { key?: string };
  /** "skip", "next question": skips a skippable step; any other says it cannot be skipped. */
  skip?: boolean;
  /**
   * "stop", "I want to hang up", "cancel this call": the flow ends `cancelled` (its `onEnd`
   * says goodbye). With `confirm` (default true) the caller is asked first; only a yes ends.
   */
  cancel?: boolean | { confirm?: boolean };
  /** "agent", "can I talk to a pharmacist", key 0: the escalation (a transfer). Off by default. */
  human?: HumanRepair | false;
  /** What the flow says around repairs. */
  lines?: Partial<RepairLines>;
}

/** A step's own say on the flow's repairs: any of them off here, and its names. */
export interface StepRepair {
  /** false: this answer is never corrected, and no correction is heard while it is asked. */
  correct?: boolean;
  repeat?: boolean;
  skip?: boolean;
  cancel?: boolean;
  /** false: no word or key reaches a person while this question is asked. */
  human?: boolean;
  /**
   * What callers call this answer in a correction ("zip", "zip code"). Default: the step id
   * in words ("date_of_birth" → "date of birth"). The first is used when the flow says it
   * ("I've changed your zip to 94110").
   */
  names?: readonly string[];
}

/** A flow's repairs, checked, with the defaults filled in. */
export interface FlowRepair {
  readonly correct: boolean;
  readonly repeat: false | { readonly key?: string };
  readonly skip: boolean;
  readonly cancel: false | { readonly confirm: boolean };
  readonly human:
    | false
    | {
        readonly escalate: Escalate<unknown>;
        readonly words: readonly string[];
        readonly key?: string;
      };
  readonly lines: Readonly<RepairLines>;
  /** As declared (what `toData` writes back). */
  readonly declared: RepairOptions;
}
