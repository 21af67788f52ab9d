// Fault class: the model fails before, during or after streaming while a capture task is
// talking to the caller (the voice path of a TypedTask or a menu's model fallback). Real
// openai plugin against the local OpenAI-compatible server with injected faults, plus
// ScriptedLLM for a retryable error after partial text. Each asserts what the caller heard
// (never half a sentence, never a retry's text on top of the first attempt's), that no tool
// call from a broken stream ran (no value captured from it), the typed outcome, and that
// the call goes on; bounded on the virtual clock and by a hard wall-clock limit per turn.
import type { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Outcome } from '../../src/outcome.js';
import { defineTask } from '../../src/tasks/define.js';
import { menu } from '../../src/telephony/menu.js';
import {
  type FakeOpenAIServer,
  type OpenAIChatRequest,
  type OpenAIReply,
  startFakeOpenAI,
} from '../../src/testing/openai-server.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { flushAsync } from '../../src/testing/virtual-clock.js';
import { startDesk } from './helpers.js';

const PROMPT = 'What is your account number?';
const AGAIN = `Sorry, I didn't understand. ${PROMPT}`;
const HALF = 'Your account number is';

let server: FakeOpenAIServer | undefined;
let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  await server?.close();
  server = undefined;
});

const account = defineTask({
  name: 'account',
  instructions: 'Collect the caller account number.',
  prompt: PROMPT,
  schema: z.object({ account: z.string() }),
});

function systemText(request: OpenAIChatRequest): string {
  return request.messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');
}

/** The desk's model picks `capture` then says it is back; the task's replies come from `task`. */
async function startWith(
  task: OpenAIReply[],
  make: () => voice.AgentTask<Outcome<unknown>> = () => account.create(),
) {
  let taskCalls = 0;
  server = await startFakeOpenAI((request) => {
    if (systemText(request).includes('Front desk.')) {
      return request.messages.at(-1)?.role === 'tool'
        ? { content: 'Back at the desk.' }
        : { toolCalls: [{ name: 'capture', args: {} }] };
    }
    const reply = task[taskCalls++];
    if (!reply) throw new Error(`no scripted task reply #${taskCalls}`);
    return reply;
  });
  const model = new openai.LLM({ model: 'fault-model', baseURL: server.url, apiKey: 'test' });
  const started = await startDesk(make, { llm: model });
  caller = started.caller;
  return started;
}

async function say(text: string) {
  const t0 = Date.now();
  await caller!.say(text);
  // Real I/O: a hard bound per turn, never a sleep.
  expect(Date.now() - t0).toBeLessThan(10_000);
}

describe('model error during streaming', () => {
  it('dropped after partial text: the caller never hears the half sentence, only a re-prompt', async () => {
    const { desk } = await startWith([
      { content: `${HALF} 4 4 1 2.`, fault: { kind: 'disconnect', at: 3 } },
      { toolCalls: [{ name: 'submit', args: { account: '4412' } }] },
    ]);
    await say('it is four four one two');
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN]);
    await say('four four one two');
    expect(desk.outcomes).toEqual([
      { status: 'ok', value: { account: '4412' }, attempts: 2, modality: 'speech' },
    ]);
    expect(caller!.agentLines.join(' ')).not.toContain(HALF);
    expect(caller!.agentLines.at(-1)).toBe('Back at the desk.');
  });

  it('a submit from a broken stream never runs: nothing is captured from it', async () => {
    const { desk } = await startWith([
      {
        toolCalls: [
          { name: 'submit', args: { account: '9999' } },
          { name: 'report_unclear', args: { reason: 'x' } },
        ],
        fault: { kind: 'disconnect', at: 5 },
      },
      { toolCalls: [{ name: 'submit', args: { account: '4412' } }] },
    ]);
    await say('nine nine nine nine');
    expect(desk.outcomes).toEqual([]);
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN]);
    await say('four four one two');
    expect(desk.outcomes).toMatchObject([{ status: 'ok', value: { account: '4412' } }]);
  });

  it('an SSE error event mid-answer: re-prompt, attempt counted once', async () => {
    await startWith([{ content: `${HALF} 4 4 1 2.`, fault: { kind: 'error-event', at: 2 } }]);
    await say('it is four four one two');
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN]);
  });
});

