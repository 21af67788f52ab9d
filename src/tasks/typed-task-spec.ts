/**
 * What a capture is made of, apart from the engine itself (./typed-task.ts): its spec (the one
 * definition interface of typed tasks, digit collection and menus), the tools it gives its
 * model and their parameters (built once), its counters, and the words it uses by default
 * (instructions, read-back, re-prompts).
 */
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import type { InputModality } from '../core/call.js';
import type { AnswerKind, TurnJudgement } from '../core/expectation.js';
import { joinSpeech } from './capture.js';
import type { ParseResult } from './parsers/result.js';
import { type ConfirmPolicy, pickReprompt, type RetryPolicy, type Watchdog } from './policy.js';

/** Names of the tools every typed task gives its model. */
export const TASK_TOOLS = {
  submit: 'submit',
  declined: 'report_declined',
  unclear: 'report_unclear',
  confirm: 'confirm_answer',
} as const;

/**
 * Name of the internal tool that runs `retry.onExhausted`: the escalation always runs inside
 * a tool call, where upstream lets an inline AgentTask (a warm transfer) run. Never offered to
 * a model.
 */
export const ESCALATE_TOOL = 'taskline_escalate';

// The fixed tools' parameters, built once: a zod schema costs more to build than the rest of
// a task, and every call builds several tasks.
/** The report_declined tool's parameters. */
export const DECLINED_PARAMETERS = z.object({
  reason: z.string().describe('What the caller said, briefly'),
});
/** The report_unclear tool's parameters. */
export const UNCLEAR_PARAMETERS = z.object({
  reason: z.string().describe('What was unclear, briefly'),
});
/** The confirm_answer tool's parameters. */
export const CONFIRM_PARAMETERS = z.object({ correct: z.boolean() });
const wrappedSchemas = new WeakMap<z.ZodType, z.ZodObject>();

/** The submit tool's parameters: the schema itself, or `{ value }` around it (built once). */
export function submitParameters(schema: z.ZodType, wraps: boolean): z.ZodObject {
  if (!wraps) return schema as z.ZodObject;
  let wrapped = wrappedSchemas.get(schema);
  if (!wrapped) {
    wrapped = z.object({ value: schema });
    wrappedSchemas.set(schema, wrapped);
  }
  return wrapped;
}

/** What a deterministic parser is told besides the utterance. */
export interface ParseContext {
  /** The call's clock time (resolve "tomorrow" against this, never the wall clock). */
  now: number;
  modality: InputModality;
}

