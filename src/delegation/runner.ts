/**
 * The headless sub-agent runner: an LLM tool loop on upstream `llm.LLM` with no voice
 * session. Chat, collect the tool calls, execute them through upstream's
 * `llm.executeToolCall`, feed the outputs back, repeat — bounded by a turn cap and an
 * AbortSignal, with structured output through a submit tool when a schema is given.
 *
 * A model call that fails is never mistaken for an answer: upstream's stream just ends
 * after an error (reported only as the model's `error` event), so every call is watched on
 * its own; its partial text is kept as partial output, its tool calls never run, and a
 * retry (for a retryable error) starts from a clean buffer.
 */
import {
  type APIConnectOptions,
  DEFAULT_API_CONNECT_OPTIONS,
  isAPIError,
  llm,
} from '@livekit/agents';
import { z } from 'zod/v4';
import { type Clock, systemClock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { readModelCall, watchModelCall } from '../core/model-call.js';
import { checkRange, whole } from '../core/options.js';

/** Name of the tool a sub-agent with an `output` schema calls to hand in its result. */
export const SUBMIT_RESULT_TOOL = 'submit_result';

/** What a run has produced so far; read it after an abort for the partial output. */
export interface HeadlessProgress {
  /** Assistant texts of completed model turns, in order. */
  texts: string[];
  /** The latest tool output, in case the model produced no text yet. */
  lastToolOutput?: string;
  /** Text of a model call that failed part-way (never used as an answer). */
  broken?: string;
  /** Model turns started. */
  turns: number;
}

/** Options for {@link runHeadless}. */
export interface HeadlessRunOptions<O> {
  model: llm.LLM;
  /** The sub-agent's system prompt; added once at the start of a new conversation. */
  instructions: string;
  /** The sub-agent's function tools (object map or list). */
  tools?: llm.ToolContextLike;
  /** The conversation, continued in place (a resumed task passes the earlier one). */
  conversation: llm.ChatContext;
  /** This run's brief, added as a user message. */
  prompt: string;
  /** Most model calls this run may make. */
  maxTurns: number;
  /** Aborts the model call in flight and every tool that honours its signal. */
  signal: AbortSignal;
  /** When given, the run ends when the model submits a value of this shape. */
  output?: z.ZodType<O>;
  /**
   * Timeout and retries of one model call. A call that fails with a retryable error is
   * retried (`maxRetry` times, `retryIntervalMs` apart) from scratch by this runner.
   */
  connOptions?: APIConnectOptions;
  /**
   * Clock for the waits between retries and for the idle bound of a call (no chunk for
   * `connOptions.timeoutMs` abandons it). Default the system clock.
   */
  clock?: Clock;
  /** Filled as the run goes, so a timeout can return what was produced. */
  progress?: HeadlessProgress;
}

/** What a completed run produced. */
export interface HeadlessRunResult<O> {
  /** The final text (for structured output: the value as JSON). */
  output: string;
  value?: O;
  turns: number;
}

/** A fresh progress record. */
export function newProgress(): HeadlessProgress {
  return { texts: [], turns: 0 };
}

/** The partial output of an unfinished run, as text (a broken call's text last). */
export function partialOutput(progress: HeadlessProgress): string {
  const texts = progress.broken ? [...progress.texts, progress.broken] : progress.texts;
  if (texts.length > 0) return texts.join('\n\n');
  return progress.lastToolOutput ?? '';
}

/** One model call, collected: its response, and its failure if it did not end normally. */
async function callModel(
  model: llm.LLM,
  conversation: llm.ChatContext,
  toolCtx: llm.ToolContext,
  connOptions: APIConnectOptions,
  run: { signal: AbortSignal; clock: Clock },
): Promise<{ response: llm.CollectedResponse; failure?: Error }> {
  // Retries are this runner's: upstream would re-stream into the same buffer.
  const { stream, watch } = watchModelCall(model, () =>
    model.chat({ chatCtx: conversation, toolCtx, connOptions: { ...connOptions, maxRetry: 0 } }),
  );
  const onAbort = () => stream.close();
  run.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks = await readModelCall(stream, watch, {
      idleMs: connOptions.timeoutMs,
      clock: run.clock,
    });
    // The stream ended (or was closed for going idle): closing it again would only abort a
    // finished controller, which costs an AbortError with its stack on every call.
    return { response: collected(chunks), failure: watch.failure };
  } catch (error) {
    stream.close();
    const failure = error instanceof Error ? error : new Error(String(error));
    return { response: collected([]), failure: watch.failure ?? failure };
  } finally {
    run.signal.removeEventListener('abort', onAbort);
  }
}

