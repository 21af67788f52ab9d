// Pins close/start handoffs: a tool returning `llm.handoff({ agent })` closes the old activity
// and starts the new agent; a tool returning a bare Agent is NOT a handoff.
import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { activityOf, HookLog, labels, userSays, withSession } from './helpers.js';

function buildAgents(returnValue: 'handoff' | 'bare') {
  const hooks = new HookLog();

  class Billing extends voice.Agent {
    constructor() {
      super({ instructions: 'billing' });
    }
    override async onEnter(): Promise<void> {
      hooks.record('billing.enter');
    }
    override async onExit(): Promise<void> {
      hooks.record('billing.exit');
    }
  }
  const billing = new Billing();

  class Frontdesk extends voice.Agent {
    constructor() {
      super({
        instructions: 'frontdesk',
        tools: {
          transfer: llm.tool({
            description: 'Transfer the caller to billing.',
            execute: async () =>
              returnValue === 'handoff'
                ? llm.handoff({ agent: billing, returns: 'transferring' })
                : billing,
          }),
        },
      });
    }
    override async onEnter(): Promise<void> {
      hooks.record('frontdesk.enter');
    }
    override async onExit(): Promise<void> {
      hooks.record('frontdesk.exit');
    }
  }
  const frontdesk = new Frontdesk();

  const replies = [{ input: 'billing please', toolCalls: [{ name: 'transfer', args: {} }] }];
  return { hooks, billing, frontdesk, Billing, replies };
}

describe('close/start handoff through llm.handoff({ agent })', () => {
  it('closes the old activity, runs old onExit then new onEnter, and makes the new agent current', async () => {
    const { hooks, billing, frontdesk, Billing, replies } = buildAgents('handoff');

    await withSession({ agent: frontdesk, replies }, async (session) => {
      const oldActivity = activityOf(frontdesk);
      expect(oldActivity).toBeDefined();

      const result = await userSays(session, 'billing please');

      expect(session.currentAgent).toBe(billing);
      expect(hooks.entries).toEqual(['frontdesk.enter', 'frontdesk.exit', 'billing.enter']);

      // The old activity is closed, not paused: it no longer schedules and the agent lost it.
      expect(oldActivity?.schedulingPaused).toBe(true);
      expect(activityOf(frontdesk)).toBeUndefined();
      expect(() => frontdesk.session).toThrow('Agent activity not found');
      expect(activityOf(billing)).toBeDefined();

      // The run reports the tool output (`returns`, JSON-encoded) and the handoff.
      result.expect.containsFunctionCall({ name: 'transfer' });
      result.expect.containsFunctionCallOutput({ output: '"transferring"', isError: false });
      result.expect.containsAgentHandoff({ newAgentType: Billing });
    });
  });

  it("gives the new agent only the chatCtx passed to its constructor, not the old agent's history", async () => {
    const { billing, frontdesk, replies } = buildAgents('handoff');

    await withSession({ agent: frontdesk, replies }, async (session) => {
      await userSays(session, 'billing please');

      expect(session.currentAgent).toBe(billing);
      expect(labels(frontdesk.chatCtx.items)).toContain('user: billing please');
      expect(labels(billing.chatCtx.items)).not.toContain('user: billing please');
      // The session-wide history still records everything, including the handoff.
      expect(labels(session.history.items)).toEqual(
        expect.arrayContaining(['user: billing please', 'handoff frontdesk -> billing']),
      );
    });
  });

  it('does NOT hand off when a tool returns a bare Agent; the agent is JSON-dumped into the tool output', async () => {
    const { hooks, frontdesk, replies } = buildAgents('bare');

    await withSession({ agent: frontdesk, replies }, async (session) => {
      const activity = activityOf(frontdesk);
      const result = await userSays(session, 'billing please');

      expect(session.currentAgent).toBe(frontdesk);
      expect(activityOf(frontdesk)).toBe(activity);
      expect(activity?.schedulingPaused).toBe(false);
      expect(hooks.entries).toEqual(['frontdesk.enter']);
      expect(result.events.some((e) => e.type === 'agent_handoff')).toBe(false);

      const output = result.events.find((e) => e.type === 'function_call_output');
      expect(output?.type).toBe('function_call_output');
      if (output?.type !== 'function_call_output') return;
      expect(output.item.isError).toBe(false);
      const dumped: unknown = JSON.parse(output.item.output);
      expect(dumped).toMatchObject({ _id: 'billing', _instructions: 'billing' });
    });
  });
});