/** Everything a typed task is built from; see {@link defineTask}. */
export interface TaskSpec<T> {
  /** Short id, used as the agent id ("email", "pin"): scripts and reports key on it. */
  name: string;
  /** What the model should know about the capture. */
  instructions: string;
  /** The value's schema; the model's submit tool takes exactly this. */
  schema: z.ZodType<T>;
  /** Spoken verbatim when the task starts (no model call). Without it the model opens. */
  prompt?: string;
  /** Extra rule on a schema-valid value; return the problem in words, or undefined. */
  validate?: (value: T) => string | undefined | Promise<string | undefined>;
  /**
   * Resolves answers without a model where it can (a digit string, "yes"). An approximate
   * match ("about six") is read back before it is taken, whatever `confirm` says; a nomatch
   * with `candidates` ("seven or eight") makes the task ask which.
   */
  parse?: (text: string, ctx: ParseContext) => ParseResult<T>;
  /**
   * Reads a partial correction of a value the caller just heard read back ("no, it's D O E",
   * "the last four are 1 2 3 4") and returns the patched value; nomatch when the words are not
   * a patch, invalid when they are but fit no single part (the caller is asked again).
   */
  correct?: (pending: T, text: string) => ParseResult<T>;
  /**
   * Canonicalises a submitted value (from the model or a parser), e.g. a phone number to
   * E.164; an `invalid` result goes back as the reason, `nomatch` as "not understood".
   */
  normalize?: (value: T) => ParseResult<T>;
  /**
   * Treat a refusal as `declined` without a model call. Default true. An explicit refusal
   * ("I'd rather not say", "no comment") declines at once; a soft one ("I'd rather not", "not
   * interested") only when the parser does not read it as an answer (a yes/no task reads it
   * as no).
   */
  detectRefusal?: boolean;
  /**
   * Also accept the answer on the keypad: keys are collected until `finishOnKey` (default
   * '#'), `maxDigits`, `isComplete(keys)` or `interDigitTimeoutMs` of quiet, then read by
   * `parse` (never a model) with modality 'dtmf'. The first key interrupts the task's speech.
   */
  keypad?: KeypadEntry;
  /** Accept spoken and typed answers (default true); false asks the caller for the keypad. */
  allowSpeech?: boolean;
  /** Said instead of `prompt` after a failure (a shorter form); default the prompt. */
  reprompt?: string;
  /**
   * Replays the prompt without counting a failure: on this key, or when the caller's words
   * match `phrases` ("repeat that").
   */
  repeat?: { key?: string; phrases?: RegExp };
  /**
   * The answer is a secret (a PIN): while the task runs, echoes of the caller are masked; keys
   * and spoken answers reach the chat context, the capture log and logs only as "****".
   */
  mask?: boolean;
  /** What the task listens for, published as the call's {@link Expectation} while it waits. */
  expects?: ExpectationSpec;
  /** How the model submits an answer when not as the schema itself (a menu submits a key). */
  submit?: SubmitTool<T>;
  /** The report tools the model gets besides submit (default both). */
  reports?: { declined?: boolean; confirm?: boolean };
  /**
   * Who words the re-prompt after the model reported an answer unclear or invalid: the model,
   * on the tool's result (default), or the task itself (its own line, no second model call).
   */
  repromptBy?: 'model' | 'task';
  /** How the call's capture log shows an accepted value (default: its read-back). */
  display?: (value: T) => string;
  /** Log component of the task's "<name> ended: <status>" line (default "taskline.tasks"). */
  logComponent?: string;
  /** Send what `parse` cannot resolve to the model (default true). False: count a no-match. */
  modelFallback?: boolean;
  /** When to read the value back before accepting it. Default 'never'. */
  confirm?: ConfirmPolicy;
  /**
   * Read back a value parsed from speech the recogniser was less sure of than this (0–1,
   * default 0.5), whatever `confirm` says; 0 turns it off. Only recognisers that report a
   * confidence (on `alternatives[0].confidence`) trigger it: none reported is "unknown".
   */
  minConfidence?: number;
  /** Speakable form of a value; `spelled` after the caller rejected a read-back. */
  readBack?: (value: T, spelled: boolean) => string;
  retry?: Partial<RetryPolicy<T>>;
  watchdog?: Partial<Watchdog>;
  /** Extra tools for the task's model. */
  tools?: llm.ToolContextLike;
  /** A model for this task only (the session's otherwise). */
  llm?: llm.LLM;
  /** Chat history the task starts from. */
  chatCtx?: llm.ChatContext;
}

/** How keypad entry ends (see {@link TaskSpec.keypad}). */
export interface KeypadEntry {
  /** Most keys one answer takes (counting only `validKeys`, when given). */
  maxDigits: number;
  /** Ends the entry early (default '#'; '' for none). Never part of the keys. */
  finishOnKey?: string;
  /** Removes the last key entered (e.g. '*'); off by default. */
  deleteKey?: string;
  /** Keys that count toward `maxDigits` (default all): a stray key never completes an entry. */
  validKeys?: string;
  /**
   * Keys the entry takes as its own input besides its finish and delete keys (default
   * `validKeys`, else the digits 0-9). A key outside them is first offered to the call's
   * turn interceptor (a flow's repair keys: 0 for a person, * to repeat); a key inside them
   * is always this entry's input, so 0 at a digits question is a digit.
   */
  ownKeys?: string;
  /** Quiet after a key that ends the entry (default 3,000 ms on the call's clock). */
  interDigitTimeoutMs?: number;
  /** True when the keys so far are a whole answer (e.g. "7" on a 0-10 scale). */
  isComplete?: (keys: string) => boolean;
}

/** What a capture publishes about the answer it expects (see `Expectation` in core). */
export interface ExpectationSpec {
  /** The kind of answer (default 'custom'). */
  kind?: AnswerKind;
  /** Words a recogniser should favour (menu options, names on a list). */
  phrases?: readonly string[];
  /**
   * For digit answers: fewer spoken digits than `min` are a proper prefix (the turn is not
   * over); `max` digits that parse are a whole answer; in between, the session's own timing.
   */
  digits?: { min: number; max: number };
  /**
   * True when words the parser reads as a whole answer may still grow into another one
   * ("twenty" → "twenty five", "March third" → "March third 1980"): judged `unknown`, not
   * `complete`, so nobody cuts the caller off.
   */
  mayGrow?: (text: string) => boolean;
  /** Judges an utterance itself instead of the task's parser. Must not throw. */
  judge?: (text: string) => TurnJudgement;
}

/** A model submit tool whose arguments are not the value itself (see {@link TaskSpec.submit}). */
export interface SubmitTool<T> {
  description: string;
  parameters: z.ZodObject;
  /** The value the arguments name: `invalid` goes back to the model as the tool error. */
  read(args: Record<string, unknown>): ParseResult<T>;
  /** The arguments that name a value (the task submits what its parser read this way). */
  args(value: T): Record<string, unknown>;
}

