// Pins workflows.TaskGroup: tasks run in registration order, results are keyed by id in
// `taskResults`, and the generated `out_of_scope` tool returns to an already visited task,
// which runs again (a fresh instance from its factory) and whose new result wins.
import { Future, llm, voice, workflows } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HookLog, userSays, withSession } from './helpers.js';

function buildSurvey() {
  const hooks = new HookLog();
  const completed: string[] = [];
  const groupResult = new Future<workflows.TaskGroupResult>();
  const toolsSeen: Record<string, string[][]> = { name: [], age: [] };
  let nameTasksMade = 0;

  class NameTask extends voice.AgentTask<string> {
    constructor() {
      super({
        instructions: 'name task',
        tools: {
          record_name: llm.tool({
            description: 'Record the caller name.',
            parameters: z.object({ name: z.string() }),
            execute: async ({ name }) => {
              this.complete(name);
            },
          }),
        },
      });
      nameTasksMade += 1;
    }
    override async onEnter(): Promise<void> {
      hooks.record('name.enter');
      toolsSeen.name!.push(llm.sortedToolNames(this.toolCtx));
    }
  }

  class AgeTask extends voice.AgentTask<number> {
    constructor() {
      super({
        instructions: 'age task',
        tools: {
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
      hooks.record('age.enter');
      toolsSeen.age!.push(llm.sortedToolNames(this.toolCtx));
    }
  }

  const caller = new voice.Agent({
    instructions: 'caller',
    tools: {
      survey: llm.tool({
        description: 'Run the survey.',
        execute: async () => {
          const result = await new workflows.TaskGroup({
            summarizeChatCtx: false,
            onTaskCompleted: async (ev) => {
              completed.push(`${ev.taskId}=${String(ev.result)}`);
            },
          })
            .add(() => new NameTask(), { id: 'name', description: 'Collect the caller name' })
            .add(() => new AgeTask(), { id: 'age', description: 'Collect the caller age' })
            .run();
          groupResult.resolve(result);
          return 'survey done';
        },
      }),
    },
  });

  const replies = [
    { input: 'start the survey', toolCalls: [{ name: 'survey', args: {} }] },
    { input: 'my name is Ann', toolCalls: [{ name: 'record_name', args: { name: 'Ann' } }] },
    {
      input: 'wait, fix my name',
      toolCalls: [{ name: 'out_of_scope', args: { task_ids: ['name'] } }],
    },
    { input: 'my name is Bob', toolCalls: [{ name: 'record_name', args: { name: 'Bob' } }] },
    { input: 'I am 42', toolCalls: [{ name: 'record_age', args: { years: 42 } }] },
    { input: '"survey done"', content: 'Thanks for answering.' },
  ];

  return {
    hooks,
    completed,
    groupResult,
    toolsSeen,
    nameTasksMade: () => nameTasksMade,
    caller,
    replies,
    NameTask,
    AgeTask,
  };
}

describe('workflows.TaskGroup', () => {
  it('runs tasks in registration order and returns results keyed by id', async () => {
    const s = buildSurvey();

    await withSession({ agent: s.caller, replies: s.replies }, async (session) => {
      await userSays(session, 'start the survey');
      expect(session.currentAgent).toBeInstanceOf(s.NameTask);

      await userSays(session, 'my name is Ann');
      expect(session.currentAgent).toBeInstanceOf(s.AgeTask);

      const last = await userSays(session, 'I am 42');

      expect(await s.groupResult.await).toEqual({ taskResults: { name: 'Ann', age: 42 } });
      expect(Object.keys((await s.groupResult.await).taskResults)).toEqual(['name', 'age']);
      expect(s.hooks.entries).toEqual(['name.enter', 'age.enter']);
      expect(s.completed).toEqual(['name=Ann', 'age=42']);
      expect(session.currentAgent).toBe(s.caller);
      last.expect.containsFunctionCallOutput({ output: '"survey done"' });
      last.expect.containsMessage({ role: 'assistant' });
    });
  });

  it('offers out_of_scope only in tasks that have another visited task to return to', async () => {
    const s = buildSurvey();

    await withSession({ agent: s.caller, replies: s.replies }, async (session) => {
      await userSays(session, 'start the survey');
      await userSays(session, 'my name is Ann');

      expect(s.toolsSeen.name).toEqual([['record_name']]);
      expect(s.toolsSeen.age).toEqual([['out_of_scope', 'record_age']]);
    });
  });

  it('out_of_scope returns to a visited task, which runs again and whose new result wins', async () => {
    const s = buildSurvey();

    await withSession({ agent: s.caller, replies: s.replies }, async (session) => {
      await userSays(session, 'start the survey');
      await userSays(session, 'my name is Ann');
      expect(session.currentAgent).toBeInstanceOf(s.AgeTask);

      // Surprise pinned here: out_of_scope completes the current task with an error, and
      // AgentTask.complete(error) becomes the run's final output, so this run() REJECTS.
      const back = session.run({ userInput: 'wait, fix my name' });
      await expect(back.wait()).rejects.toThrow('out_of_scope');
      // containsFunctionCall({ args }) compares values with !==, so an array arg never matches;
      // read the arguments instead.
      const call = back.expect.containsFunctionCall({ name: 'out_of_scope' }).event().item;
      expect(JSON.parse(call.args)).toEqual({ task_ids: ['name'] });

      expect(session.currentAgent).toBeInstanceOf(s.NameTask);
      expect(s.nameTasksMade()).toBe(2);
      // Back in the name task, out_of_scope now points at the visited age task.
      expect(s.toolsSeen.name).toEqual([['record_name'], ['out_of_scope', 'record_name']]);

      await userSays(session, 'my name is Bob');
      // The interrupted task runs again after the revisited one.
      expect(session.currentAgent).toBeInstanceOf(s.AgeTask);
      await userSays(session, 'I am 42');

      expect(await s.groupResult.await).toEqual({ taskResults: { name: 'Bob', age: 42 } });
      expect(s.hooks.entries).toEqual(['name.enter', 'age.enter', 'name.enter', 'age.enter']);
      expect(s.completed).toEqual(['name=Ann', 'name=Bob', 'age=42']);
      expect(session.currentAgent).toBe(s.caller);
    });
  });
});
