import type { voice } from '@livekit/agents';
import type { z } from 'zod/v4';
import type { Outcome } from '../outcome.js';
import type {
  AnswersSoFar,
  ContextPolicy,
  FailurePolicy,
  FlowRepair,
  NextSpec,
  StepContext,
  StepMeta,
  StepRepair,
} from './types.js';

/** How the runner makes a step's task: a task factory, or a nested flow. */
export type StepRunner =
  | {
      kind: 'task';
      create: (context: StepContext) => voice.AgentTask<Outcome<unknown>>;
      /** True when the source is a definition object (it handles silence itself). */
      definition: boolean;
      /** The value schema, when the source is a TaskDefinition (restored answers are re-checked). */
      schema?: z.ZodType;
      /** A check of the answer when there is no schema (digit rules, menu values). */
      check?: (value: unknown) => boolean;
    }
  | { kind: 'flow'; flow: FlowDefinition };

/** One declared step, as the runner, `validateFlow` and `toMermaid` see it. */
export interface StepDef {
  readonly id: string;
  readonly index: number;
  readonly runner: StepRunner;
  /** The declared `next` (undefined: the next declared step, or the end). */
  readonly next: NextSpec<unknown> | undefined;
  readonly canRevisit: boolean;
  readonly skippable: boolean;
  readonly onFailure: FailurePolicy<unknown>;
  readonly label?: string;
  readonly maxVisits?: number;
  readonly timeoutMs?: number;
  readonly context?: ContextPolicy;
  readonly meta: StepMeta;
  /** The answer is a secret: never checkpointed in clear. */
  readonly masked: boolean;
  /** What the step was declared with (a definition, a factory, a flow): `toData` names it. */
  readonly source: unknown;
  /** The step's own answer schema, when it was given one (`schema` option). */
  readonly schema?: unknown;
  /** The step's own say on the flow's repairs (any of them off here, its names). */
  readonly repair?: StepRepair;
}

/** Options of a whole flow; see {@link flow}. */
export interface FlowOptions {
  /** Words for people: the resume line and diagrams. */
  label?: string;
  /** Chat context each step starts from. Default `'summary'`. */
  context?: ContextPolicy;
  /** Go-backs the caller may make in one call (0-20). Default 3. */
  maxBackSteps?: number;
  /** Step runs allowed in one call, a last guard against loops. Default 10 per step (min 50). */
  maxStepRuns?: number;
  /**
   * The flow's version, recorded in every checkpoint. A call checkpointed under another
   * version resumes only through `migrate`; without one it is refused (`version_mismatch`).
   */
  version?: FlowVersion;
  /** Carries a checkpoint of another version over to this one (see {@link FlowMigration}). */
  migrate?: FlowMigration;
}

/** A flow version: a whole number or a string such as "2024-06". */
export type FlowVersion = number | string;

/** The answers of a checkpoint written by another version of the flow. */
export interface MigrationInput {
  /** The version that wrote it (undefined: a checkpoint written before versions). */
  from: FlowVersion | undefined;
  /** The version running now. */
  to: FlowVersion | undefined;
  /** Answers by step id (masked ones withheld from the checkpoint are absent). */
  answers: AnswersSoFar;
  /** Steps that were skipped. */
  skipped: readonly string[];
}

/**
 * Carries a checkpoint written by another version over to this one: the answers under this
 * version's step ids (renamed, converted, dropped), or undefined to refuse the checkpoint.
 * The result is checked like any checkpoint: each answer against its step's schema, the
 * position re-walked from the first step.
 */
export type FlowMigration = (
  input: MigrationInput,
) => { answers: Record<string, unknown>; skipped?: readonly string[] } | undefined;

/** A flow's declared steps and options: plain data the runner executes. */
export interface FlowDefinition {
  readonly name: string;
  readonly steps: readonly StepDef[];
  readonly options: FlowOptions;
  /** The repair patterns heard in every step (`flow(...).repair({...})`), if declared. */
  readonly repair?: FlowRepair;
}

/** Finds a step by id. */
export function stepById(def: FlowDefinition, id: string): StepDef | undefined {
  return def.steps.find((s) => s.id === id);
}

/** Whether the step waits for the caller (and so needs no-input handling and may go back). */
export function listens(step: StepDef): boolean {
  return step.meta.listens !== false;
}
