// Fault class: the model fails before, during or after streaming, in a headless sub-agent
// run (src/delegation/runner.ts). Driven through the real openai plugin against the local
// OpenAI-compatible server with injected faults, and through ScriptedLLM for a retryable
// error after partial text (which the openai plugin never retries). Each asserts the typed
// outcome (never `done` on a broken stream), that nothing was duplicated (a retry starts
// clean), that no tool call from a broken stream ran, and an end within a hard bound.
import { isAPIError, llm } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTasklineError, type TasklineError } from '../../src/core/errors.js';
import { TaskManager } from '../../src/delegation/manager.js';
import {
  type HeadlessProgress,
  newProgress,
  partialOutput,
  runHeadless,
} from '../../src/delegation/runner.js';
import {
  type FakeOpenAIServer,
  type OpenAIReply,
  startFakeOpenAI,
} from '../../src/testing/openai-server.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';

const ANSWER = 'The account balance is $1,234.56.';
/** Retries without waiting, so a test never sleeps. */
const CONN = { maxRetry: 2, retryIntervalMs: 0, timeoutMs: 10_000 };

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A lookup tool that records every run (a tool from a broken stream must never run). */
function lookupTool() {
  const runs: unknown[] = [];
  const lookup = llm.tool({
    description: 'Look up an account field.',
    parameters: z.object({ q: z.string() }),
    execute: async (args) => {
      runs.push(args);
      return 'balance: $1,234.56';
    },
  });
  return { lookup, runs };
}

async function modelFor(replies: OpenAIReply[]): Promise<llm.LLM> {
  server = await startFakeOpenAI(replies);
  return new openai.LLM({ model: 'fault-model', baseURL: server.url, apiKey: 'test' });
}

async function run(
  model: llm.LLM,
  tools: llm.ToolContextLike = {},
  progress: HeadlessProgress = newProgress(),
) {
  const started = Date.now();
  const result = await runHeadless({
    model,
    instructions: 'You look up account data.',
    tools,
    conversation: llm.ChatContext.empty(),
    prompt: 'What is the balance?',
    maxTurns: 20,
    signal: new AbortController().signal,
    connOptions: CONN,
    progress,
  }).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as TasklineError }),
  );
  // Real I/O: a hard wall-clock bound, never a sleep.
  expect(Date.now() - started).toBeLessThan(10_000);
  return { result, progress };
}

function failed(r: Awaited<ReturnType<typeof run>>['result']): TasklineError {
  if (r.ok) throw new Error(`expected a failure, got done: ${JSON.stringify(r.value)}`);
  return r.error;
}

describe('model error before streaming (openai plugin, local server)', () => {
  it('a retryable 503 is retried from scratch: done with the retry’s answer only', async () => {
    const model = await modelFor([
      { content: ANSWER, fault: { kind: 'status', status: 503 } },
      { content: ANSWER },
    ]);
    const { result } = await run(model);
    expect(result).toEqual({ ok: true, value: { output: ANSWER, turns: 1 } });
    expect(server?.requests).toHaveLength(2);
  });

  it('a 400 is not retried: the model’s error, nothing used', async () => {
    const model = await modelFor([{ content: ANSWER, fault: { kind: 'status', status: 400 } }]);
    const { result, progress } = await run(model);
    const error = failed(result);
    expect(isAPIError(error) && error.retryable).toBe(false);
    expect(partialOutput(progress)).toBe('');
    expect(server?.requests).toHaveLength(1);
  });

  it('every retry failing: the model’s error after maxRetry + 1 calls', async () => {
    const down: OpenAIReply = { content: ANSWER, fault: { kind: 'status', status: 500 } };
    const model = await modelFor([down, down, down]);
    const { result, progress } = await run(model);
    expect(isAPIError(failed(result))).toBe(true);
    expect(partialOutput(progress)).toBe('');
    expect(server?.requests).toHaveLength(3);
  });
});

describe('model error during streaming', () => {
  it('connection dropped after partial text: failed, the half sentence kept as partial only', async () => {
    const model = await modelFor([{ content: ANSWER, fault: { kind: 'disconnect', at: 3 } }]);
    const { result, progress } = await run(model);
    expect(isTasklineError(failed(result), 'model_error')).toBe(true);
    expect(partialOutput(progress)).toBe('The account balance');
    expect(progress.texts).toEqual([]);
  });

  it('an SSE error event after partial text: failed, partial kept', async () => {
    const model = await modelFor([{ content: ANSWER, fault: { kind: 'error-event', at: 2 } }]);
    const { result, progress } = await run(model);
    expect(isTasklineError(failed(result), 'model_error')).toBe(true);
    expect(partialOutput(progress)).toBe('The account');
  });

  it('a tool call from a broken stream never runs', async () => {
    const { lookup, runs } = lookupTool();
    // The first call is complete on the wire (the second has started) when the stream breaks.
    const model = await modelFor([
      {
        toolCalls: [
          { name: 'lookup', args: { q: 'balance' } },
          { name: 'lookup', args: { q: 'overdraft limit' } },
        ],
        fault: { kind: 'disconnect', at: 5 },
      },
    ]);
    const { result } = await run(model, { lookup });
    expect(isTasklineError(failed(result), 'model_error')).toBe(true);
    expect(runs).toEqual([]);
  });

  it('truncated tool-call JSON is never repaired and run; the model is asked again', async () => {
    const { lookup, runs } = lookupTool();
    const model = await modelFor([
      { toolCalls: [{ name: 'lookup', args: {}, rawArguments: '{"q":"bal' }] },
      { toolCalls: [{ name: 'lookup', args: { q: 'balance' } }] },
      { content: ANSWER },
    ]);
    const { result } = await run(model, { lookup });
    expect(result).toEqual({ ok: true, value: { output: ANSWER, turns: 3 } });
    expect(runs).toEqual([{ q: 'balance' }]);
    const retold = server?.requests[1]?.messages.at(-1);
    expect(retold?.role).toBe('tool');
    expect(String(retold?.content)).toMatch(
      /^Invalid arguments for lookup: they were not complete JSON/,
    );
  });
});

