/**
 * The scenario file format, as one zod schema: `taskline test` validates every
 * `*.scenario.yaml` against it, the JSON Schema shipped for editors is generated from it
 * (`scenario.schema.json`), and the runner's types are inferred from it.
 */
import { z } from 'zod/v4';
import { DURATION_PATTERN as DURATION } from '../core/duration.js';

export { durationMs } from '../core/duration.js';

const duration = z
  .union([
    z.number().nonnegative().finite(),
    z.string().regex(DURATION, 'a duration such as "800ms", "8s" or "1.5s"'),
  ])
  .meta({ description: 'A duration: "800ms", "8s", "1.5s", "2m" or a number of milliseconds.' });

const text = z.string().min(1).meta({
  description:
    'Text the line must contain (case-sensitive), or a regular expression written /like this/i.',
});
const texts = z.union([text, z.array(text).min(1)]);

const toolCall = z.union([
  z.string().min(1).meta({ description: 'A tool name.' }),
  z.strictObject({
    name: z.string().min(1),
    args: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'Arguments the call must contain (deep, partial match).' }),
  }),
]);

/** What must hold after a turn (for that turn only) or at the end (for the whole call). */
export const expectationSchema = z
  .strictObject({
    said: texts.optional().meta({ description: 'Each must match some agent line.' }),
    never_said: texts.optional().meta({ description: 'None may match any agent line.' }),
    outcome: z.unknown().optional().meta({
      description:
        "A deep, partial match against the call's typed result (objects: listed keys; arrays: same length, element by element; { $exists: false } for a key that must be absent, { $exists: true } for one that must be there).",
    }),
    tool_called: z.union([toolCall, z.array(toolCall).min(1)]).optional(),
    no_model_call_during: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .meta({ description: 'Agent or task ids during which the model must not be called.' }),
    visited: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .meta({ description: 'Agent or task ids that must have become active.' }),
    transferred: z
      .union([
        z.boolean(),
        z.strictObject({
          to: z.string().min(1).optional(),
          mode: z.enum(['cold', 'warm']).optional(),
        }),
      ])
      .optional()
      .meta({
        description: 'A transfer to a person happened (true), did not (false), or matches.',
      }),
    checkpoint: z
      .union([
        z.literal(true),
        z.strictObject({
          position: z.string().min(1).optional(),
          status: z.string().min(1).optional(),
          answers: z.record(z.string(), z.unknown()).optional(),
        }),
      ])
      .optional()
      .meta({
        description:
          'A flow checkpoint was written (true), or the last one written matches (position, status, answers).',
      }),
    interrupted: z.boolean().optional().meta({
      description:
        'Audio mode: agent speech was cut off (by a barge-in or a key) in scope (true), or not (false). Text mode has no playback to cut and skips this check.',
    }),
    latency: duration.optional().meta({
      description:
        'Budget from the caller input to the first agent reply (audio: end of caller speech to first agent audio); at the end it applies to every turn.',
    }),
  })
  .meta({ id: 'Expectation' });

const mask = z.boolean().optional().meta({ description: 'Show the keys as * in transcripts.' });
const turnExpect = { expect: expectationSchema.optional() };

/** The phone line the caller is heard through (audio mode). */
export const lineSchema = z
  .strictObject({
    codec: z.enum(['none', 'mulaw']).optional().meta({
      description:
        'mulaw: G.711 μ-law at 8 kHz (telephone band), decoded back to 16 kHz for the recogniser. Default none.',
    }),
    level_db: z.number().min(-60).max(30).optional().meta({
      description:
        "Change of the caller's speech level, dB (e.g. -20 a quiet caller, 12 a loud one that clips).",
    }),
    noise: z
      .strictObject({
        kind: z.enum(['white', 'pink', 'babble']).meta({
          description: 'white or pink (1/f) noise, or babble: other people talking.',
        }),
        snr_db: z.number().min(-20).max(80).meta({
          description:
            "Signal-to-noise ratio: the caller's active speech level over the noise, dB.",
        }),
      })
      .optional(),
    echo: z
      .strictObject({
        delay: duration.meta({ description: "How late the agent's own audio comes back." }),
        level_db: z.number().min(-80).max(0).meta({
          description: "Level of the echo relative to the agent's audio, dB (e.g. -24).",
        }),
      })
      .optional()
      .meta({ description: "The agent's own audio echoed back on the caller's line." }),
  })
  .meta({ id: 'Line' });

const pauseSpec = z.strictObject({
  after: z.int().min(1).meta({ description: 'Words said before the pause.' }),
  for: duration.meta({ description: 'How long the caller pauses.' }),
});
const speechOptions = {
  pause: z
    .union([pauseSpec, z.array(pauseSpec).min(1).max(10)])
    .optional()
    .meta({
      description:
        'Audio mode: the caller pauses mid-sentence (a list: several pauses, each `after` counted from the start of the line). Text mode says the line whole.',
    }),
  level_db: z.number().min(-60).max(30).optional().meta({
    description: 'Audio mode: this utterance louder or quieter than the line, dB.',
  }),
};