/** The chunks of one call as one response (as upstream's `LLMStream.collect` builds it). */
function collected(chunks: llm.ChatChunk[]): llm.CollectedResponse {
  const text: string[] = [];
  const toolCalls: llm.FunctionCall[] = [];
  const extra: Record<string, unknown> = {};
  let usage: llm.CompletionUsage | undefined;
  for (const chunk of chunks) {
    if (chunk.delta?.content) text.push(chunk.delta.content);
    if (chunk.delta?.toolCalls) toolCalls.push(...chunk.delta.toolCalls);
    if (chunk.delta?.extra) Object.assign(extra, chunk.delta.extra);
    if (chunk.usage !== undefined) usage = chunk.usage;
  }
  return { text: text.join('').trim(), toolCalls, usage, extra };
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    throw signal.reason instanceof Error
      ? signal.reason
      : new TasklineError('cancelled', 'The sub-agent run was cancelled.');
  }
}

/** The submit tool's parameters: the schema itself when it is an object, else `{ result }`. */
function submitSchema(output: z.ZodType): { schema: z.ZodObject; wrapped: boolean } {
  if (output instanceof z.ZodObject) return { schema: output, wrapped: false };
  return { schema: z.object({ result: output }), wrapped: true };
}

/**
 * The caller's tools, re-wrapped so every call gets this run's abort signal (upstream's
 * headless `executeToolCall` would give each a fresh, never-aborted one).
 */
function bindTools(
  tools: llm.ToolContextLike | undefined,
  signal: AbortSignal,
  extra: llm.FunctionTool[],
): llm.ToolContext {
  const source = tools === undefined ? llm.ToolContext.empty() : llm.toToolContext(tools);
  const bound = Object.values(source.functionTools).map(
    (tool): llm.FunctionTool => ({
      ...tool,
      execute: (args, options) => tool.execute(args, { ...options, abortSignal: signal }),
    }),
  );
  return new llm.ToolContext([...bound, ...extra]);
}

