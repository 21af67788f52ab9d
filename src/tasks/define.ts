import type { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import type { Outcome } from '../outcome.js';
import { resolveRetry, resolveWatchdog } from './policy.js';
import { type TaskSpec, TypedTask } from './typed-task.js';

/** What a caller of a task may change per use: prompts, policies, validation, tools. */
export type TaskOverrides<T> = Partial<Omit<TaskSpec<T>, 'schema' | 'name'>>;

/**
 * A reusable capture: `create()` gives a fresh {@link TypedTask} (an upstream AgentTask),
 * `run()` creates and awaits one inline (inside a tool or `onEnter`).
 */
export interface TaskDefinition<T> {
  readonly name: string;
  readonly schema: z.ZodType<T>;
  /** The full spec this definition builds tasks from. */
  readonly spec: TaskSpec<T>;
  /** A new task, with per-use overrides. */
  create(overrides?: TaskOverrides<T>): TypedTask<T>;
  /** Creates the task and awaits its outcome (inside a tool or `onEnter`). */
  run(overrides?: TaskOverrides<T>): Promise<Outcome<T>>;
  /** A new definition with these overrides baked in. */
  with(overrides: TaskOverrides<T>): TaskDefinition<T>;
}

/** The config of {@link defineTask}: a task spec whose value type comes from its schema. */
export type DefineTaskConfig<S extends z.ZodType> = Omit<TaskSpec<z.output<S>>, 'schema'> & {
  schema: S;
};

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
  // Fail at definition time, not mid-call, when a policy is out of bounds.
  resolveRetry(spec.retry);
  resolveWatchdog(spec.watchdog);
  const definition: TaskDefinition<T> = {
    name: spec.name,
    schema: spec.schema,
    spec,
    create: (overrides) => new TypedTask({ ...spec, ...overrides }),
    run: (overrides) => definition.create(overrides).run(),
    with: (overrides) => fromSpec({ ...spec, ...overrides }),
  };
  return definition;
}

/** zod 4 schemas (from `zod` 4 or `zod/v4` in zod 3.25) carry `_zod`; zod 3 ones do not. */
function isZod4Schema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}