/** What a typed task has counted so far; flows and reports read it. */
export interface TaskCounters {
  noInput: number;
  noMatch: number;
  invalid: number;
  /** Read-backs the caller rejected. */
  rejected: number;
  /** Caller turns inside the task. */
  turns: number;
}

/** True for one of the tools every typed task has. */
export function isTaskTool(name: string): boolean {
  return Object.values(TASK_TOOLS).includes(name as (typeof TASK_TOOLS)[keyof typeof TASK_TOOLS]);
}

/** The instructions a typed task's model gets. */
export function taskInstructions<T>(spec: TaskSpec<T>): string {
  return [
    spec.instructions,
    '',
    `You are collecting one answer from the caller (${spec.name}). This is a phone call: keep every reply short.`,
    `- When you have the answer, call ${TASK_TOOLS.submit}. If it is rejected, tell the caller what was wrong and ask again.`,
    `- If the caller refuses to answer, call ${TASK_TOOLS.declined}.`,
    `- If you cannot understand the answer, call ${TASK_TOOLS.unclear}.`,
    `- After reading an answer back, call ${TASK_TOOLS.confirm} with whether the caller agreed.`,
  ].join('\n');
}

/** A tool error as the caller should hear it (without "Error:"). */
export function stripToolErrorPrefix(text: string): string {
  return text.replace(/^(Error:|Invalid arguments for \w+:)\s*/i, '');
}

/** A value read back in words; `spelled` after the caller rejected it once. */
export function defaultReadBack(value: unknown, spelled: boolean): string {
  const text =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : Object.values(value as Record<string, unknown>)
          .filter((v) => v !== undefined && v !== null && v !== '')
          .join(', ');
  return spelled ? [...text].join(' ') : text;
}

/**
 * A re-prompt line after the `n`th failure of a kind: the reason (what was wrong, if the task
 * knows), then the policy's own re-prompt, else a default one around `prompt`.
 */
export function repromptLine<T>(
  kind: 'noInput' | 'noMatch' | 'invalid',
  n: number,
  retry: RetryPolicy<T>,
  prompt: string,
  reason?: string,
): string {
  const custom = pickReprompt(retry.prompts?.[kind], Math.max(1, n));
  if (custom) return joinSpeech(reason ?? '', custom);
  if (kind === 'noInput')
    return joinSpeech(n > 1 ? 'Are you still there?' : "Sorry, I didn't hear anything.", prompt);
  if (kind === 'noMatch') return joinSpeech(reason ?? "Sorry, I didn't understand.", prompt);
  return joinSpeech(reason ?? '', prompt || 'Please try again.');
}

/** What the task does when its model calls one of its tools. */
export interface TaskToolHandlers {
  submit(args: Record<string, unknown>): Promise<string | undefined>;
  declined(reason: string): void;
  unclear(reason: string): string | undefined;
  confirm(correct: boolean): string | undefined;
}

/**
 * A task's tools for its model: the spec's own, then submit, and the report tools the spec
 * keeps (declined, unclear, confirm). Without a model fallback there are none.
 */
export function taskTools<T>(
  spec: TaskSpec<T>,
  parameters: z.ZodObject,
  on: TaskToolHandlers,
): llm.ToolContextEntry[] {
  const own = llm.toToolContext(spec.tools)?.tools ?? [];
  const tools: llm.ToolContextEntry[] = [
    ...own,
    llm.tool({
      name: TASK_TOOLS.submit,
      description:
        spec.submit?.description ?? `Submit the caller's answer (${spec.name}) once you have it.`,
      parameters: spec.submit?.parameters ?? parameters,
      execute: async (args: Record<string, unknown>) => on.submit(args),
    }),
  ];
  if (spec.reports?.declined !== false) {
    tools.push(
      llm.tool({
        name: TASK_TOOLS.declined,
        description: 'The caller refuses to give this answer.',
        parameters: DECLINED_PARAMETERS,
        execute: async ({ reason }) => on.declined(reason),
      }),
    );
  }
  tools.push(
    llm.tool({
      name: TASK_TOOLS.unclear,
      description: "The caller's answer could not be understood.",
      parameters: UNCLEAR_PARAMETERS,
      execute: async ({ reason }) => on.unclear(reason),
    }),
  );
  if (spec.reports?.confirm !== false) {
    tools.push(
      llm.tool({
        name: TASK_TOOLS.confirm,
        description: 'After reading the answer back: did the caller say it is correct?',
        parameters: CONFIRM_PARAMETERS,
        execute: async ({ correct }) => on.confirm(correct),
      }),
    );
  }
  return tools;
}
