import type { llm, voice } from '@livekit/agents';
import type { InputModality } from '../core/call.js';
import type { FailedOutcome, FailureStatus, Outcome } from '../outcome.js';
import type { TaskDefinition } from '../tasks/define.js';

/** The reserved target that ends a flow. */
export const END = 'end';

/** A step target: another step's id, or `'end'`. */
export type Target = string;

/** The answers given so far, keyed by step id (read-only view for branch functions). */
export type AnswersSoFar = Readonly<Record<string, unknown>>;

/**
 * A branch decided by a function whose possible targets are declared up front, so the
 * graph can be validated and drawn without running it.
 *
 * @example
 * { to: ['why', 'referral', 'thanks'], pick: (score) => (score <= 6 ? 'why' : score >= 9 ? 'referral' : 'thanks') }
 */
export interface PickNext<T, To extends string = string> {
  /** Every target `pick` may return. */
  readonly to: readonly To[];
  /** Chooses the next step from the step's value (and the answers so far). */
  readonly pick: (value: T, answers: AnswersSoFar) => NoInfer<To>;
  /** Where to go when the step was skipped (required if the step can be skipped). */
  readonly skipped?: NoInfer<To>;
  /** Edge labels for diagrams, per target. */
  readonly labels?: { readonly [K in NoInfer<To>]?: string };
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

/** Where a step goes next: a step id (or `'end'`), a branch table, or a declared pick. */
export type NextSpec<T, To extends string = string> = Target | NextTable<T> | PickNext<T, To>;

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
}

/** A factory for any upstream AgentTask that resolves an {@link Outcome}. */
export type TaskFactory<T> = () => voice.AgentTask<Outcome<T>>;

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
export type StepResultKind = 'ok' | 'skipped' | 'escalated' | 'back' | 'kept' | FailureStatus;

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
}

/** A finished flow with every required answer. */
export interface FlowCompleted<R> {
  status: 'completed';
  value: R;
  answers: Partial<R>;
  report: FlowReport;
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
  /** Set when the flow stopped on an error of its own (its checkpoint store failed). */
  error?: { code: string; message: string };
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
