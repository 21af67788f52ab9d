import { llm, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type FakeOpenAIServer,
  type OpenAIChatRequest,
  startFakeOpenAI,
} from '../../src/testing/openai-server.js';

const servers: FakeOpenAIServer[] = [];

async function start(...args: Parameters<typeof startFakeOpenAI>): Promise<FakeOpenAIServer> {
  const server = await startFakeOpenAI(...args);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function post(server: FakeOpenAIServer, body: unknown): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Reads an SSE response into its `data:` payloads (the last one is `[DONE]`). */
async function sseData(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice('data: '.length);
    });
}

interface Chunk {
  id: string;
  object: string;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: string;
        function: { name?: string; arguments?: string };
      }>;
    };
    finish_reason: string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

function chunks(data: string[]): Chunk[] {
  expect(data.at(-1)).toBe('[DONE]');
  return data.slice(0, -1).map((d) => JSON.parse(d) as Chunk);
}

const userTurn = (text: string) => ({ role: 'user', content: text });

describe('fake OpenAI server over raw HTTP', () => {
  it('streams a text reply as chat.completion.chunk deltas ending in stop and [DONE]', async () => {
    const server = await start([{ content: 'Hello there, caller.' }]);
    const res = await post(server, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: 'be brief' }, userTurn('hi')],
      stream: true,
      stream_options: { include_usage: true },
    });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const all = chunks(await sseData(res));
    expect(
      all.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gpt-4o-mini'),
    ).toBe(true);
    expect(new Set(all.map((c) => c.id)).size).toBe(1);
    expect(all[0]?.choices[0]?.delta.role).toBe('assistant');
    const text = all.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Hello there, caller.');
    expect(all.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    const finals = all.filter((c) => c.choices[0]?.finish_reason);
    expect(finals.map((c) => c.choices[0]?.finish_reason)).toEqual(['stop']);
    const usage = all.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage?.total_tokens).toBeGreaterThan(0);

    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(server.requests[0]?.stream).toBe(true);
    expect(server.unexpected).toBe(0);
  });

  it('streams tool calls in pieces with unique ids and finish_reason tool_calls', async () => {
    const server = await start([
      {
        toolCalls: [
          { name: 'lookup_order', args: { orderId: 'A-1234', includeItems: true } },
          { name: 'lookup_order', args: { orderId: 'B-9' } },
        ],
      },
      { toolCalls: [{ name: 'hang_up', args: {} }] },
    ]);
    const tools = [
      {
        type: 'function',
        function: {
          name: 'lookup_order',
          description: 'Find an order.',
          parameters: { type: 'object', properties: { orderId: { type: 'string' } } },
        },
      },
    ];
    const res = await post(server, {
      model: 'gpt-4o-mini',
      messages: [userTurn('where are my orders?')],
      tools,
      stream: true,
    });
    const all = chunks(await sseData(res));
    expect(all.every((c) => c.usage === undefined)).toBe(true);

    // Reassemble the calls the way an OpenAI client does: by index.
    const calls = new Map<number, { id?: string; type?: string; name?: string; args: string }>();
    let argumentPieces = 0;
    for (const c of all) {
      for (const tc of c.choices[0]?.delta.tool_calls ?? []) {
        const call = calls.get(tc.index) ?? { args: '' };
        if (tc.id) Object.assign(call, { id: tc.id, type: tc.type, name: tc.function.name });
        if (tc.function.arguments) {
          call.args += tc.function.arguments;
          argumentPieces += 1;
        }
        calls.set(tc.index, call);
      }
    }
    expect([...calls.values()].map((c) => [c.name, c.type, JSON.parse(c.args)])).toEqual([
      ['lookup_order', 'function', { orderId: 'A-1234', includeItems: true }],
      ['lookup_order', 'function', { orderId: 'B-9' }],
    ]);
    expect(argumentPieces).toBeGreaterThan(2);
    expect(all.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');

    const second = chunks(
      await sseData(await post(server, { model: 'm', messages: [userTurn('bye')], stream: true })),
    );
    const ids = [
      ...[...calls.values()].map((c) => c.id),
      second[0]?.choices[0]?.delta.tool_calls?.[0]?.id,
    ];
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => id?.startsWith('call_'))).toBe(true);

    expect(server.requests[0]?.tools?.map((t) => t.function.name)).toEqual(['lookup_order']);
    expect(server.requests[0]?.tools?.[0]?.function.parameters).toEqual(
      tools[0]?.function.parameters,
    );
  });

  it('answers stream: false with one chat.completion JSON body', async () => {
    const server = await start([
      { content: 'Checking.', toolCalls: [{ name: 'lookup_order', args: { orderId: 'A' } }] },
    ]);
    const res = await post(server, { model: 'gpt-4o-mini', messages: [userTurn('order A?')] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      object: string;
      choices: Array<{
        finish_reason: string;
        message: {
          role: string;
          content: string | null;
          tool_calls: Array<{
            id: string;
            type: string;
            function: { name: string; arguments: string };
          }>;
        };
      }>;
      usage: { total_tokens: number };
    };
    expect(body.object).toBe('chat.completion');
    const choice = body.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBe('Checking.');
    expect(choice?.message.tool_calls).toEqual([
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'lookup_order', arguments: '{"orderId":"A"}' },
      },
    ]);
    expect(server.requests[0]?.stream).toBe(false);
  });

  it('answers 500 script_exhausted once the list runs out, and records it', async () => {
    const server = await start([{ content: 'only reply' }]);
    const first = await post(server, { model: 'm', messages: [userTurn('one')], stream: true });
    expect(first.status).toBe(200);
    await first.text();

    const res = await post(server, { model: 'm', messages: [userTurn('two')], stream: true });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error.code).toBe('script_exhausted');
    expect(body.error.type).toBe('server_error');
    expect(body.error.message).toMatch(/script exhausted.*request #2.*only 1 reply/i);

    expect(server.requests.map((r) => r.messages.at(-1)?.content)).toEqual(['one', 'two']);
    expect(server.unexpected).toBe(1);
    expect(server.failures).toEqual([
      expect.objectContaining({ status: 500, code: 'script_exhausted', index: 1 }),
    ]);
  });

  it('answers 400 with an OpenAI error object for bad JSON or a malformed body', async () => {
    const server = await start([{ content: 'never used' }]);

    const bad = await post(server, '{"model": "m", "messages": [');
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as {
      error: { type: string; code: string; message: string };
    };
    expect(badBody.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    expect(badBody.error.message).toMatch(/JSON/);

    const noMessages = await post(server, { model: 'm', messages: [] });
    expect(noMessages.status).toBe(400);
    expect(await noMessages.json()).toMatchObject({ error: { param: 'messages' } });

    const badRole = await post(server, { model: 'm', messages: [{ role: 'robot', content: 'x' }] });
    expect(badRole.status).toBe(400);

    expect(server.requests).toEqual([]);
    expect(server.failures.map((f) => f.status)).toEqual([400, 400, 400]);
    expect(server.unexpected).toBe(3);
  });

  it('passes each request and its index to a responder function', async () => {
    const seen: Array<[string, number]> = [];
    const server = await start((request: OpenAIChatRequest, index) => {
      const last = request.messages.at(-1)?.content;
      seen.push([typeof last === 'string' ? last : '', index]);
      return { content: `echo ${index}` };
    });
    for (const text of ['a', 'b']) {
      const res = await post(server, { model: 'm', messages: [userTurn(text)], stream: false });
      expect(
        ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]
          ?.message.content,
      ).toBe(`echo ${seen.length - 1}`);
    }
    expect(seen).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
  });
});