describe('model error before and after streaming', () => {
  it('a 500 before anything streamed is retried once, from scratch', async () => {
    const { desk } = await startWith([
      { content: 'x', fault: { kind: 'status', status: 500 } },
      { toolCalls: [{ name: 'submit', args: { account: '4412' } }] },
    ]);
    await say('four four one two');
    expect(desk.outcomes).toMatchObject([
      { status: 'ok', value: { account: '4412' }, attempts: 1 },
    ]);
    expect(server?.requests.filter((r) => !systemText(r).includes('Front desk.'))).toHaveLength(2);
  });

  it('a 400: re-prompt at once (not retried)', async () => {
    await startWith([{ content: 'x', fault: { kind: 'status', status: 400 } }]);
    await say('four four one two');
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN]);
  });

  it('dropped after the last chunk: the finished-looking answer is not used', async () => {
    const { desk } = await startWith([
      {
        toolCalls: [{ name: 'submit', args: { account: '9999' } }],
        fault: { kind: 'disconnect', at: 'end' },
      },
    ]);
    await say('nine nine nine nine');
    expect(desk.outcomes).toEqual([]);
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN]);
  });

  it('a model that keeps failing: the task ends nomatch at its cap, the call goes on', async () => {
    const down: OpenAIReply = { content: HALF, fault: { kind: 'disconnect', at: 2 } };
    const { desk } = await startWith([down, down, down]);
    for (const text of ['one', 'two', 'three']) await say(text);
    expect(desk.outcomes).toEqual([
      { status: 'nomatch', attempts: 3, reason: 'not understood 3 times' },
    ]);
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN, AGAIN, 'Back at the desk.']);
  });
});

describe('a model gone silent mid-answer', () => {
  it('after the request timeout on the call’s clock: a re-prompt, nothing half-said', async () => {
    await startWith([{ content: `${HALF} 4 4 1 2.`, fault: { kind: 'stall', at: 3 } }]);
    const turn = caller!.say('four four one two');
    for (let i = 0; i < 500 && (server?.faults.length ?? 0) === 0; i++) await flushAsync(1);
    expect(server?.faults).toHaveLength(1);
    // The session's llmConnOptions.timeoutMs (10 s by default) passes on the call's clock.
    await caller!.clock.advance(10_000);
    await turn;
    expect(caller!.agentLines).toEqual([PROMPT, AGAIN]);
  });
});

describe('menu model fallback', () => {
  it('a broken stream is a no-match with the menu again, never a pick', async () => {
    const main = menu({
      name: 'main',
      prompt: 'Main menu.',
      options: {
        '1': { label: 'balance', value: 'balance' },
        '2': { label: 'cards', value: 'cards' },
      },
    });
    const { desk } = await startWith(
      [
        {
          toolCalls: [{ name: 'submit', args: { key: '2' } }],
          fault: { kind: 'disconnect', at: 'end' },
        },
      ],
      () => main.create(),
    );
    await say('the thing about plastic');
    expect(desk.outcomes).toEqual([]);
    expect(caller!.agentLines.at(-1)).toMatch(/^Sorry, I didn't understand\. Main menu\./);
  });
});

describe('retryable error after partial text (ScriptedLLM)', () => {
  it('no retry text on top of the first attempt’s: one re-prompt instead', async () => {
    const model = new ScriptedLLM().for('account', [
      { say: HALF, fail: { message: 'overloaded', afterOutput: true, retryable: true } },
      { say: `${HALF} 4412.` },
    ]);
    const started = await startDesk(() => account.create(), { model });
    caller = started.caller;
    await caller.say('four four one two');
    expect(caller.agentLines).toEqual([PROMPT, AGAIN]);
    expect(model.requestsFor('account')).toHaveLength(1);
  });
});
