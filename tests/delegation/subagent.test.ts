// The headless runner (tool loop on upstream llm.LLM: turn cap, abort, structured output)
// and what a general-purpose sub-agent leaves in the parent's files.
import { llm } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTasklineError } from '../../src/core/errors.js';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { TaskManager } from '../../src/delegation/manager.js';
import {
  newProgress,
  partialOutput,
  runHeadless,
  SUBMIT_RESULT_TOOL,
} from '../../src/delegation/runner.js';
import { defineSubAgent, GENERAL_PURPOSE } from '../../src/delegation/subagent.js';
import { summarize } from '../../src/delegation/summary.js';
import type { Workspace } from '../../src/delegation/workspace.js';
import { ScriptedLLM, VirtualClock } from '../../src/testing/index.js';

const echo = llm.tool({
  description: 'Echo a word.',
  parameters: z.object({ word: z.string() }),
  execute: async ({ word }) => `echo: ${word}`,
});

function run(model: llm.LLM, options: Partial<Parameters<typeof runHeadless>[0]> = {}) {
  return runHeadless({
    model,
    instructions: 'You are a test sub-agent.',
    tools: { echo },
    conversation: llm.ChatContext.empty(),
    prompt: 'Go.',
    maxTurns: 5,
    signal: new AbortController().signal,
    ...options,
  });
}

describe('runHeadless', () => {
  it('loops: chat, run the tool calls, feed outputs back, until a text answer', async () => {
    const model = new ScriptedLLM().for('*', [
      {
        toolCalls: [
          { name: 'echo', args: { word: 'a' } },
          { name: 'echo', args: { word: 'b' } },
        ],
      },
      (req) => ({ say: `last: ${req.lastToolOutput?.value}` }),
    ]);
    const conversation = llm.ChatContext.empty();
    const result = await run(model, { conversation });
    expect(result).toEqual({ output: 'last: echo: b', turns: 2 });
    expect(model.requests[0]?.tools).toEqual(['echo']);
    expect(conversation.items.map((i) => i.type)).toEqual([
      'message',
      'message',
      'function_call',
      'function_call_output',
      'function_call',
      'function_call_output',
      'message',
    ]);
  });

  it('stops at the turn cap with limit_exceeded', async () => {
    const model = new ScriptedLLM({
      respond: () => ({ toolCalls: [{ name: 'echo', args: { word: 'x' } }] }),
    });
    const progress = newProgress();
    const error = await run(model, { maxTurns: 3, progress }).catch((e: unknown) => e);
    expect(isTasklineError(error, 'limit_exceeded')).toBe(true);
    expect(String(error)).toContain('all 3 of its turns');
    expect(progress.turns).toBe(3);
  });

  it('returns a structured value through the submit tool, re-asking after an invalid one', async () => {
    const Output = z.object({ days: z.number().int(), policy: z.string() });
    const model = new ScriptedLLM().for('*', [
      { toolCalls: [{ name: SUBMIT_RESULT_TOOL, args: { days: 'thirty', policy: 'refunds' } }] },
      (req) => ({
        toolCalls: req.lastToolOutput?.isError
          ? [{ name: SUBMIT_RESULT_TOOL, args: { days: 30, policy: 'refunds' } }]
          : [],
      }),
    ]);
    const result = await run(model, { output: Output });
    expect(result.value).toEqual({ days: 30, policy: 'refunds' });
    expect(result.turns).toBe(2);
    expect(JSON.parse(result.output)).toEqual({ days: 30, policy: 'refunds' });
  });

  it('accepts a JSON text answer of the right shape, and asks again for anything else', async () => {
    const model = new ScriptedLLM().for('*', [
      { say: 'Thirty days.' },
      { say: '```json\n{"days": 30}\n```' },
    ]);
    const result = await run(model, { output: z.object({ days: z.number() }) });
    expect(result.value).toEqual({ days: 30 });
    expect(model.requests[1]?.lastUserText).toContain(`Call ${SUBMIT_RESULT_TOOL} now`);
  });

  it('wraps a non-object output schema as { result }', async () => {
    const model = new ScriptedLLM().for('*', [
      { toolCalls: [{ name: SUBMIT_RESULT_TOOL, args: { result: ['a', 'b'] } }] },
    ]);
    expect((await run(model, { output: z.array(z.string()) })).value).toEqual(['a', 'b']);
  });

  it('an abort stops the run; the progress keeps the partial output', async () => {
    const controller = new AbortController();
    const slow = llm.tool({
      description: 'Slow.',
      parameters: z.object({}),
      execute: async (_args, { abortSignal }) =>
        new Promise((_resolve, reject) => {
          abortSignal.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
          queueMicrotask(() => controller.abort(new Error('stop now')));
        }),
    });
    const model = new ScriptedLLM().for('*', [
      { say: 'Halfway there.', toolCalls: [{ name: 'slow' }] },
    ]);
    const progress = newProgress();
    const error = await run(model, { tools: { slow }, signal: controller.signal, progress }).catch(
      (e: unknown) => e,
    );
    expect(String(error)).toContain('stop now');
    expect(partialOutput(progress)).toBe('Halfway there.');
  });
});