// ---------------------------------------------------------------------------------------
// The real @livekit/agents-plugin-openai against the fake server

/** An upstream AgentTask that asks for a colour and completes with it through `submit`. */
class FavouriteColorTask extends voice.AgentTask<string> {
  constructor() {
    super({
      instructions: 'Ask the caller for their favourite colour, then call submit with it.',
      tools: {
        submit: llm.tool({
          description: "Record the caller's favourite colour.",
          parameters: z.object({ color: z.string().describe('The colour, lower case') }),
          execute: async ({ color }) => {
            this.complete(color);
            return `recorded ${color}`;
          },
        }),
      },
    });
  }

  override async onEnter(): Promise<void> {
    this.session.generateReply();
  }
}

/** The caller-facing agent: its tool runs the task inline and awaits its typed value. */
class ConciergeAgent extends voice.Agent {
  readonly results: string[] = [];

  constructor() {
    super({
      instructions: 'You are a concierge. To learn the favourite colour, call ask_favourite_color.',
      tools: {
        ask_favourite_color: llm.tool({
          description: 'Ask the caller for their favourite colour.',
          parameters: z.object({}),
          execute: async () => {
            const color: string = await new FavouriteColorTask().run();
            this.results.push(color);
            return `The caller's favourite colour is ${color}.`;
          },
        }),
      },
    });
  }
}

/** What a user sees of a run, compactly: messages, calls, outputs and handoffs in order. */
function seen(run: voice.testing.RunResult): unknown[] {
  return run.events.map((event) => {
    if (event.type === 'message') return ['message', event.item.role, event.item.textContent];
    if (event.type === 'function_call') {
      return ['call', event.item.name, JSON.parse(event.item.args)];
    }
    if (event.type === 'function_call_output') {
      return ['output', event.item.name, event.item.output];
    }
    return ['handoff', event.oldAgent?.constructor.name, event.newAgent.constructor.name];
  });
}

const lastMessage = (request: OpenAIChatRequest | undefined) => request?.messages.at(-1);
const toolNames = (request: OpenAIChatRequest | undefined) =>
  request?.tools?.map((t) => t.function.name);

