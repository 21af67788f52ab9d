// Pins inline AgentTask<T> pause/resume: a tool awaits `new MyTask().run()`, the caller's
// activity is paused (not closed), the task becomes current, and the typed result comes back
// to the awaiting tool once the caller has been resumed.
import { llm, voice } from '@livekit/agents';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { activityOf, HookLog, labels, userSays, withSession } from './helpers.js';

/** The typed value the task produces; an object so we can see it is not serialized. */
interface Age {
  years: number;
}

function buildIntake() {
  const hooks = new HookLog();
  const received: Age[] = [];
  const completedWith: Age[] = [];
  let callerAtResult: voice.Agent | undefined;

  class AgeTask extends voice.AgentTask<Age> {
    constructor() {
      super({
        instructions: 'age task',
        tools: {
          record_age: llm.tool({
            description: 'Record the caller age.',
            parameters: z.object({ years: z.number() }),
            execute: async ({ years }) => {
              const value: Age = { years };
              completedWith.push(value);
              this.complete(value);
            },
          }),
        },
      });
    }
    override async onEnter(): Promise<void> {
      hooks.record('task.enter');
      this.session.generateReply({ instructions: 'instructions:ask_age' });
    }
    override async onExit(): Promise<void> {
      hooks.record('task.exit');
    }
  }

  class Caller extends voice.Agent {
    constructor() {
      super({
        instructions: 'caller',
        tools: {
          ask_age: llm.tool({
            description: 'Ask the caller for their age.',
            execute: async (_args, { ctx }) => {
              const age = await new AgeTask().run();
              expectTypeOf(age).toEqualTypeOf<Age>();
              received.push(age);
              callerAtResult = ctx.session.currentAgent;
              return `age is ${age.years}`;
            },
          }),
        },
      });
    }
    override async onEnter(): Promise<void> {
      hooks.record('caller.enter');
    }
    override async onExit(): Promise<void> {
      hooks.record('caller.exit');
    }
  }

  const replies = [
    { input: 'how old am I', toolCalls: [{ name: 'ask_age', args: {} }] },
    { input: 'instructions:ask_age', content: 'How old are you?' },
    { input: 'I am 42', toolCalls: [{ name: 'record_age', args: { years: 42 } }] },
    { input: '"age is 42"', content: 'You are 42.' },
  ];
  return {
    hooks,
    received,
    completedWith,
    callerAtResult: () => callerAtResult,
    caller: new Caller(),
    AgeTask,
    replies,
  };
}

describe('inline AgentTask<T> pause/resume', () => {
  it('pauses the caller and makes the task session.currentAgent while it runs', async () => {
    const { hooks, caller, AgeTask, replies } = buildIntake();

    await withSession({ agent: caller, replies }, async (session) => {
      const callerActivity = activityOf(caller);
      const first = await userSays(session, 'how old am I');

      expect(session.currentAgent).toBeInstanceOf(AgeTask);
      expect(hooks.entries).toEqual(['caller.enter', 'task.enter']);
      // Paused, not closed: the caller keeps its activity but does not schedule speech.
      expect(activityOf(caller)).toBe(callerActivity);
      expect(callerActivity?.schedulingPaused).toBe(true);
      // The run that started the task settles while the task waits for the user.
      first.expect.containsFunctionCall({ name: 'ask_age' });
      first.expect.containsAgentHandoff({ newAgentType: AgeTask });
      first.expect.containsMessage({ role: 'assistant' });
      expect(first.events.some((e) => e.type === 'function_call_output')).toBe(false);
    });
  });

  it('hands the typed result to the awaiting tool and makes the caller current again', async () => {
    const { received, completedWith, callerAtResult, caller, replies } = buildIntake();

    await withSession({ agent: caller, replies }, async (session) => {
      await userSays(session, 'how old am I');
      const second = await userSays(session, 'I am 42');

      expect(received).toEqual([{ years: 42 }]);
      // The very object passed to complete(), not a serialized copy.
      expect(received[0]).toBe(completedWith[0]);
      expect(session.currentAgent).toBe(caller);
      // The caller was already resumed when the tool got its result.
      expect(callerAtResult()).toBe(caller);

      second.expect.containsFunctionCallOutput({ output: '"age is 42"' });
      expect(labels(caller.chatCtx.items)).toContain('assistant: You are 42.');
    });
  });

  it('resumes the caller without re-running its onEnter and without running its onExit', async () => {
    const { hooks, caller, replies } = buildIntake();

    await withSession({ agent: caller, replies }, async (session) => {
      const callerActivity = activityOf(caller);
      await userSays(session, 'how old am I');
      await userSays(session, 'I am 42');

      expect(session.currentAgent).toBe(caller);
      expect(hooks.count('caller.enter')).toBe(1);
      expect(hooks.count('caller.exit')).toBe(0);
      expect(hooks.entries).toEqual(['caller.enter', 'task.enter', 'task.exit']);
      // Same activity object, resumed.
      expect(activityOf(caller)).toBe(callerActivity);
      expect(callerActivity?.schedulingPaused).toBe(false);
    });
  });
});
