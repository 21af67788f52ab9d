/**
 * The prebuilt email and phone tasks through the REAL @livekit/agents-plugin-openai, against
 * the local OpenAI-compatible server: what the model is offered, how a spoken-form
 * submission is canonicalised, how an invalid one comes back to the model as a tool error,
 * and that answers a parser resolves never reach the model.
 */
import { llm, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import type { TaskDefinition } from '../../src/tasks/define.js';
import { email, phone } from '../../src/tasks/prebuilt.js';
import {
  type FakeOpenAIServer,
  type OpenAIChatRequest,
  type OpenAIReply,
  startFakeOpenAI,
} from '../../src/testing/openai-server.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

/** The caller-facing agent: its `capture` tool runs the task and keeps the outcome. */
class Desk extends voice.Agent {
  readonly outcomes: Outcome<string>[] = [];

  constructor(task: TaskDefinition<string>) {
    super({
      instructions: 'You are a front desk. To take contact details, call capture.',
      tools: {
        capture: llm.tool({
          description: 'Capture a contact detail from the caller.',
          execute: async () => {
            const outcome = await task.run();
            this.outcomes.push(outcome);
            return outcome.status;
          },
        }),
      },
    });
  }
}

const servers: FakeOpenAIServer[] = [];
let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(def: TaskDefinition<string>, script: OpenAIReply[]) {
  const server = await startFakeOpenAI(script);
  servers.push(server);
  const model = new openai.LLM({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test' });
  const desk = new Desk(def);
  caller = await SimulatedCaller.start({
    agent: desk,
    llm: model,
    // A failed request fails at once instead of being retried 2 s apart.
    sessionOptions: { connOptions: { llmConnOptions: { maxRetry: 0 } } },
  });
  return { server, desk, caller };
}

const toolNames = (r: OpenAIChatRequest | undefined) => r?.tools?.map((t) => t.function.name);
const tool = (r: OpenAIChatRequest | undefined, name: string) =>
  r?.tools?.find((t) => t.function.name === name)?.function;
const isTaskRequest = (r: OpenAIChatRequest) => toolNames(r)?.includes('submit') === true;
const submit = (value: string): OpenAIReply => ({
  toolCalls: [{ name: 'submit', args: { value } }],
});
const capture: OpenAIReply = { toolCalls: [{ name: 'capture', args: {} }] };
const readBack = (def: TaskDefinition<string>, value: string) =>
  `I have ${def.spec.readBack?.(value, false)}. Is that right?`;

/** The task's four tools, as the model sees them over HTTP. */
function expectTaskTools(request: OpenAIChatRequest | undefined): void {
  expect(toolNames(request)?.sort()).toEqual([
    'confirm_answer',
    'report_declined',
    'report_unclear',
    'submit',
  ]);
  expect(tool(request, 'submit')?.parameters).toMatchObject({
    type: 'object',
    properties: { value: { type: 'string' } },
    required: ['value'],
  });
  for (const name of ['report_declined', 'report_unclear']) {
    expect(tool(request, name)?.parameters).toMatchObject({
      type: 'object',
      properties: { reason: { type: 'string', description: expect.any(String) } },
      required: ['reason'],
    });
  }
  expect(tool(request, 'confirm_answer')?.parameters).toMatchObject({
    type: 'object',
    properties: { correct: { type: 'boolean' } },
    required: ['correct'],
  });
}

const cases = [
  {
    kind: 'email',
    def: email({ question: 'What is your email address?' }),
    instructions: 'Get an email address.',
    spoken: 'john at example dot com',
    value: 'john@example.com',
    parsed: { say: 'jane dot doe at example dot org', value: 'jane.doe@example.org' },
    invalid: 'not an email',
    invalidError: 'That is not a valid email.',
  },
  {
    kind: 'phone',
    def: phone({ question: 'What number should we call?' }),
    instructions: 'Get a phone number (default country US).',
    spoken: '(415) 555-1234',
    value: '+14155551234',
    parsed: { say: 'two one two five five five zero one nine nine', value: '+12125550199' },
    invalid: '123',
    invalidError: 'That number is too short. Please say the whole number, including the area code.',
  },
] as const;

describe.each(cases)('prebuilt $kind through the real openai plugin', (c) => {
  it('canonicalises a spoken-form model submission, confirms it, and types the outcome', async () => {
    const { server, desk, caller } = await start(c.def, [
      capture, // 0: the desk starts the capture; the task speaks its prompt itself
      submit(c.spoken), // 1: the parser could not resolve the answer; the model submits
      { content: 'Thanks, all set.' }, // 2: the desk, with the capture tool's result
    ]);
    await caller.say('I need to give you my details');
    expect(caller.agentLines).toEqual([c.def.spec.prompt]);
    expect(server.requests).toHaveLength(1);

    await caller.say('the one I always use');
    expect(caller.agentLines.at(-1)).toBe(readBack(c.def, c.value));
    expect(server.requests).toHaveLength(2);

    await caller.say('yes');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: c.value, attempts: 1, confirmed: true, modality: 'speech' },
    ]);
    expect(caller.agentLines.at(-1)).toBe('Thanks, all set.');

    // What the model was sent: one task request offering the four task tools; the
    // confirmation "yes" was resolved by the parser, so it made no HTTP request.
    expect(server.failures).toEqual([]);
    const [first, task, last] = server.requests;
    expect(server.requests.map(isTaskRequest)).toEqual([false, true, false]);
    expect(toolNames(first)).toEqual(['capture']);
    expectTaskTools(task);
    expect(task?.messages.at(-1)).toEqual({ role: 'user', content: 'the one I always use' });
    const system = task?.messages.find((m) => m.role === 'system');
    expect(system?.content).toContain(c.instructions);
    expect(system?.content).toContain('call submit');
    expect(last?.messages.at(-1)).toMatchObject({ role: 'tool', content: '"ok"' });
  });

  it('returns an invalid submission to the model as a tool error; the retry succeeds', async () => {
    const { server, desk, caller } = await start(c.def, [
      capture,
      submit(c.invalid), // 1: rejected by the normaliser
      submit(c.spoken), // 2: the model sees the tool error and tries again
      { content: 'Thanks, all set.' },
    ]);
    await caller.say('I need to give you my details');
    await caller.say('the one I always use');
    expect(caller.agentLines.at(-1)).toBe(readBack(c.def, c.value));

    const [, bad, retry] = server.requests;
    const badCall = retry?.messages
      .flatMap((m) => m.tool_calls ?? [])
      .find((call) => call.function.name === 'submit');
    expect(badCall?.function).toEqual({
      name: 'submit',
      arguments: JSON.stringify({ value: c.invalid }),
    });
    // The last message of the request after the rejection is the tool error, in words.
    expect(retry?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: badCall?.id,
      content: c.invalidError,
    });
    expectTaskTools(bad);
    expectTaskTools(retry);

    await caller.say('yes');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: c.value, attempts: 2, confirmed: true, modality: 'speech' },
    ]);
    expect(server.requests).toHaveLength(4);
    expect(server.failures).toEqual([]);
  });

  it('resolves an answer its parser understands without any task request', async () => {
    const { server, desk, caller } = await start(c.def, [capture, { content: 'Thanks, all set.' }]);
    await caller.say('I need to give you my details');
    await caller.say(c.parsed.say);
    expect(caller.agentLines.at(-1)).toBe(readBack(c.def, c.parsed.value));
    await caller.say('yes that is right');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: c.parsed.value, attempts: 1, confirmed: true, modality: 'speech' },
    ]);
    expect(server.requests.map(isTaskRequest)).toEqual([false, false]);
    expect(server.failures).toEqual([]);
  });
});