describe('real openai.LLM plugin against the fake server', () => {
  it('runs an inline AgentTask<string> from a tool and hands its typed value back', async () => {
    const server = await start([
      // 0: the concierge decides to ask.
      { toolCalls: [{ name: 'ask_favourite_color', args: {} }] },
      // 1: the task's onEnter reply.
      { content: 'What is your favourite colour?' },
      // 2: the caller answered; the task's model submits.
      { toolCalls: [{ name: 'submit', args: { color: 'teal' } }] },
      // 3: submit returned a value, so the task's model is called once more after complete().
      { content: 'Thanks, noted.' },
      // 4: back in the concierge, with the tool's result.
      { content: 'Teal is a lovely colour!' },
    ]);
    const model = new openai.LLM({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test' });
    const session = new voice.AgentSession({ llm: model });
    const agent = new ConciergeAgent();
    try {
      await session.start({ agent });

      const ask = session.run({ userInput: 'I want to tell you my favourite colour' });
      await ask.wait();
      expect(seen(ask)).toEqual([
        ['call', 'ask_favourite_color', {}],
        ['handoff', 'ConciergeAgent', 'FavouriteColorTask'],
        ['message', 'assistant', 'What is your favourite colour?'],
      ]);
      expect(session.currentAgent).toBeInstanceOf(FavouriteColorTask);
      expect(agent.results).toEqual([]);

      const answer = session.run({ userInput: 'It is teal' });
      await answer.wait();
      expect(seen(answer)).toEqual([
        ['call', 'submit', { color: 'teal' }],
        ['output', 'submit', '"recorded teal"'],
        ['message', 'assistant', 'Thanks, noted.'],
        ['handoff', 'FavouriteColorTask', 'ConciergeAgent'],
        ['output', 'ask_favourite_color', `"The caller's favourite colour is teal."`],
        ['message', 'assistant', 'Teal is a lovely colour!'],
      ]);
      expect(agent.results).toEqual(['teal']);
      expect(session.currentAgent).toBe(agent);
    } finally {
      await session.close();
    }

    // What the model was sent: every reply scripted, nothing unexpected.
    expect(server.failures).toEqual([]);
    const r = server.requests;
    expect(r).toHaveLength(5);
    expect(r.every((req) => req.model === 'gpt-4o-mini' && req.stream)).toBe(true);
    expect(r.every((req) => req.stream_options?.include_usage === true)).toBe(true);

    expect(toolNames(r[0])).toEqual(['ask_favourite_color']);
    expect(lastMessage(r[0])).toEqual({
      role: 'user',
      content: 'I want to tell you my favourite colour',
    });

    // The task's requests offer only its submit tool, with the zod schema as JSON schema.
    for (const req of r.slice(1, 4)) expect(toolNames(req)).toEqual(['submit']);
    expect(r[1]?.tools?.[0]?.function.parameters).toMatchObject({
      type: 'object',
      properties: { color: { type: 'string', description: 'The colour, lower case' } },
      required: ['color'],
    });
    expect(r[1]?.messages).toContainEqual({
      role: 'system',
      content: 'Ask the caller for their favourite colour, then call submit with it.',
    });
    expect(lastMessage(r[2])).toEqual({ role: 'user', content: 'It is teal' });

    // UPSTREAM.md: the completing tool returned a value, so the task asks its model once
    // more after complete(), with the submit output as the last message.
    const submitCall = r[3]?.messages.find((m) => m.tool_calls?.[0]?.function.name === 'submit');
    expect(submitCall?.tool_calls?.[0]?.function.arguments).toBe('{"color":"teal"}');
    expect(lastMessage(r[3])).toEqual({
      role: 'tool',
      tool_call_id: submitCall?.tool_calls?.[0]?.id,
      content: '"recorded teal"',
    });

    // Back in the concierge: the awaiting tool's result reaches the model.
    expect(toolNames(r[4])).toEqual(['ask_favourite_color']);
    const askCall = r[4]?.messages.find((m) => m.tool_calls !== undefined);
    expect(askCall?.tool_calls?.[0]?.function.name).toBe('ask_favourite_color');
    expect(askCall?.tool_calls?.[0]?.id).not.toBe(submitCall?.tool_calls?.[0]?.id);
    expect(lastMessage(r[4])).toEqual({
      role: 'tool',
      tool_call_id: askCall?.tool_calls?.[0]?.id,
      content: `"The caller's favourite colour is teal."`,
    });
  });

  it('makes an unscripted model call visible: unexpected, failures and a session error', async () => {
    const server = await start([]);
    const model = new openai.LLM({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test' });
    // With the default maxRetry (3) the plugin would retry a 500 three times, 2 s apart.
    const session = new voice.AgentSession({
      llm: model,
      connOptions: { llmConnOptions: { maxRetry: 0 } },
    });
    const errored = new Promise<string>((resolve) => {
      session.once(voice.AgentSessionEventTypes.Error, (event) => {
        const error = 'error' in event.error ? event.error.error : undefined;
        resolve(error instanceof Error ? error.message : String(error));
      });
    });
    try {
      await session.start({ agent: new voice.Agent({ instructions: 'Greet the caller.' }) });
      const run = session.run({ userInput: 'hello?' });
      await run.wait();
      expect(run.events).toEqual([]);
      expect(await errored).toMatch(/script exhausted/);
    } finally {
      await session.close();
    }
    expect(server.unexpected).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(server.failures).toEqual([
      expect.objectContaining({ status: 500, code: 'script_exhausted', index: 0 }),
    ]);
  });
});
