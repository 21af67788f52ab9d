// Pins session close while an inline task is active: the task is completed with a ToolError,
// the awaiting tool sees that error, and session.close() resolves (no hang).
import { Future, llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HookLog, userSays, withSession } from './helpers.js';

function buildCaller() {
  const hooks = new HookLog();
  const toolError = new Future<unknown>();
  let task: voice.AgentTask<number> | undefined;

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
      hooks.record('task.enter');
    }
  }

  const caller = new voice.Agent({
    instructions: 'caller',
    tools: {
      ask_age: llm.tool({
        description: 'Ask the caller age.',
        execute: async () => {
          task = new AgeTask();
          try {
            return `age is ${await task.run()}`;
          } catch (error) {
            toolError.resolve(error);
            throw error;
          }
        },
      }),
    },
  });
  const replies = [{ input: 'how old am I', toolCalls: [{ name: 'ask_age', args: {} }] }];
  return { hooks, toolError, caller, replies, task: () => task, AgeTask };
}

describe('session close while an inline task is active', () => {
  it('fails the awaiting tool with a ToolError and session.close() resolves', async () => {
    const { hooks, toolError, caller, replies, task, AgeTask } = buildCaller();

    await withSession({ agent: caller, replies }, async (session) => {
      const closed = new Future<voice.CloseEvent>();
      session.on(voice.AgentSessionEventTypes.Close, (ev) => closed.resolve(ev));

      await userSays(session, 'how old am I');
      expect(session.currentAgent).toBeInstanceOf(AgeTask);
      expect(hooks.entries).toEqual(['task.enter']);
      expect(toolError.done).toBe(false);

      // Bounded by the test timeout below; no wall-clock waiting in the test itself.
      await expect(session.close()).resolves.toBeUndefined();

      // close() does not resolve before the awaiting tool has been unwound.
      expect(toolError.done).toBe(true);
      const error = await toolError.await;
      expect(error).toBeInstanceOf(llm.ToolError);
      expect((error as Error).message).toBe('AgentTask age_task is cancelled');
      expect(task()?.done).toBe(true);

      const ev = await closed.await;
      expect(ev.reason).toBe(voice.CloseReason.USER_INITIATED);
      expect(ev.error).toBeNull();
    });
  }, 10_000);

  it('lets a second close() (the finally in withSession) resolve too', async () => {
    const { caller, replies, toolError } = buildCaller();

    await withSession({ agent: caller, replies }, async (session) => {
      await userSays(session, 'how old am I');
      const first = session.close();
      const second = session.close();
      await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
      expect(await toolError.await).toBeInstanceOf(llm.ToolError);
    });
  }, 10_000);
});