describe('a model gone silent mid-answer', () => {
  it('a stalled stream is abandoned after the request timeout: failed, partial kept', async () => {
    const model = await modelFor([{ content: ANSWER, fault: { kind: 'stall', at: 2 } }]);
    const progress = newProgress();
    const started = Date.now();
    const error = await runHeadless({
      model,
      instructions: 'x',
      conversation: llm.ChatContext.empty(),
      prompt: 'Balance?',
      maxTurns: 2,
      signal: new AbortController().signal,
      connOptions: { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 500 },
      progress,
    }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(isTasklineError(error, 'model_error')).toBe(true);
    expect(String(error)).toContain('sent nothing for 500 ms');
    expect(partialOutput(progress)).toBe('The account');
  });
});

describe('model error after streaming', () => {
  it('the connection drops after the last chunk: still a failure, never done', async () => {
    const { lookup, runs } = lookupTool();
    const model = await modelFor([
      {
        toolCalls: [{ name: 'lookup', args: { q: 'balance' } }],
        fault: { kind: 'disconnect', at: 'end' },
      },
    ]);
    const { result } = await run(model, { lookup });
    expect(isTasklineError(failed(result), 'model_error')).toBe(true);
    expect(runs).toEqual([]);
  });
});

describe('retryable error after partial text (ScriptedLLM)', () => {
  it('the retry starts from a clean buffer: no duplicated text', async () => {
    const model = new ScriptedLLM().for('*', [
      {
        say: 'The account balance is',
        fail: { message: 'overloaded', afterOutput: true, retryable: true },
      },
      { say: ANSWER },
    ]);
    const { result } = await run(model);
    expect(result).toEqual({ ok: true, value: { output: ANSWER, turns: 1 } });
    expect(model.requests).toHaveLength(2);
  });

  it('every retry failing after partial text: failed, partial is one attempt’s text', async () => {
    const broken = {
      say: 'partial',
      fail: { message: 'overloaded', afterOutput: true, retryable: true },
    };
    const model = new ScriptedLLM().for('*', [broken, broken, broken]);
    const { result, progress } = await run(model);
    expect(isTasklineError(failed(result), 'model_error')).toBe(true);
    expect(partialOutput(progress)).toBe('partial');
    expect(model.requests).toHaveLength(3);
  });

  it('a retryable failure with a tool call: the tool runs once, from the clean retry', async () => {
    const { lookup, runs } = lookupTool();
    const model = new ScriptedLLM().for('*', [
      {
        toolCalls: [{ name: 'lookup', args: { q: 'balance' } }],
        fail: { message: 'overloaded', afterOutput: true, retryable: true },
      },
      { toolCalls: [{ name: 'lookup', args: { q: 'balance' } }] },
      { say: ANSWER },
    ]);
    const { result } = await run(model, { lookup });
    expect(result).toEqual({ ok: true, value: { output: ANSWER, turns: 2 } });
    expect(runs).toEqual([{ q: 'balance' }]);
  });

  it('one run’s failure never fails another run on the same model', async () => {
    const model = new ScriptedLLM({
      respond: (req) =>
        req.lastUserText === 'break'
          ? { say: 'half', fail: { message: 'down', afterOutput: true } }
          : { say: ANSWER },
    });
    const go = (prompt: string) =>
      runHeadless({
        model,
        instructions: 'x',
        conversation: llm.ChatContext.empty(),
        prompt,
        maxTurns: 2,
        signal: new AbortController().signal,
        connOptions: CONN,
      }).then(
        (r) => r.output,
        (e: unknown) => (e as Error).name,
      );
    const [bad, good] = await Promise.all([go('break'), go('fine')]);
    expect(bad).toBe('TasklineError');
    expect(good).toBe(ANSWER);
  });
});

describe('through the TaskManager', () => {
  it('a sub-agent whose model breaks mid-answer ends failed with partial output, never done', async () => {
    const model = await modelFor([{ content: ANSWER, fault: { kind: 'disconnect', at: 3 } }]);
    const manager = new TaskManager({ llm: model, connOptions: CONN });
    try {
      const task = manager.start({ subagentType: 'general-purpose', description: 'Balance?' });
      const result = await manager.wait(task.id);
      expect(result).toMatchObject({
        status: 'failed',
        partial: true,
        output: 'The account balance',
        error: { code: 'model_error' },
      });
    } finally {
      await manager.close();
    }
  });
});
