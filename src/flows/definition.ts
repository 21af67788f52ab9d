import type { voice } from '@livekit/agents';
import type { z } from 'zod/v4';
import type { Outcome } from '../outcome.js';
import type { ContextPolicy, FailurePolicy, NextSpec, StepMeta } from './types.js';

/** How the runner makes a step's task: a task factory, or a nested flow. */
export type StepRunner =
  | {
      kind: 'task';
      create: () => voice.AgentTask<Outcome<unknown>>;
      /** True when the source is a definition object (it handles silence itself). */
      definition: boolean;
      /** The value schema, when the source is a TaskDefinition (restored answers are re-checked). */
      schema?: z.ZodType;
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
}

/** A flow's declared steps and options: plain data the runner executes. */
export interface FlowDefinition {
  readonly name: string;
  readonly steps: readonly StepDef[];
  readonly options: FlowOptions;
}

/** Finds a step by id. */
export function stepById(def: FlowDefinition, id: string): StepDef | undefined {
  return def.steps.find((s) => s.id === id);
}

/** Whether the step waits for the caller (and so needs no-input handling and may go back). */
export function listens(step: StepDef): boolean {
  return step.meta.listens !== false;
}