describe('general-purpose sub-agent', () => {
  it('still ends with its answer and result file when its workspace cannot be merged', async () => {
    let workspace: Workspace | undefined;
    const notes = defineSubAgent({
      name: 'notes',
      description: 'Takes notes.',
      instructions: 'Take notes.',
      tools: (ctx) => {
        workspace = ctx.workspace;
        return {};
      },
    });
    const manager = new TaskManager({
      subagents: [notes],
      generalPurpose: false,
      llm: new ScriptedLLM().for('*', [{ say: 'Noted.' }]),
      clock: new VirtualClock(),
    });
    const task = manager.start({ subagentType: 'notes', description: 'Take notes' });
    expect(workspace).toBeDefined();
    workspace!.files.ls = () => Promise.reject(new Error('workspace store unreachable'));
    const result = await manager.wait(task.id);
    expect(result.status).toBe('completed');
    expect(result.summary).toBe('Noted.');
    expect(result.files).toEqual([]);
    expect(result.resultPath).toBe('/tasks/t1/result.md');
    expect(await manager.files.read('/tasks/t1/result.md')).toContain('Noted.');
    await manager.close();
  });

  it('still ends with its answer when the call files refuse every write', async () => {
    const sub = new ScriptedLLM().for('*', [
      {
        toolCalls: [
          { name: 'write_file', args: { file_path: '/notes.md', content: 'kept in the task' } },
        ],
      },
      { say: 'Done, with notes.' },
    ]);
    const refusing = new MemoryBackend();
    // One write refused with a rejection, the next with a synchronous throw.
    let calls = 0;
    refusing.write = (() => {
      calls += 1;
      if (calls % 2 === 0) throw new Error('disk full (sync)');
      return Promise.reject(new Error('disk full'));
    }) as MemoryBackend['write'];
    const manager = new TaskManager({ llm: sub, files: refusing, clock: new VirtualClock() });
    const task = manager.start({ subagentType: GENERAL_PURPOSE, description: 'Take notes' });
    const result = await manager.wait(task.id, { timeoutMs: 5_000 });
    expect(result.status).toBe('completed');
    expect(result.summary).toBe('Done, with notes.');
    expect(result.files).toEqual([]);
    expect(result.resultPath).toBeUndefined();
    expect(calls).toBe(2);
    await manager.close();
  });

  it('works with its own files and todos, which merge into the parent under /tasks/<id>/', async () => {
    const sub = new ScriptedLLM().for('*', [
      {
        toolCalls: [
          {
            name: 'write_todos',
            args: { todos: [{ content: 'Draft the letter', status: 'completed' }] },
          },
          { name: 'write_file', args: { file_path: '/drafts/letter.md', content: 'Dear Jane,\n' } },
        ],
      },
      { say: 'The letter is drafted. It greets Jane.' },
    ]);
    const manager = new TaskManager({ llm: sub, clock: new VirtualClock() });
    const task = manager.start({ subagentType: GENERAL_PURPOSE, description: 'Draft a letter' });
    const result = await manager.wait(task.id);
    expect(result.files.sort()).toEqual(['/tasks/t1/drafts/letter.md', '/tasks/t1/todos.md']);
    expect(await manager.files.read('/tasks/t1/drafts/letter.md')).toBe('Dear Jane,\n');
    expect(await manager.files.read('/tasks/t1/todos.md')).toContain('[x] 1. Draft the letter');
    expect(result.resultPath).toBe('/tasks/t1/result.md');
    expect(result.summary).toBe('The letter is drafted. It greets Jane.');
    expect(sub.requests[0]?.tools.sort()).toEqual(
      [
        'delete_file',
        'edit_file',
        'glob',
        'grep',
        'ls',
        'read_file',
        'read_todos',
        'task',
        'task_cancel',
        'task_status',
        'write_file',
        'write_todos',
      ].sort(),
    );
    await manager.close();
  });

  it('a custom sub-agent with an output schema hands back a typed value and its own summary', async () => {
    const Quote = z.object({ price: z.number(), currency: z.string() });
    const pricer = defineSubAgent({
      name: 'pricer',
      description: 'Quotes a price.',
      instructions: 'Quote a price.',
      output: Quote,
      summarize: ({ value }) =>
        value ? `It costs ${value.price} ${value.currency}.` : 'No price.',
    });
    const sub = new ScriptedLLM().for('*', [
      { toolCalls: [{ name: SUBMIT_RESULT_TOOL, args: { price: 12, currency: 'EUR' } }] },
    ]);
    const manager = new TaskManager({ subagents: [pricer], llm: sub, generalPurpose: false });
    const task = manager.start({ subagentType: 'pricer', description: 'Quote it' });
    const result = await manager.wait(task.id);
    expect(result).toMatchObject({
      status: 'completed',
      value: { price: 12, currency: 'EUR' },
      summary: 'It costs 12 EUR.',
    });
    await manager.close();
  });

  it('refuses bad definitions early', () => {
    expect(() => defineSubAgent({ name: '1bad', description: 'x', instructions: 'y' })).toThrow(
      /must start with a letter/,
    );
    expect(() => defineSubAgent({ name: 'ok', description: 'x', instructions: ' ' })).toThrow(
      /needs instructions/,
    );
    expect(() => new TaskManager({ generalPurpose: false })).toThrow(/at least one sub-agent/);
    expect(() => new TaskManager({ maxParallel: 0 })).toThrow(/maxParallel/);
  });
});

