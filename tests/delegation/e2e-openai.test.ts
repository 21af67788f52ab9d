// End to end through the real openai plugin against the local OpenAI-compatible server:
// the voice agent delegates in the background, answers another question meanwhile, then
// speaks the result.
import { Future, llm } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TaskManager } from '../../src/delegation/manager.js';
import { defineSubAgent } from '../../src/delegation/subagent.js';
import {
  type FakeOpenAIServer,
  type OpenAIChatRequest,
  type OpenAIReply,
  SimulatedCaller,
  startFakeOpenAI,
} from '../../src/testing/index.js';
import { Desk, whenSpoken } from './helpers.js';

let server: FakeOpenAIServer | undefined;
let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  await server?.close();
  server = undefined;
});

const RESEARCHER = 'You research questions in the policy documents.';
const FINDING = 'Opened items can be returned within 14 days for store credit.';

function text(message: OpenAIChatRequest['messages'][number] | undefined): string {
  const content = message?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => part.text ?? '').join('');
}

function systemOf(request: OpenAIChatRequest): string {
  return request.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map(text)
    .join('\n');
}

function respond(request: OpenAIChatRequest): OpenAIReply {
  const last = request.messages.at(-1);
  const system = systemOf(request);
  if (system.includes(RESEARCHER)) {
    return last?.role === 'tool'
      ? { content: FINDING }
      : { toolCalls: [{ name: 'search_docs', args: { query: 'refund opened items' } }] };
  }
  if (system.includes('Delegated task results are ready')) {
    return system.includes(FINDING)
      ? {
          content:
            'About your refund question: opened items can go back within 14 days, for store credit.',
        }
      : { content: 'I have no news yet.' };
  }
  if (last?.role === 'tool') {
    return text(last).includes('running in the background')
      ? { content: "I'll look into that and get back to you." }
      : { content: 'Hmm.' };
  }
  if (text(last).includes('refund')) {
    return {
      toolCalls: [
        {
          name: 'task',
          args: {
            subagent_type: 'researcher',
            description: 'Check refunds for opened items',
            prompt: 'What does the refund policy say about opened items? Answer in one sentence.',
            run_in_background: true,
          },
        },
      ],
    };
  }
  return { content: 'We are open from nine to five.' };
}

describe('delegation through the real openai plugin', () => {
  it('delegates in the background, answers another question, then speaks the result', async () => {
    server = await startFakeOpenAI(respond);
    const searched = new Future<void>();
    const release = new Future<void>();
    const researcher = defineSubAgent({
      name: 'researcher',
      description: 'Searches the policy documents.',
      instructions: RESEARCHER,
      tools: {
        search_docs: llm.tool({
          description: 'Search the policy documents.',
          parameters: z.object({ query: z.string() }),
          execute: async () => {
            searched.resolve();
            await release.await;
            return 'returns.md: Opened items: 14 days, store credit only.';
          },
        }),
      },
    });
    const connOptions = { maxRetry: 0, retryIntervalMs: 0, timeoutMs: 10_000 };
    const manager = new TaskManager({
      subagents: [researcher],
      llm: new openai.LLM({ model: 'sub-model', baseURL: server.url, apiKey: 'test' }),
      connOptions,
    });
    caller = await SimulatedCaller.start({
      agent: new Desk(manager),
      llm: new openai.LLM({ model: 'voice-model', baseURL: server.url, apiKey: 'test' }),
      sessionOptions: { connOptions: { llmConnOptions: connOptions } },
    });

    await caller.say('What does your refund policy say about opened items?');
    expect(caller.agentLines).toEqual(["I'll look into that and get back to you."]);
    await searched.await;
    expect(manager.get('t1')?.status).toBe('running');

    await caller.say('And what are your opening hours?');
    expect(caller.agentLines.at(-1)).toBe('We are open from nine to five.');

    await whenSpoken(caller, manager, 't1', async () => release.resolve());
    expect(caller.agentLines).toEqual([
      "I'll look into that and get back to you.",
      'We are open from nine to five.',
      'About your refund question: opened items can go back within 14 days, for store credit.',
    ]);
    expect(manager.get('t1')).toMatchObject({ status: 'completed', delivery: 'spoken' });
    expect(server.failures).toEqual([]);

    // The sub-agent ran on its own model with its brief and its tool.
    const sub = server.requests.filter((r) => r.model === 'sub-model');
    expect(sub).toHaveLength(2);
    expect(text(sub[0]?.messages.at(-1))).toBe(
      'What does the refund policy say about opened items? Answer in one sentence.',
    );
    expect(sub[0]?.tools?.map((t) => t.function.name)).toEqual(['search_docs']);
    // The voice model got the task tool with the documented parameters.
    const voiceRequests = server.requests.filter((r) => r.model === 'voice-model');
    const task = voiceRequests[0]?.tools?.find((t) => t.function.name === 'task');
    expect(Object.keys(task?.function.parameters?.properties ?? {})).toEqual([
      'subagent_type',
      'description',
      'prompt',
      'run_in_background',
      'task_id',
      'model',
    ]);
    expect(voiceRequests).toHaveLength(4);
  });
});
