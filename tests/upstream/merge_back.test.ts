// Pins how an inline task's chat context is merged back into its caller:
// ChatContext.merge(taskCtx, { excludeFunctionCall: !preserveFunctionCallHistory,
// excludeInstructions: true }) — inserted by createdAt, deduplicated by item id.
import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { labels, userSays, withSession } from './helpers.js';

function buildCaller(options: { preserveFunctionCallHistory: boolean; shareHistory: boolean }) {
  class AgeTask extends voice.AgentTask<number> {
    constructor(chatCtx?: llm.ChatContext) {
      super({
        instructions: 'age task',
        chatCtx,
        preserveFunctionCallHistory: options.preserveFunctionCallHistory,
        tools: {
          check_age: llm.tool({
            description: 'Check that an age is plausible.',
            parameters: z.object({ years: z.number() }),
            execute: async ({ years }) => (years > 0 && years < 130 ? 'valid' : 'invalid'),
          }),
          record_age: llm.tool({
            description: 'Record the caller age.',
            parameters: z.object({ years: z.number() }),
            execute: async ({ years }) => {
              this.complete(years);
            },
          }),
        },
      });
    }
    override async onEnter(): Promise<void> {
      this.session.generateReply({ instructions: 'instructions:ask_age' });
    }
  }

  const caller = new voice.Agent({
    instructions: 'caller',
    tools: {
      ask_age: llm.tool({
        description: 'Ask the caller for their age.',
        execute: async (_args, { ctx }) => {
          // Optionally seed the task with the caller's own items (same ids) to exercise dedupe.
          const seed = options.shareHistory ? ctx.session.currentAgent.chatCtx.copy() : undefined;
          const years = await new AgeTask(seed).run();
          return `age is ${years}`;
        },
      }),
    },
  });

  const replies = [
    { input: 'how old am I', toolCalls: [{ name: 'ask_age', args: {} }] },
    { input: 'instructions:ask_age', content: 'How old are you?' },
    { input: 'is 42 a valid age', toolCalls: [{ name: 'check_age', args: { years: 42 } }] },
    { input: '"valid"', content: 'Yes, 42 is valid.' },
    { input: 'I am 42', toolCalls: [{ name: 'record_age', args: { years: 42 } }] },
    { input: '"age is 42"', content: 'You are 42.' },
  ];
  return { caller, replies };
}

async function runIntake(options: { preserveFunctionCallHistory: boolean; shareHistory: boolean }) {
  const { caller, replies } = buildCaller(options);
  return withSession({ agent: caller, replies }, async (session) => {
    await userSays(session, 'how old am I');
    await userSays(session, 'is 42 a valid age');
    await userSays(session, 'I am 42');
    expect(session.currentAgent).toBe(caller);
    return [...caller.chatCtx.items];
  });
}

function indexOfLabel(items: readonly llm.ChatItem[], label: string): number {
  const index = labels(items).indexOf(label);
  expect(index, `"${label}" in caller chatCtx`).toBeGreaterThanOrEqual(0);
  return index;
}

