/**
 * The headless sub-agent runner: an LLM tool loop on upstream `llm.LLM` with no voice
 * session. Chat, collect the tool calls, execute them through upstream's
 * `llm.executeToolCall`, feed the outputs back, repeat — bounded by a turn cap and an
 * AbortSignal, with structured output through a submit tool when a schema is given.
 */
import { type APIConnectOptions, llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';

/** Name of the tool a sub-agent with an `output` schema calls to hand in its result. */
export const SUBMIT_RESULT_TOOL = 'submit_result';

/** What a run has produced so far; read it after an abort for the partial output. */
export interface HeadlessProgress {
  /** Assistant texts, in order. */
  texts: string[];
  /** The latest tool output, in case the model produced no text yet. */
  lastToolOutput?: string;
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
  connOptions?: APIConnectOptions;
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

/** The partial output of an unfinished run, as text. */
export function partialOutput(progress: HeadlessProgress): string {
  if (progress.texts.length > 0) return progress.texts.join('\n\n');
  return progress.lastToolOutput ?? '';
}

type ModelError = Parameters<llm.LLMCallbacks['error']>[0];

/** One 'error' listener per model, fanned out to the runs collecting from it right now. */
const errorWatchers = new WeakMap<llm.LLM, Set<(ev: ModelError) => void>>();

/**
 * Upstream reports a failed completion only as an `error` event on the LLM (the stream
 * just ends), so a run watches its model while it collects a response.
 */
function watchErrors(model: llm.LLM, onError: (ev: ModelError) => void): () => void {
  let watchers = errorWatchers.get(model);
  if (!watchers) {
    const set = new Set<(ev: ModelError) => void>();
    watchers = set;
    errorWatchers.set(model, set);
    model.on('error', (ev) => {
      for (const watcher of [...set]) watcher(ev);
    });
  }
  watchers.add(onError);
  const active = watchers;
  return () => active.delete(onError);
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
 * without an answer, and the model's error when a model call fails.
 */
export async function runHeadless<O = unknown>(
  options: HeadlessRunOptions<O>,
): Promise<HeadlessRunResult<O>> {
  const { model, conversation, signal, output, maxTurns } = options;
  const progress = options.progress ?? newProgress();
  if (!(maxTurns >= 1)) {
    throw new TasklineError('invalid_argument', `maxTurns must be at least 1, got ${maxTurns}.`);
  }

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
    const stream = model.chat({
      chatCtx: conversation,
      toolCtx,
      ...(options.connOptions ? { connOptions: options.connOptions } : {}),
    });
    const onAbort = () => stream.close();
    signal.addEventListener('abort', onAbort, { once: true });
    let failure: Error | undefined;
    const unwatch = watchErrors(model, (ev) => {
      if (!ev.recoverable) failure = ev.error;
    });
    let response: llm.CollectedResponse;
    try {
      response = await stream.collect();
    } finally {
      signal.removeEventListener('abort', onAbort);
      unwatch();
    }
    throwIfAborted(signal);
    if (failure && !response.text && response.toolCalls.length === 0) throw failure;

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
      const result = await llm.executeToolCall(call, toolCtx);
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
