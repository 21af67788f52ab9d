// Pins what taskline's delivery floor (src/delegation/floor.ts) relies on when an inline task
// hands back: upstream announces the handoff (an `agent_handoff` conversation item) while the
// parent's activity is still paused, so `session.say()` there throws; the parent's activity
// accepts speech once `Agent._agentActivity.schedulingPaused` turns false, which no event
// announces. When upstream adds such an event, `activityRunning` can listen to it instead.
import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { activityRunning } from '../../src/delegation/floor.js';
import { withSession } from './helpers.js';

/** Waits (event-loop rounds, bounded) until `check` holds. */
async function whenTrue(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise<void>((r) => setImmediate(r));
}

class Ask extends voice.AgentTask<string> {
  constructor() {
    super({
      instructions: 'ask',
      tools: {
        answer: llm.tool({
          description: 'Record the answer.',
          execute: async () => {
            this.complete('done');
          },
        }),
      },
    });
  }
}

describe('handing back from an inline task', () => {
  it('announces the handoff before the parent runs again; schedulingPaused tells when it does', async () => {
    const seen: Array<{ running: boolean; sayError?: string }> = [];
    let parent!: voice.Agent;
    parent = new voice.Agent({
      instructions: 'parent',
      tools: {
        ask: llm.tool({
          description: 'Ask.',
          execute: async () => new Ask().run(),
        }),
      },
    });
    const replies = [
      { input: 'start', toolCalls: [{ name: 'ask', args: {} }] },
      { input: 'go', toolCalls: [{ name: 'answer', args: {} }] },
    ];
    await withSession({ agent: parent, replies }, async (session) => {
      let resumed: Promise<boolean> | undefined;
      let askStarted!: () => void;
      const asking = new Promise<void>((r) => {
        askStarted = r;
      });
      session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (ev) => {
        if (ev.item.type !== 'agent_handoff') return;
        if (ev.item.newAgentId !== parent.id) {
          askStarted();
          return;
        }
        if (ev.item.oldAgentId && !resumed) {
          const entry: { running: boolean; sayError?: string } = {
            running: activityRunning(parent),
          };
          try {
            session.say('too early');
          } catch (error) {
            entry.sayError = (error as Error).message;
          }
          seen.push(entry);
          resumed = (async () => {
            for (let i = 0; i < 50; i++) {
              await new Promise<void>((r) => setImmediate(r));
              if (activityRunning(parent)) return true;
            }
            return false;
          })();
        }
      });
      session.generateReply({ userInput: 'start' });
      await asking;
      await whenTrue(() => activityRunning(session.currentAgent));
      await session.generateReply({ userInput: 'go' }).waitForPlayout();
      await whenTrue(() => resumed !== undefined);
      expect(await resumed).toBe(true);
    });
    expect(seen[0]?.running).toBe(false);
    expect(seen[0]?.sayError).toMatch(/cannot use say\(\)/);
  });
});