describe('merge back of an inline task into the caller chatCtx', () => {
  it("inserts the task's messages by createdAt between the caller's call and its output", async () => {
    const items = await runIntake({ preserveFunctionCallHistory: false, shareHistory: false });

    const userAsk = indexOfLabel(items, 'user: how old am I');
    const callAsk = indexOfLabel(items, 'call ask_age');
    const taskQuestion = indexOfLabel(items, 'assistant: How old are you?');
    const taskCheck = indexOfLabel(items, 'user: is 42 a valid age');
    const taskCheckReply = indexOfLabel(items, 'assistant: Yes, 42 is valid.');
    const taskAnswer = indexOfLabel(items, 'user: I am 42');
    const outputAsk = indexOfLabel(items, 'output ask_age: "age is 42"');
    const callerReply = indexOfLabel(items, 'assistant: You are 42.');

    expect(userAsk).toBeLessThan(callAsk);
    const order = [callAsk, taskQuestion, taskCheck, taskCheckReply, taskAnswer, outputAsk];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(outputAsk).toBeLessThan(callerReply);
    for (let i = 1; i < order.length; i += 1) {
      expect(items[order[i - 1]!]!.createdAt).toBeLessThanOrEqual(items[order[i]!]!.createdAt);
    }
  });

  it("excludes the task's function calls and instructions by default, but keeps its config update", async () => {
    const items = await runIntake({ preserveFunctionCallHistory: false, shareHistory: false });
    const seen = labels(items);

    expect(seen.filter((l) => l.startsWith('call ')).sort()).toEqual(['call ask_age']);
    expect(seen.filter((l) => l.startsWith('output ')).sort()).toEqual([
      'output ask_age: "age is 42"',
    ]);
    // Only the caller's own instructions remain.
    const system = items.filter((i) => i.type === 'message' && i.role === 'system');
    expect(labels(system)).toEqual(['system: caller']);
    // agent_config_update items are not instructions and are merged.
    expect(seen).toContain('config age task');
  });

  it('includes the task function calls and outputs with preserveFunctionCallHistory: true', async () => {
    const items = await runIntake({ preserveFunctionCallHistory: true, shareHistory: false });
    const seen = labels(items);

    const checkCall = seen.indexOf('call check_age');
    const checkOutput = seen.indexOf('output check_age: "valid"');
    expect(checkCall).toBeGreaterThan(seen.indexOf('user: is 42 a valid age'));
    expect(checkOutput).toBeGreaterThan(checkCall);
    expect(checkOutput).toBeLessThan(seen.indexOf('assistant: Yes, 42 is valid.'));

    // Surprise pinned here: the call of the tool that completed the task is merged, but its
    // output is not. complete() triggers the merge before that tool's output reaches the task
    // context, so the caller is left with a function_call that has no function_call_output.
    const recordCall = seen.indexOf('call record_age');
    expect(recordCall).toBeGreaterThan(seen.indexOf('user: I am 42'));
    expect(recordCall).toBeLessThan(seen.indexOf('output ask_age: "age is 42"'));
    expect(seen.some((l) => l.startsWith('output record_age'))).toBe(false);

    // Instructions are still excluded.
    expect(seen).not.toContain('system: age task');
  });

  it("deduplicates by item id when the task was seeded with the caller's own items", async () => {
    const items = await runIntake({ preserveFunctionCallHistory: false, shareHistory: true });

    const ids = items.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(labels(items).filter((l) => l === 'user: how old am I')).toHaveLength(1);
    expect(labels(items)).toContain('user: I am 42');
  });
});

describe('ChatContext.merge (unit)', () => {
  function fixture() {
    const target = new llm.ChatContext();
    target.addMessage({ id: 'sys', role: 'system', content: 'caller', createdAt: 0 });
    target.addMessage({ id: 'u1', role: 'user', content: 'one', createdAt: 10 });
    target.addMessage({ id: 'a3', role: 'assistant', content: 'three', createdAt: 30 });

    const source = new llm.ChatContext();
    source.addMessage({ id: 'task-sys', role: 'system', content: 'task', createdAt: 5 });
    source.addMessage({ id: 'dev', role: 'developer', content: 'dev note', createdAt: 6 });
    // Same id as an existing item but different content: the existing item wins.
    source.addMessage({ id: 'u1', role: 'user', content: 'one (copy)', createdAt: 10 });
    source.addMessage({ id: 'u2', role: 'user', content: 'two', createdAt: 20 });
    source.insert(
      llm.FunctionCall.create({
        id: 'fc',
        callId: 'c1',
        name: 'lookup',
        args: '{}',
        createdAt: 21,
      }),
    );
    source.insert(
      llm.FunctionCallOutput.create({
        id: 'fo',
        callId: 'c1',
        name: 'lookup',
        output: 'ok',
        isError: false,
        createdAt: 22,
      }),
    );
    source.insert(new llm.AgentConfigUpdate({ id: 'cfg', instructions: 'task', createdAt: 23 }));
    // Same timestamp as an existing item: goes after it.
    source.addMessage({ id: 'tie', role: 'assistant', content: 'tie', createdAt: 30 });
    source.addMessage({ id: 'a4', role: 'assistant', content: 'four', createdAt: 40 });
    return { target, source };
  }

  it('inserts by createdAt, dedupes by id, and excludes calls and instructions when asked', () => {
    const { target, source } = fixture();

    const merged = target.merge(source, { excludeFunctionCall: true, excludeInstructions: true });

    // merge mutates and returns the receiver.
    expect(merged).toBe(target);
    expect(target.items.map((i) => i.id)).toEqual(['sys', 'u1', 'u2', 'cfg', 'a3', 'tie', 'a4']);
    expect(labels(target.items)).toContain('user: one');
    expect(labels(target.items)).not.toContain('user: one (copy)');
  });

  it('keeps function calls and instructions with the default options', () => {
    const { target, source } = fixture();

    target.merge(source);

    expect(target.items.map((i) => i.id)).toEqual([
      'sys',
      'task-sys',
      'dev',
      'u1',
      'u2',
      'fc',
      'fo',
      'cfg',
      'a3',
      'tie',
      'a4',
    ]);
  });

  it('drops agent_config_update items only with excludeConfigUpdate', () => {
    const { target, source } = fixture();

    target.merge(source, { excludeConfigUpdate: true });

    expect(target.items.map((i) => i.id)).not.toContain('cfg');
  });
});
