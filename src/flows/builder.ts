import type { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import { derivedCheck, isZodSchema, sourceMasked } from './answer-check.js';
import { assertCondition } from './conditions.js';
import type { FlowDefinition, FlowOptions, StepDef, StepRunner } from './definition.js';
import { isPick, isWhen } from './graph.js';
import type {
  AddStep,
  AnyStepSource,
  FlowValue,
  IsOptional,
  NextShape,
  SourceValue,
  StepInfo,
} from './infer.js';
import { checkStepRepair, resolveRepair } from './repair/config.js';
import { type FlowRunOptions, FlowTask } from './runner.js';
import {
  END,
  type FlowLike,
  type FlowResult,
  type RepairOptions,
  type StepMeta,
  type StepOptions,
} from './types.js';
import { assertValidFlow, type FlowValidation, validateFlow } from './validate.js';

/** Rejects a pick whose function can return a target it did not declare in `to`. */
export type CheckPick<O> = O extends {
  next: { to: readonly (infer To)[]; pick: (...args: never[]) => infer P };
}
  ? string extends Awaited<P>
    ? unknown // a widened return type (a block body) is checked at run time instead
    : [Awaited<P>] extends [To]
      ? unknown
      : { next: { pick: (...args: never[]) => To | PromiseLike<To> } }
  : unknown;

/** A flow: declared steps, runnable as an AgentTask, with its result type inferred. */
export interface Flow<R> extends FlowLike<R> {
  readonly definition: FlowDefinition;
  /** A new runner task (an upstream AgentTask); throws if the flow has validation errors. */
  create(options?: FlowRunOptions): FlowTask<R>;
  /** Creates the runner and awaits its result (inside a tool or `onEnter`). */
  run(options?: FlowRunOptions): Promise<FlowResult<R>>;
}

/** The result type of a flow (`FlowValueOf<typeof survey>`). */
export type FlowValueOf<F> = F extends FlowLike<infer R> ? R : never;

const ID = /^[a-z][a-z0-9_]*$/i;

/**
 * Builds a flow step by step; each `step()` returns a new builder whose result type
 * includes the step. Branching is data (`next`), so the graph can be validated and drawn
 * without running it.
 */
export class FlowBuilder<Steps extends StepInfo[] = []> implements Flow<FlowValue<Steps>> {
  readonly kind = 'flow';
  readonly definition: FlowDefinition;
  declare readonly __result?: (r: FlowValue<Steps>) => FlowValue<Steps>;
  private validated = false;

  constructor(definition: FlowDefinition) {
    this.definition = definition;
  }

  /** The flow's name (its checkpoint key and the runner task's id). */
  get name(): string {
    return this.definition.name;
  }

  /**
   * Adds a step that runs `source` (a task definition, a task factory, or another flow).
   * Its value joins the result under `id`; `next` decides where the call goes after it.
   */
  step<
    const Id extends string,
    S extends AnyStepSource,
    const O extends StepOptions<SourceValue<S>> = Record<never, never>,
  >(
    id: Id,
    source: S,
    options?: O & StepOptions<SourceValue<S>> & CheckPick<O>,
  ): FlowBuilder<
    AddStep<Steps, { id: Id; value: SourceValue<S>; optional: IsOptional<O>; next: NextShape<O> }>
  > {
    const def = this.definition;
    const opts = (options ?? {}) as StepOptions<unknown>;
    checkStep(def, id, opts);
    const runner = toRunner(id, source, opts.schema);
    const step: StepDef = {
      id,
      index: def.steps.length,
      runner,
      next: opts.next,
      canRevisit: opts.canRevisit ?? false,
      skippable: opts.skippable ?? false,
      onFailure: opts.onFailure ?? 'fail',
      label: opts.label,
      maxVisits: opts.maxVisits,
      timeoutMs: opts.timeoutMs,
      context: opts.context,
      meta: { ...sourceMeta(source), ...opts.meta },
      masked: opts.mask ?? sourceMasked(source),
      source,
      ...(opts.schema !== undefined ? { schema: opts.schema } : {}),
      ...(opts.repair !== undefined ? { repair: checkStepRepair(id, opts.repair) } : {}),
    };
    checkNext(def, step);
    return new FlowBuilder({ ...def, steps: [...def.steps, step] });
  }

  /**
   * Declares the flow's repair patterns, heard in every step: correct an earlier answer,
   * repeat the question, skip it, end the call, ask for a person (see {@link RepairOptions}).
   * A step turns any of them off with its own `repair` option.
   *
   * @example
   * flow('refill')
   *   .step('dob', date({ name: 'dob', question: 'Your date of birth?' }), { repair: { names: ['date of birth'] } })
   *   .step('rx', digits({ name: 'rx', question: 'Your prescription number?', minLength: 7, maxLength: 7 }))
   *   .repair({ human: { words: ['pharmacist'], key: '0', escalate: toPharmacist } });
   */
  repair(options: RepairOptions): FlowBuilder<Steps> {
    return new FlowBuilder({ ...this.definition, repair: resolveRepair(this.name, options) });
  }

  /** Checks the graph (see {@link validateFlow}). */
  validate(): FlowValidation {
    return validateFlow(this.definition);
  }

  create(options?: FlowRunOptions): FlowTask<FlowValue<Steps>> {
    if (!this.validated) {
      assertValidFlow(this.definition);
      this.validated = true;
    }
    return new FlowTask<FlowValue<Steps>>(this.definition, options);
  }

  run(options?: FlowRunOptions): Promise<FlowResult<FlowValue<Steps>>> {
    return Promise.resolve().then(() => this.create(options).run());
  }
}

/**
 * Starts a flow declaration.
 *
 * @example
 * const survey = flow('survey')
 *   .step('consent', yesNo({ name: 'consent', question: 'Do you have a minute?' }),
 *     { next: { true: 'score', false: 'end' } })
 *   .step('score', number({ name: 'score', question: 'From 0 to 10?', min: 0, max: 10 }));
 * const result = await survey.run({ checkpoints }); // FlowResult<{ consent: boolean; score?: number }>
 */
export function flow(name: string, options: FlowOptions = {}): FlowBuilder<[]> {
  if (!ID.test(name)) {
    throw new TasklineError(
      'invalid_argument',
      `Flow name "${name}" must start with a letter and use only letters, digits and "_".`,
    );
  }
  const { maxBackSteps, maxStepRuns } = options;
  if (
    maxBackSteps !== undefined &&
    !(Number.isInteger(maxBackSteps) && maxBackSteps >= 0 && maxBackSteps <= 20)
  ) {
    throw new TasklineError(
      'invalid_argument',
      `maxBackSteps must be a whole number from 0 to 20 (got ${String(maxBackSteps)}).`,
    );
  }
  if (
    maxStepRuns !== undefined &&
    !(Number.isInteger(maxStepRuns) && maxStepRuns >= 1 && maxStepRuns <= 1000)
  ) {
    throw new TasklineError(
      'invalid_argument',
      `maxStepRuns must be a whole number from 1 to 1000 (got ${String(maxStepRuns)}).`,
    );
  }
  const { version, migrate } = options;
  if (
    version !== undefined &&
    !(
      (typeof version === 'number' && Number.isSafeInteger(version) && version >= 0) ||
      (typeof version === 'string' && version.length > 0 && version.length <= 64)
    )
  ) {
    throw new TasklineError(
      'invalid_argument',
      `Flow "${name}": version must be a whole number or a short string (got ${JSON.stringify(version)}).`,
    );
  }
  if (migrate !== undefined && typeof migrate !== 'function') {
    throw new TasklineError('invalid_argument', `Flow "${name}": migrate must be a function.`);
  }
  return new FlowBuilder({ name, steps: [], options });
}

function checkStep(def: FlowDefinition, id: string, opts: StepOptions<unknown>): void {
  if (!ID.test(id) || id === END) {
    throw new TasklineError(
      'invalid_argument',
      `Step id "${id}" must start with a letter, use only letters, digits and "_", and not be "end".`,
    );
  }
  if (def.steps.some((s) => s.id === id)) {
    throw new TasklineError('invalid_argument', `Flow "${def.name}" already has a step "${id}".`);
  }
  if (
    opts.maxVisits !== undefined &&
    !(Number.isInteger(opts.maxVisits) && opts.maxVisits >= 1 && opts.maxVisits <= 20)
  ) {
    throw new TasklineError(
      'invalid_argument',
      `Step "${id}": maxVisits must be a whole number from 1 to 20 (got ${String(opts.maxVisits)}).`,
    );
  }
  if (
    opts.timeoutMs !== undefined &&
    !(Number.isFinite(opts.timeoutMs) && opts.timeoutMs >= 500 && opts.timeoutMs <= 3_600_000)
  ) {
    throw new TasklineError(
      'invalid_argument',
      `Step "${id}": timeoutMs must be between 500 and 3600000 ms (got ${String(opts.timeoutMs)}).`,
    );
  }
  const next = opts.next;
  if (
    next !== undefined &&
    typeof next !== 'string' &&
    (typeof next !== 'object' || next === null)
  ) {
    throw new TasklineError(
      'invalid_argument',
      `Step "${id}": next must be a step id, a branch table or { to, pick }.`,
    );
  }
  const onFailure = opts.onFailure;
  if (
    onFailure !== undefined &&
    onFailure !== 'fail' &&
    onFailure !== 'skip' &&
    typeof onFailure !== 'function'
  ) {
    throw new TasklineError(
      'invalid_argument',
      `Step "${id}": onFailure must be 'fail', 'skip' or an escalation function.`,
    );
  }
}

function toRunner(id: string, source: unknown, schema: unknown): StepRunner {
  if (schema !== undefined && !isZodSchema(schema)) {
    throw new TasklineError(
      'invalid_argument',
      `Step "${id}": schema must be a zod 4 schema of the step's answer.`,
    );
  }
  const own = schema === undefined ? {} : { schema: schema as z.ZodType };
  if (typeof source === 'function') {
    const factory = source as StepRunnerTask;
    return { kind: 'task', create: (context) => factory(context), definition: false, ...own };
  }
  if (typeof source === 'object' && source !== null) {
    const s = source as {
      kind?: unknown;
      definition?: unknown;
      create?: unknown;
      schema?: unknown;
      spec?: unknown;
    };
    if (s.kind === 'flow' && typeof s.definition === 'object' && s.definition !== null) {
      return { kind: 'flow', flow: s.definition as FlowDefinition };
    }
    if (typeof s.create === 'function') {
      const create = s.create as () => ReturnType<StepRunnerTask>;
      return {
        kind: 'task',
        create: () => create.call(source),
        definition: true,
        ...derivedCheck(source),
        ...own,
      };
    }
  }
  throw new TasklineError(
    'invalid_argument',
    `Step "${id}" needs a task definition, a task factory (() => AgentTask) or a flow.`,
  );
}

type StepRunnerTask = Extract<StepRunner, { kind: 'task' }>['create'];

/** Checks a step's `next` beyond its shape: conditions, and the bounds of an async pick. */
function checkNext(def: FlowDefinition, step: StepDef): void {
  const next = step.next;
  if (isWhen(next)) {
    if (next.when.length === 0) {
      throw new TasklineError(
        'invalid_argument',
        `Step "${step.id}": "when" needs at least one case.`,
      );
    }
    for (const c of next.when) {
      if (typeof c !== 'object' || c === null || typeof c.to !== 'string') {
        throw new TasklineError(
          'invalid_argument',
          `Step "${step.id}": each "when" case is { if: condition, to: step }.`,
        );
      }
      assertCondition(c.if, step.id, {
        // Steps declared later are checked by validateFlow once the flow is whole.
        hasStep: () => true,
        schemaOf: (id) =>
          id === step.id && step.runner.kind === 'task' ? step.runner.schema : undefined,
      });
    }
    return;
  }
  if (isPick(next)) {
    const ms = next.timeoutMs;
    if (ms !== undefined && !(Number.isFinite(ms) && ms >= 100 && ms <= 60_000)) {
      throw new TasklineError(
        'invalid_argument',
        `Step "${step.id}": a pick's timeoutMs must be between 100 and 60000 ms (got ${String(ms)}).`,
      );
    }
    if (next.onError !== undefined && !next.to.includes(next.onError)) {
      throw new TasklineError(
        'invalid_argument',
        `Step "${step.id}": its pick's onError "${next.onError}" must be one of its targets (${next.to.join(', ')}).`,
      );
    }
  }
  void def;
}

/** Menu metadata a source exposes (`meta`, or `keys` / `repeatKey` / `backKey` fields). */
function sourceMeta(source: unknown): StepMeta {
  if ((typeof source !== 'object' && typeof source !== 'function') || source === null) return {};
  const s = source as { meta?: unknown; keys?: unknown; repeatKey?: unknown; backKey?: unknown };
  const meta: StepMeta =
    typeof s.meta === 'object' && s.meta !== null ? { ...(s.meta as StepMeta) } : {};
  if (Array.isArray(s.keys) && s.keys.every((k) => typeof k === 'string')) meta.keys ??= s.keys;
  if (typeof s.repeatKey === 'string') meta.repeatKey ??= s.repeatKey;
  if (typeof s.backKey === 'string') meta.backKey ??= s.backKey;
  return meta;
}