describe('summarize', () => {
  it('speaks the first sentences that fit, without markdown', () => {
    expect(
      summarize('# Result\n\n- **Refunds** take 30 days.\n- Opened items: store credit.', 300),
    ).toBe('Result Refunds take 30 days. Opened items: store credit.');
    expect(summarize('One. Two is longer. Three.', 12)).toBe('One.');
    expect(summarize('a'.repeat(50), 10)).toBe(`${'a'.repeat(9)}…`);
  });

  it('leaves plain text as it is and strips every kind of markdown it can start with', () => {
    // Plain one-line answers skip the stripping passes; anything else goes through them.
    expect(summarize('Answer to question 5: found 10 notes.')).toBe(
      'Answer to question 5: found 10 notes.',
    );
    const cases: Array<[string, string]> = [
      ['1. First step', 'First step'],
      ['12) Twelfth', 'Twelfth'],
      ['- item', 'item'],
      ['+ item', 'item'],
      ['## Heading', 'Heading'],
      ['#hashtag stays', '#hashtag stays'],
      ['-5 degrees', '-5 degrees'],
      ['  padded  ', 'padded'],
      ['two  spaces', 'two spaces'],
      ['tab\there', 'tab here'],
      ['no\u00a0break', 'no break'],
      ['line\u2028separator', 'line separator'],
      ['see [the docs](https://x.test/a) now', 'see the docs now'],
      ['a > b | c', 'a b c'],
      ['`code` and _em_', 'code and em'],
    ];
    for (const [text, spoken] of cases) expect(summarize(text), JSON.stringify(text)).toBe(spoken);
  });
});