/** One caller turn. */
export const turnSchema = z.union([
  z.literal('hangup').meta({ description: 'The caller hangs up.' }),
  z.strictObject({
    say: z.string().min(1).meta({ description: 'The caller says this.' }),
    unless_misheard: z.string().min(1).optional().meta({
      description:
        'Audio mode: what the caller says instead when the agent reads back their previous answer, which it misheard (a caller who hears a wrong read-back says no, e.g. say: "yes", unless_misheard: "no"); a question asked again is answered with \'say\'. Text mode always says \'say\'.',
    }),
    ...speechOptions,
    ...turnExpect,
  }),
  z.strictObject({
    keys: z
      .string()
      .regex(/^[0-9*#A-D]+$/, 'keys are DTMF: 0-9 * # A-D')
      .meta({ description: 'The caller presses these keys (DTMF).' }),
    mask,
    gap: duration.optional().meta({ description: 'Time between two keys (default 250ms).' }),
    after: duration.optional().meta({
      description:
        'Audio mode: press the first key this long after the agent starts its next prompt (a key during a prompt). Text mode ignores it.',
    }),
    ...turnExpect,
  }),
  z.strictObject({
    silence: duration.meta({ description: 'The caller says nothing for this long.' }),
    ...turnExpect,
  }),
  z.strictObject({
    tone: z
      .strictObject({
        hz: z.number().min(100).max(4000).meta({ description: 'Frequency in Hz.' }),
        ms: z.number().min(20).max(10_000).meta({ description: 'Length in milliseconds.' }),
      })
      .meta({
        description:
          "The far end plays a steady tone (a voicemail's beep). Audio mode plays the sine wave; text mode reports it to the bot as the audio tap would.",
      }),
    ...turnExpect,
  }),
  z.strictObject({
    barge_in: z.string().min(1).meta({ description: 'The caller speaks over the agent.' }),
    after: duration.optional().meta({
      description: "Audio mode: start this long after the agent's prompt starts (default 500ms).",
    }),
    ...speechOptions,
    ...turnExpect,
  }),
  z.strictObject({ hangup: z.literal(true), ...turnExpect }),
]);

const toolCallStep = z.strictObject({
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
});

/** One scripted model reply. */
export const modelStepSchema = z.strictObject({
  say: z.string().optional(),
  tool_calls: z.array(toolCallStep).min(1).optional(),
  fail: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The model call fails with this message.' }),
});

/** The model the call runs on. */
export const modelSchema = z.union([
  z.literal('module').meta({ description: "The module's scripted model (its demo.ts)." }),
  z.record(z.string().min(1), z.array(modelStepSchema).min(1)).meta({
    description:
      'Scripted replies per agent or task id, in turn order ("*" answers any other): [{say}, {tool_calls: [{name, args}]}, {fail}].',
  }),
]);

/** A whole scenario file. */
export const scenarioSchema = z
  .strictObject({
    $schema: z.string().optional(),
    name: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Shown in reports (default: the file name).' }),
    module: z.string().min(1).optional().meta({
      description:
        'The call module (a file or folder exporting defineCallModule), relative to this file. Default: the folder holding the file.',
    }),
    model: modelSchema.optional(),
    repeat: z
      .int()
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: 'Run this many times; every run must pass.' }),
    audio: z.boolean().optional().meta({
      description: 'false: skip this scenario in audio mode (say why with skip_audio).',
    }),
    skip_audio: z.string().min(1).optional().meta({
      description:
        'Skip this scenario in audio mode, for this reason (printed with the skip): what keeps it from running through real audio.',
    }),
    voice: z
      .string()
      .regex(
        /^(flite|espeak):[A-Za-z0-9_+-]+$/,
        'a voice: flite:slt, flite:kal16, flite:rms, flite:awb, espeak:en-us',
      )
      .optional()
      .meta({
        description:
          "Audio mode: the caller's voice (default: the run's voices in turn — flite voices with a real recogniser).",
      }),
    line: lineSchema.optional().meta({
      description: "Audio mode: the phone line, merged over the run's --line setting.",
    }),
    meant: z.unknown().optional().meta({
      description:
        "What the caller meant: the values the call should capture, as a partial match of the call's result (like outcome). Each value is counted right, wrong, or unanswered (missing); a wrong one fails the scenario.",
    }),
    turns: z.array(turnSchema).min(1),
    expect: expectationSchema.optional(),
  })
  .meta({
    title: 'taskline call scenario',
    description: 'A scripted phone call and what must happen in it, run by `taskline test`.',
  });

/** A scenario as written in its file (durations still as written). */
export type ScenarioInput = z.input<typeof scenarioSchema>;
/** A validated scenario. */
export type ScenarioSpec = z.output<typeof scenarioSchema>;
/** One validated caller turn. */
export type TurnSpec = z.output<typeof turnSchema>;
/** One validated expectation block. */
export type ExpectationSpec = z.output<typeof expectationSchema>;
/** A phone line as written in a scenario. */
export type LineSpec = z.output<typeof lineSchema>;
/** A duration as written: "800ms", "8s" or milliseconds. */
export type Duration = z.output<typeof duration>;

/** The JSON Schema editors use for `*.scenario.yaml` (generated from {@link scenarioSchema}). */
export function scenarioJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(scenarioSchema, { io: 'input', target: 'draft-2020-12' }) as Record<
    string,
    unknown
  >;
}
