// Pins AgentTask misuse errors: complete() twice, run() twice, run() outside a tool/onEnter.
import { Future, llm, Task, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { userSays, withSession } from './helpers.js';

class AgeTask extends voice.AgentTask<number> {
  /** Error thrown by a second complete() from inside the task's own tool, if any. */
  readonly secondComplete = new Future<unknown>();

  constructor(options: { completeTwice?: boolean } = {}) {
    super({
      instructions: 'age task',
      tools: {
        record_age: llm.tool({
          description: 'Record the caller age.',
          parameters: z.object({ years: z.number() }),
          execute: async ({ years }) => {
            this.complete(years);
            if (options.completeTwice) {
              try {
                this.complete(years + 1);
                this.secondComplete.resolve(undefined);
              } catch (error) {
                this.secondComplete.resolve(error);
              }
            }
          },
        }),
      },
    });
  }
}

const ageReplies = [
  { input: 'how old am I', toolCalls: [{ name: 'ask_age', args: {} }] },
  { input: 'I am 42', toolCalls: [{ name: 'record_age', args: { years: 42 } }] },
];

function callerWith(execute: () => Promise<string>): voice.Agent {
  return new voice.Agent({
    instructions: 'caller',
    tools: { ask_age: llm.tool({ description: 'Ask the caller age.', execute }) },
  });
}

async function settle(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('AgentTask.complete() twice', () => {
  it('throws "<TaskClass> is already done" on a task that never ran', () => {
    const task = new AgeTask();
    task.complete(1);

    expect(task.done).toBe(true);
    expect(() => task.complete(2)).toThrow('AgeTask is already done');
    expect(() => task.complete(new Error('late failure'))).toThrow('AgeTask is already done');
  });

  it('throws inside a running session and the first value still reaches the awaiting tool', async () => {
    const task = new AgeTask({ completeTwice: true });
    const received = new Future<number>();
    const caller = callerWith(async () => {
      const years = await task.run();
      received.resolve(years);
      return `age is ${years}`;
    });

    await withSession({ agent: caller, replies: ageReplies }, async (session) => {
      await userSays(session, 'how old am I');
      await userSays(session, 'I am 42');

      const secondError = await task.secondComplete.await;
      expect(secondError).toBeInstanceOf(Error);
      expect((secondError as Error).message).toBe('AgeTask is already done');
      expect(await received.await).toBe(42);
      expect(session.currentAgent).toBe(caller);
    });
  });
});

describe('AgentTask.run() twice', () => {
  it('rejects a second run() while the first is active, and again after it finished', async () => {
    const task = new AgeTask();
    const whileActive = new Future<unknown>();
    const afterDone = new Future<unknown>();
    const caller = callerWith(async () => {
      const first = task.run();
      whileActive.resolve(await settle(task.run()));
      const years = await first;
      afterDone.resolve(await settle(task.run()));
      return `age is ${years}`;
    });

    await withSession({ agent: caller, replies: ageReplies }, async (session) => {
      await userSays(session, 'how old am I');
      expect(session.currentAgent).toBe(task);
      await userSays(session, 'I am 42');

      for (const error of [await whileActive.await, await afterDone.await]) {
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toBe(
          'Task AgeTask has already started and cannot be awaited multiple times',
        );
      }
      // The first run() was unaffected by the rejected second one.
      expect(task.done).toBe(true);
      expect(session.currentAgent).toBe(caller);
    });
  });
});

describe('AgentTask.run() outside a tool or onEnter/onExit', () => {
  it('rejects when awaited outside any upstream Task', async () => {
    await expect(new AgeTask().run()).rejects.toThrow(
      'AgeTask must be executed inside a Task context',
    );
  });

  it('rejects inside an upstream Task that is not a tool call or onEnter/onExit', async () => {
    const task = new AgeTask();
    const outer = Task.from(async () => task.run());

    await expect(outer.result).rejects.toThrow(
      'AgeTask should only be awaited inside function tools or the onEnter/onExit methods of an Agent',
    );
  });

  it('consumes the task even when run() was rejected: a later run() says it already started', async () => {
    const task = new AgeTask();
    await expect(task.run()).rejects.toThrow('must be executed inside a Task context');

    await expect(task.run()).rejects.toThrow('has already started');
    expect(task.done).toBe(false);
  });
});
