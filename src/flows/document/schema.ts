/**
 * The flow document format (`*.flow.yaml` / `*.flow.json`) as zod schemas: the document,
 * its steps, where each step goes next, and branch conditions. The loader validates with
 * them (./load.ts) and `flow.schema.json`, the JSON Schema editors use, is generated from
 * them (with the options of each prebuilt task added per `task`).
 *
 * Room to grow: every object is strict, so a later section (`repair:` for flow-wide repair
 * patterns) is an addition that older documents never collide with.
 */
import { z } from 'zod/v4';
import { OPERATORS } from '../conditions.js';
import { PREBUILT_TASKS } from './prebuilt.js';

/** A value a condition compares with. */
type DocScalar = string | number | boolean | null;

/** A branch condition (exactly one operator, or all / any / not). */
export interface ConditionDocument {
  of?: string;
  field?: string;
  eq?: DocScalar;
  ne?: DocScalar;
  in?: DocScalar[];
  notIn?: DocScalar[];
  lt?: number;
  lte?: number;
  gt?: number;
  gte?: number;
  between?: [number, number];
  answered?: boolean;
  all?: ConditionDocument[];
  any?: ConditionDocument[];
  not?: ConditionDocument;
}

function build() {
  const ID = /^[A-Za-z][A-Za-z0-9_]*$/;

  /** A step id: a letter, then letters, digits and "_"; never "end". */
  const stepIdSchema = z
    .string()
    .regex(ID, 'a step id starts with a letter and uses only letters, digits and "_"')
    .refine((id) => id !== 'end', '"end" is reserved: it ends the flow')
    .meta({ description: 'The step id: its key in the result and in checkpoints.' });

  /** Where a branch goes: a step id, or `end`. */
  const targetSchema = z
    .string()
    .regex(ID, 'a target is a step id or "end"')
    .meta({ description: 'A step id, or "end" to end the flow.' });

  /** A name in the app's registry (a task, a pick, an escalation, a flow). */
  const nameSchema = z
    .string()
    .regex(/^[A-Za-z_][\w.-]{0,127}$/, 'a name uses letters, digits, "_", "." and "-"');

  const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

  /** A condition as a document writes it; which operators go together is checked by the loader. */
  const conditionSchema: z.ZodType<ConditionDocument> = z
    .strictObject({
      of: stepIdSchema.optional().meta({ description: "Compare another step's answer." }),
      field: z
        .string()
        .optional()
        .meta({ description: 'A field of an object answer, dotted for nested fields.' }),
      eq: scalar.optional(),
      ne: scalar.optional(),
      in: z.array(scalar).min(1).optional(),
      notIn: z.array(scalar).min(1).optional(),
      lt: z.number().optional(),
      lte: z.number().optional(),
      gt: z.number().optional(),
      gte: z.number().optional(),
      between: z.tuple([z.number(), z.number()]).optional(),
      answered: z.boolean().optional(),
      get all() {
        return z.array(conditionSchema).min(1).optional();
      },
      get any() {
        return z.array(conditionSchema).min(1).optional();
      },
      get not() {
        return conditionSchema.optional();
      },
    })
    .meta({
      id: 'condition',
      description: `One operator (${OPERATORS.join(', ')}) on this step's answer (or "of" another step's), or all / any / not of conditions. A condition on an answer not given is false, except answered: false.`,
    }) as z.ZodType<ConditionDocument>;

  const labels = z
    .record(z.string(), z.string())
    .optional()
    .meta({ description: 'Edge labels for diagrams, per target.' });

  /** `next: { when: [...], else }`. */
  const whenSchema = z
    .strictObject({
      when: z
        .array(z.strictObject({ if: conditionSchema, to: targetSchema }))
        .min(1)
        .meta({ description: 'Cases in order: the first whose condition holds decides.' }),
      else: targetSchema.meta({ description: 'Where every other answer goes.' }),
      skipped: targetSchema
        .optional()
        .meta({ description: 'Where a skipped step goes (default: else).' }),
      labels,
    })
    .meta({ title: 'conditions' });

  /** `next: { pick: name, to: [...] }`: a function from the app's registry. */
  const pickSchema = z
    .strictObject({
      pick: nameSchema.meta({
        description: "A pick function from the app's registry (registry.picks).",
      }),
      to: z
        .array(targetSchema)
        .min(1)
        .meta({ description: 'Every target the function may return.' }),
      skipped: targetSchema.optional(),
      onError: targetSchema
        .optional()
        .meta({ description: 'Where to go when an async pick fails or times out.' }),
      timeoutMs: z.int().min(100).max(60_000).optional(),
      labels,
    })
    .meta({ title: 'pick' });

  /** `next: { "true": a, "false": b, default: c, skipped: d }`: a table keyed on the answer. */
  const tableSchema = z.record(z.string().min(1), targetSchema).meta({
    title: 'table',
    description:
      'Keyed on the answer ("true", "false", an enum value, a number); "default" takes the rest, "skipped" a skipped step. The keys "when" and "pick" are reserved.',
  });

  /** Where a step goes next. */
  const nextSchema = z.union([targetSchema, whenSchema, pickSchema, tableSchema]).meta({
    description:
      'Where to go after this step: a step id or "end", a table keyed on the answer, { when: [...], else }, or { pick, to }. Default: the next step listed (the last one ends).',
  });

  const CONTEXTS = ['summary', 'full', 'model-summary'] as const;

  const keySchema = z
    .string()
    .regex(/^[0-9*#A-D]$/, 'one key: 0-9, *, #, A-D')
    .meta({ description: 'One keypad key.' });
  const wordsSchema = z.array(z.string().min(1).max(64)).max(50);

  /** A flow's repair patterns, heard in every step (see docs/flows.md). */
  const repairSchema = z
    .strictObject({
      correct: z.boolean().optional().meta({
        description: '"actually my zip code is 94110": the earlier step reads the new answer.',
      }),
      repeat: z
        .union([z.boolean(), z.strictObject({ key: keySchema.optional() })])
        .optional()
        .meta({ description: '"can you say that again" (and a key): the question again.' }),
      skip: z.boolean().optional().meta({ description: '"skip": skips a skippable step.' }),
      cancel: z
        .union([z.boolean(), z.strictObject({ confirm: z.boolean().optional() })])
        .optional()
        .meta({ description: '"stop", "I want to hang up": ends the call (confirmed first).' }),
      human: z
        .union([
          z.literal(false),
          z.strictObject({
            escalate: nameSchema.meta({ description: 'The transfer (registry.escalations).' }),
            words: wordsSchema.optional(),
            key: keySchema.optional(),
          }),
        ])
        .optional()
        .meta({ description: '"agent", "can I talk to a pharmacist", a key: the transfer.' }),
      lines: z
        .strictObject({
          corrected: z.string().min(1).max(500).optional(),
          pathChanged: z.string().min(1).max(500).optional(),
          cannotSkip: z.string().min(1).max(500).optional(),
          confirmCancel: z.string().min(1).max(500).optional(),
          carryOn: z.string().min(1).max(500).optional(),
          humanUnavailable: z.string().min(1).max(500).optional(),
        })
        .optional(),
    })
    .meta({ id: 'repair' });

  /** A step's say on the flow's repairs. */
  const stepRepairSchema = z
    .strictObject({
      correct: z.boolean().optional(),
      repeat: z.boolean().optional(),
      skip: z.boolean().optional(),
      cancel: z.boolean().optional(),
      human: z.boolean().optional(),
      names: z.array(z.string().min(1).max(64)).min(1).max(20).optional().meta({
        description: 'What callers call this answer in a correction ("zip", "zip code").',
      }),
    })
    .meta({ description: "Turns any of the flow's repairs off for this step; its names." });

  /** One step of a document. */
  const stepDocumentSchema = z
    .strictObject({
      id: stepIdSchema,
      task: nameSchema.optional().meta({
        description: `A prebuilt task (${Object.keys(PREBUILT_TASKS).join(', ')}) with its options in "with", or a task from the app's registry (registry.tasks).`,
      }),
      with: z
        .record(z.string(), z.unknown())
        .optional()
        .meta({ description: 'Options of a prebuilt task (its name defaults to the step id).' }),
      announce: z.string().min(1).optional().meta({
        description:
          'A line to speak (no model, no answer); {{step}} or {{step.field}} puts in an answer given so far.',
      }),
      flow: nameSchema.optional().meta({
        description: "Another flow from the app's registry (registry.flows), run as this step.",
      }),
      label: z.string().min(1).optional().meta({ description: 'Words for people and models.' }),
      next: nextSchema.optional(),
      canRevisit: z
        .boolean()
        .optional()
        .meta({ description: 'The caller may come back to change it.' }),
      skippable: z.boolean().optional().meta({ description: 'A refusal skips it.' }),
      onFailure: z
        .union([z.enum(['fail', 'skip']), z.strictObject({ escalate: nameSchema })])
        .optional()
        .meta({
          description:
            'When the step ends without an answer: fail the flow (default), skip it, or { escalate: name } (registry.escalations).',
        }),
      maxVisits: z.int().min(1).max(20).optional(),
      timeoutMs: z.int().min(500).max(3_600_000).optional(),
      context: z.enum(CONTEXTS).optional(),
      mask: z
        .boolean()
        .optional()
        .meta({ description: 'The answer is a secret: never checkpointed in clear.' }),
      repair: stepRepairSchema.optional(),
    })
    .meta({ id: 'step' });

  /** A whole flow document. */
  const flowDocumentSchema = z
    .strictObject({
      $schema: z.string().optional(),
      flow: z
        .string()
        .regex(ID, 'a flow name starts with a letter and uses only letters, digits and "_"')
        .meta({ description: "The flow's name: its checkpoint key." }),
      version: z.union([z.int().min(0), z.string().min(1).max(64)]).meta({
        description:
          'Recorded in every checkpoint; a call checkpointed under another version resumes only through the migration the app gives.',
      }),
      label: z.string().min(1).optional(),
      context: z.enum(CONTEXTS).optional(),
      maxBackSteps: z.int().min(0).max(20).optional(),
      maxStepRuns: z.int().min(1).max(1000).optional(),
      repair: repairSchema.optional(),
      steps: z.array(stepDocumentSchema).min(1),
    })
    .meta({
      title: 'taskline flow',
      description:
        'A flow as data: steps naming tasks, branches as tables and conditions, announce lines, a version. Loaded with loadFlow(); checked with `taskline flow check`.',
    });

  return {
    condition: conditionSchema,
    when: whenSchema,
    pick: pickSchema,
    table: tableSchema,
    next: nextSchema,
    step: stepDocumentSchema,
    repair: repairSchema,
    document: flowDocumentSchema,
  };
}

let built: ReturnType<typeof build> | undefined;

/**
 * The document format's zod schemas, built on first use (not by `import 'taskline'`): the
 * whole `document`, one `step`, its `next` and the shapes `next` may take.
 */
export function flowSchemas(): ReturnType<typeof build> {
  built ??= build();
  return built;
}

/** The zod schema of a whole flow document. */
export function flowDocumentSchema(): ReturnType<typeof build>['document'] {
  return flowSchemas().document;
}

/** A flow document as written. */
export type FlowDocument = z.infer<ReturnType<typeof build>['document']>;
/** One step of a flow document. */
export type StepDocument = z.infer<ReturnType<typeof build>['step']>;
/** A step's `next` as written. */
export type NextDocument = z.infer<ReturnType<typeof build>['next']>;

/**
 * The JSON Schema editors use for flow documents (`flow.schema.json`), generated from
 * {@link flowDocumentSchema}; each prebuilt task's `with` options are checked by `task`.
 */
export function flowJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(flowDocumentSchema(), {
    io: 'input',
    target: 'draft-2020-12',
  }) as Record<string, unknown> & { $defs?: Record<string, Record<string, unknown>> };
  const step = schema.$defs?.step;
  if (step) {
    step.allOf = Object.entries(PREBUILT_TASKS).map(([name, task]) => ({
      if: { properties: { task: { const: name } }, required: ['task'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if / then, not a promise
      then: {
        properties: {
          with: z.toJSONSchema(task.options, { io: 'input', target: 'draft-2020-12' }),
        },
      },
    }));
  }
  return schema;
}