function tryParse<O>(text: string, schema: z.ZodType<O>): { ok: true; value: O } | { ok: false } {
  const trimmed = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/```$/, '')
    .trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return { ok: false };
  try {
    const parsed = schema.safeParse(JSON.parse(trimmed));
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false };
  } catch {
    return { ok: false };
  }
}

/**
 * Runs a sub-agent to the end: its final text, or — with `output` — the submitted value.
 * Throws the signal's reason when aborted, `limit_exceeded` when the turn cap is reached
 * without an answer, and the model's error (`model_error` when it failed part-way) when a
 * model call fails after its retries: a failed call is never an answer, its partial text
 * stays in `progress`, and its tool calls are not run.
 */
export async function runHeadless<O = unknown>(
  options: HeadlessRunOptions<O>,
): Promise<HeadlessRunResult<O>> {
  const { model, conversation, signal, output, maxTurns } = options;
  const progress = options.progress ?? newProgress();
  checkRange('maxTurns', maxTurns, whole(1));

  let submitted: { value: O } | undefined;
  const extra: llm.FunctionTool[] = [];
  if (output) {
    const { schema, wrapped } = submitSchema(output);
    extra.push(
      llm.tool({
        name: SUBMIT_RESULT_TOOL,
        description:
          'Hand in your final result. Call this exactly once, when you are done; the run ends here.',
        parameters: schema,
        execute: async (args: Record<string, unknown>) => {
          const candidate = wrapped ? args.result : args;
          const checked = output.safeParse(candidate);
          if (!checked.success) {
            throw new llm.ToolError(`invalid_argument: ${z.prettifyError(checked.error)}`);
          }
          submitted = { value: checked.data };
          return 'Result received.';
        },
      }),
    );
  }
  const toolCtx = bindTools(options.tools, signal, extra);

  if (conversation.items.length === 0) {
    conversation.addMessage({ role: 'system', content: options.instructions });
  }
  conversation.addMessage({ role: 'user', content: options.prompt });

  const connOptions = { ...DEFAULT_API_CONNECT_OPTIONS, ...options.connOptions };
  const clock = options.clock ?? systemClock;
  for (let turn = 1; ; turn++) {
    throwIfAborted(signal);
    if (turn > maxTurns) {
      throw new TasklineError(
        'limit_exceeded',
        `The sub-agent used all ${maxTurns} of its turns without finishing. Give it a narrower brief, or raise maxTurns.`,
        { maxTurns },
      );
    }
    progress.turns = turn;
    const response = await completeTurn(model, conversation, toolCtx, connOptions, {
      signal,
      clock,
      progress,
    });

    const turnId = `sub_${turn}_${Math.random().toString(36).slice(2, 10)}`;
    if (response.text) {
      conversation.items.push(
        llm.ChatMessage.create({ role: 'assistant', content: response.text, id: turnId }),
      );
      progress.texts.push(response.text);
    }

    if (response.toolCalls.length === 0) {
      if (!output) return { output: response.text, turns: turn };
      const parsed = tryParse(response.text, output);
      if (parsed.ok) {
        return { output: JSON.stringify(parsed.value, null, 2), value: parsed.value, turns: turn };
      }
      conversation.addMessage({
        role: 'user',
        content: `Call ${SUBMIT_RESULT_TOOL} now with your final result; a text answer is not accepted.`,
      });
      continue;
    }

    for (const raw of response.toolCalls) {
      const call = llm.FunctionCall.create({
        callId: raw.callId,
        name: raw.name,
        args: raw.args,
        groupId: turnId,
        extra: raw.extra,
      });
      conversation.items.push(call);
      const result = incompleteArguments(call) ?? (await llm.executeToolCall(call, toolCtx));
      conversation.items.push(
        llm.FunctionCallOutput.create({
          callId: call.callId,
          name: call.name,
          output: result.output,
          isError: result.isError,
        }),
      );
      progress.lastToolOutput = result.output;
      throwIfAborted(signal);
    }

    if (submitted) {
      return {
        output: JSON.stringify(submitted.value, null, 2),
        value: submitted.value,
        turns: turn,
      };
    }
  }
}

/**
 * One model turn: calls the model until a call ends normally, retrying retryable failures
 * (each retry from a clean buffer). A call that still fails throws: the model's own error
 * when nothing came through, else `model_error`, with its text kept in `progress.broken`
 * and its tool calls dropped unrun.
 */
async function completeTurn(
  model: llm.LLM,
  conversation: llm.ChatContext,
  toolCtx: llm.ToolContext,
  connOptions: APIConnectOptions,
  run: { signal: AbortSignal; clock: Clock; progress: HeadlessProgress },
): Promise<llm.CollectedResponse> {
  const { signal, clock, progress } = run;
  for (let attempt = 1; ; attempt++) {
    const { response, failure } = await callModel(model, conversation, toolCtx, connOptions, {
      signal,
      clock,
    });
    throwIfAborted(signal);
    if (!failure) {
      delete progress.broken;
      return response;
    }
    if (response.text) progress.broken = response.text;
    const retryable = isAPIError(failure) && failure.retryable;
    if (retryable && attempt <= connOptions.maxRetry) {
      const wait =
        attempt === 1 ? Math.min(100, connOptions.retryIntervalMs) : connOptions.retryIntervalMs;
      if (wait > 0) await clock.sleep(wait, signal);
      continue;
    }
    const dropped = response.toolCalls.length;
    // Nothing came through: the model's own error, as it was.
    if (!response.text && dropped === 0) throw failure;
    throw new TasklineError(
      'model_error',
      `The sub-agent's model call failed${response.text || dropped ? ' part-way' : ''} after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${failure.message}. Nothing it said was used${dropped ? ` and its ${dropped} tool call${dropped === 1 ? ' was' : 's were'} not run` : ''}; check the model service, or raise connOptions.maxRetry.`,
      {
        attempts: attempt,
        retryable,
        partialChars: response.text.length,
        droppedToolCalls: dropped,
      },
    );
  }
}

/**
 * A tool call whose arguments are not complete JSON (cut off, malformed) is answered with
 * an error and not run: upstream would "repair" `{"q":"bal` into `{"q":"bal"}` and run the
 * tool on a value the model never finished.
 */
function incompleteArguments(call: llm.FunctionCall): llm.FunctionCallOutput | undefined {
  const raw = call.args?.trim() || '{}';
  let problem: string | undefined;
  try {
    let parsed: unknown = JSON.parse(raw);
    // Some models send the object JSON-encoded twice, as upstream also accepts.
    if (typeof parsed === 'string') parsed = JSON.parse(parsed);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      problem = 'the arguments are not a JSON object';
    }
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  if (problem === undefined) return undefined;
  return llm.FunctionCallOutput.create({
    callId: call.callId,
    name: call.name,
    output: `Invalid arguments for ${call.name}: they were not complete JSON (${problem}), so nothing was run. Call ${call.name} again with complete JSON arguments.`,
    isError: true,
  });
}
