import type { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import type { Outcome } from '../outcome.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from './policy.js';
import { type TaskSpec, TypedTask } from './typed-task.js';

/** What a caller of a task may change per use: prompts, policies, validation, tools. */
export type TaskOverrides<T> = Partial<Omit<TaskSpec<T>, 'schema' | 'name'>>;

/**
 * The one definition interface of every capture — typed tasks, `collectDigits`, `menu`:
 * `create()` gives a fresh task (an upstream AgentTask), `run()` creates and awaits one inline
 * (inside a tool or `onEnter`), `with()` gives a new definition. Overrides merge into the
 * definition: `retry` and `watchdog` key by key (and `retry.prompts` kind by kind), everything
 * else replaces.
 */
export interface CaptureDefinition<T, O, D, K extends TypedTask<T> = TypedTask<T>> {
  readonly name: string;
  /** The value's schema. */
  readonly schema: z.ZodType<T>;
  /** The full spec this definition builds tasks from. */
  readonly spec: TaskSpec<T>;
  /** A new task, with per-use overrides. */
  create(overrides?: O): K;
  /** Creates the task and awaits its outcome (inside a tool or `onEnter`). */
  run(overrides?: O): Promise<Outcome<T>>;
  /** A new definition with these overrides baked in. */
  with(overrides: O): D;
}

/** A reusable typed capture; see {@link defineTask}. */
export interface TaskDefinition<T>
  extends CaptureDefinition<T, TaskOverrides<T>, TaskDefinition<T>> {}

/** The config of {@link defineTask}: a task spec whose value type comes from its schema. */
export type DefineTaskConfig<S extends z.ZodType> = Omit<TaskSpec<z.output<S>>, 'schema'> & {
  schema: S;
};

/** The policies a config may carry, which overrides merge into key by key. */
interface WithPolicies {
  retry?: Partial<RetryPolicy<never>>;
  watchdog?: Partial<Watchdog>;
}

/**
 * Merges per-use overrides into a definition's config: `retry` and `watchdog` key by key,
 * `retry.prompts` kind by kind, anything else replaced; an override left `undefined` changes
 * nothing.
 */
export function mergeOverrides<C extends object>(base: C, overrides?: Partial<C>): C {
  if (!overrides) return base;
  const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) merged[key] = value;
  }
  const a = base as WithPolicies;
  const b = overrides as WithPolicies;
  if (a.retry && b.retry) {
    const prompts =
      a.retry.prompts && b.retry.prompts
        ? { ...a.retry.prompts, ...defined(b.retry.prompts) }
        : (b.retry.prompts ?? a.retry.prompts);
    merged.retry = { ...a.retry, ...defined(b.retry), ...(prompts ? { prompts } : {}) };
  }
  if (a.watchdog && b.watchdog) merged.watchdog = { ...a.watchdog, ...defined(b.watchdog) };
  return merged as C;
}

function defined<O extends object>(o: O): Partial<O> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<O>;
}

/**
 * Builds a capture definition from a config: `toSpec` turns a (merged) config into the spec
 * of a task (checking it, so a bad config fails when defined, not mid-call), `build` makes
 * the task. Typed tasks, digit collection and menus all go through here.
 */
export function captureDefinition<T, C extends object, D, K extends TypedTask<T>>(
  config: C,
  toSpec: (config: C) => TaskSpec<T>,
  build: (spec: TaskSpec<T>, config: C) => K,
  wrap: (config: C) => D,
): CaptureDefinition<T, Partial<C>, D, K> {
  const spec = checkSpec(toSpec(config));
  const definition: CaptureDefinition<T, Partial<C>, D, K> = {
    name: spec.name,
    schema: spec.schema,
    spec,
    create: (overrides) => {
      if (!overrides) return build(spec, config);
      const merged = mergeOverrides(config, overrides);
      return build(checkSpec(toSpec(merged)), merged);
    },
    run: (overrides) => definition.create(overrides).run(),
    with: (overrides) => wrap(mergeOverrides(config, overrides)),
  };
  return definition;
}

/**
 * Defines a typed capture task: a zod schema in, an `Outcome<z.infer<schema>>` out.
 *
 * @example
 * const email = defineTask({
 *   name: 'email',
 *   instructions: 'Collect the caller email address.',
 *   schema: z.object({ email: z.string().email() }),
 *   confirm: 'audio',
 * });
 * const outcome = await email.run(); // Outcome<{ email: string }>
 */
export function defineTask<S extends z.ZodType>(
  config: DefineTaskConfig<S>,
): TaskDefinition<z.output<S>> {
  return fromSpec(config as TaskSpec<z.output<S>>);
}

/** Builds a definition from a complete spec (used by the prebuilt tasks). */
export function fromSpec<T>(spec: TaskSpec<T>): TaskDefinition<T> {
  return captureDefinition<T, TaskSpec<T>, TaskDefinition<T>, TypedTask<T>>(
    spec,
    (s) => s,
    (s) => new TypedTask(s),
    fromSpec,
  );
}

/** Rejects a spec that could only fail mid-call (a bad name, a zod 3 schema, an unbounded policy). */
function checkSpec<T>(spec: TaskSpec<T>): TaskSpec<T> {
  if (!spec.name || !/^[a-z][a-z0-9_]*$/i.test(spec.name)) {
    throw new TasklineError(
      'invalid_argument',
      `Task name "${spec.name}" must start with a letter and use only letters, digits and "_".`,
    );
  }
  if (!isZod4Schema(spec.schema)) {
    throw new TasklineError(
      'invalid_argument',
      `Task "${spec.name}": schema must be a zod 4 schema. On zod 3.25, import { z } from 'zod/v4' (the zod 3 API in 'zod' is not supported).`,
    );
  }
  resolveRetry(spec.retry);
  resolveWatchdog(spec.watchdog);
  return spec;
}

/** zod 4 schemas (from `zod` 4 or `zod/v4` in zod 3.25) carry `_zod`; zod 3 ones do not. */
function isZod4Schema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}
