/**
 * The prebuilt capture tasks a flow document names by `task:` (yesNo, number, email, …),
 * each with the options its `with:` may hold (data only: functions such as `validate` stay
 * in code, in a task the app registers). A definition made here remembers how, so
 * `toData` writes it back the same way.
 */
import { z } from 'zod/v4';
import type { TaskDefinition } from '../../tasks/define.js';
import {
  address,
  choice,
  date,
  digits,
  email,
  freeText,
  likert,
  number,
  personName,
  phone,
  time,
  yesNo,
} from '../../tasks/prebuilt.js';

function commonOptions() {
  const reprompts = z.array(z.string().min(1)).min(1).optional();
  return {
    question: z.string().min(1).meta({ description: 'Spoken as the prompt (no model call).' }),
    name: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_]*$/)
      .optional()
      .meta({ description: 'Task id (scripts and reports key on it). Default: the step id.' }),
    confirm: z
      .enum(['never', 'audio', 'always'])
      .optional()
      .meta({ description: 'When to read the answer back before taking it.' }),
    detectRefusal: z.boolean().optional(),
    modelFallback: z.boolean().optional(),
    retry: z
      .strictObject({
        maxNoInput: z.int().min(1).max(20).optional(),
        maxNoMatch: z.int().min(1).max(20).optional(),
        maxInvalid: z.int().min(1).max(20).optional(),
        maxAttempts: z.int().min(1).max(20).optional(),
        noInputTimeoutMs: z.int().min(500).max(120_000).optional(),
        prompts: z
          .strictObject({ noInput: reprompts, noMatch: reprompts, invalid: reprompts })
          .optional(),
      })
      .optional(),
    watchdog: z
      .strictObject({
        maxDurationMs: z.int().min(1_000).max(3_600_000).optional(),
        maxTurns: z.int().min(1).max(200).optional(),
      })
      .optional(),
  };
}

/** A prebuilt task a document may name: its options and how to build it. */
export interface PrebuiltTask {
  readonly options: z.ZodType<Record<string, unknown>>;
  readonly create: (options: Record<string, unknown>) => TaskDefinition<unknown>;
}

/** A prebuilt task whose options schema is built on first use (not at import). */
function task(
  shape: () => z.ZodRawShape,
  // biome-ignore lint/suspicious/noExplicitAny: each prebuilt task takes its own options
  create: (options: any) => TaskDefinition<any>,
): PrebuiltTask {
  let options: z.ZodType<Record<string, unknown>> | undefined;
  return {
    get options() {
      options ??= z.strictObject({ ...commonOptions(), ...shape() }) as unknown as z.ZodType<
        Record<string, unknown>
      >;
      return options;
    },
    create: create as unknown as PrebuiltTask['create'],
  };
}

/** The prebuilt tasks by the name a document uses. */
export const PREBUILT_TASKS: Readonly<Record<string, PrebuiltTask>> = {
  yesNo: task(() => ({}), yesNo),
  choice: task(
    () => ({
      options: z
        .array(
          z.strictObject({
            value: z.string().min(1),
            label: z.string().min(1),
            synonyms: z.array(z.string().min(1)).optional(),
          }),
        )
        .min(1),
    }),
    choice,
  ),
  number: task(
    () => ({
      min: z.number().optional(),
      max: z.number().optional(),
      integer: z.boolean().optional(),
      keypad: z
        .boolean()
        .optional()
        .meta({ description: 'Also take it on the keypad (needs a whole max).' }),
    }),
    number,
  ),
  date: task(
    () => ({
      timeZone: z.string().min(1).optional(),
      prefer: z.enum(['future', 'past']).optional(),
    }),
    date,
  ),
  time: task(() => ({ defaultPeriod: z.enum(['am', 'pm']).optional() }), time),
  email: task(() => ({}), email),
  phone: task(
    () => ({
      defaultRegion: z
        .string()
        .regex(/^[A-Z]{2}$/)
        .optional(),
    }),
    phone,
  ),
  personName: task(() => ({}), personName),
  address: task(() => ({}), address),
  likert: task(
    () => ({
      min: z.int().optional(),
      max: z.int().optional(),
      labels: z.record(z.string().regex(/^-?\d+$/), z.string().min(1)).optional(),
    }),
    (o: Parameters<typeof likert>[0] & { labels?: Record<string, string> }) =>
      likert({
        ...o,
        ...(o.labels
          ? { labels: Object.fromEntries(Object.entries(o.labels).map(([k, v]) => [Number(k), v])) }
          : {}),
      }),
  ),
  freeText: task(
    () => ({
      maxChars: z.int().min(1).max(10_000).optional(),
      minChars: z.int().min(1).optional(),
    }),
    freeText,
  ),
  digits: task(
    () => ({
      minLength: z.int().min(1).max(64).optional(),
      maxLength: z.int().min(1).max(64).optional(),
      validDigits: z
        .string()
        .regex(/^[0-9*#]+$/)
        .optional(),
    }),
    digits,
  ),
};

/** How a prebuilt definition was made: its task name and its `with` options as written. */
export interface PrebuiltOrigin {
  task: string;
  with: Record<string, unknown>;
}

const origins = new WeakMap<object, PrebuiltOrigin>();

/** Builds a prebuilt task from checked options (its name defaulting to the step id). */
export function buildPrebuilt(
  name: string,
  options: Record<string, unknown>,
  stepId: string,
): TaskDefinition<unknown> {
  const prebuilt = PREBUILT_TASKS[name]!;
  const definition = prebuilt.create({ ...options, name: options.name ?? stepId });
  origins.set(definition, { task: name, with: structuredClone(options) });
  return definition;
}

/** How a definition was made from a document, if it was. */
export function prebuiltOrigin(source: unknown): PrebuiltOrigin | undefined {
  return typeof source === 'object' && source !== null ? origins.get(source) : undefined;
}
