// Pins the upstream deadlock src/tasks/replaced.ts works around: `session.updateAgent()`
// while a tool awaits an inline AgentTask. Even once the task is completed (here from its
// onExit, as taskline's tasks do), upstream's run() closes the paused parent activity before
// returning, and that close waits for the tool awaiting run(): the tool never resumes. When
// upstream fixes this, this test fails and the workaround can go.
import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { flushAsync } from '../../src/testing/virtual-clock.js';
import { userSays, withSession } from './helpers.js';

class CompletesOnExit extends voice.AgentTask<string> {
  constructor() {
    super({ id: 'completes_on_exit', instructions: 'a task' });
  }
  override async onExit(): Promise<void> {
    if (!this.done) this.complete('replaced');
  }
}

describe('session.updateAgent while a tool awaits an inline AgentTask', () => {
  it('completes the task but never resumes the awaiting tool', async () => {
    const seen: string[] = [];
    let task: CompletesOnExit | undefined;
    const desk = new voice.Agent({
      instructions: 'desk',
      tools: {
        ask: llm.tool({
          description: 'Ask.',
          execute: async () => {
            task = new CompletesOnExit();
            seen.push(await task.run());
            return 'done';
          },
        }),
      },
    });
    const replies = [{ input: 'go', toolCalls: [{ name: 'ask', args: {} }] }];
    await withSession({ agent: desk, replies }, async (session) => {
      void userSays(session, 'go').catch(() => undefined);
      for (let i = 0; i < 50 && session.currentAgent !== task; i++) await flushAsync(1);
      expect(session.currentAgent).toBe(task);
      const other = new voice.Agent({ id: 'other', instructions: 'other' });
      session.updateAgent(other);
      for (let i = 0; i < 200 && !(task?.done && session.currentAgent === other); i++) {
        await flushAsync(1);
      }
      expect(task?.done).toBe(true);
      expect(session.currentAgent).toBe(other);
      for (let i = 0; i < 200; i++) await flushAsync(1);
      expect(seen).toEqual([]);
    });
  }, 20_000);
});
