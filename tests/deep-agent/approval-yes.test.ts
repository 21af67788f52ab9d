/**
 * A spoken approval needs a clear yes: a yes the caller takes back, holds or makes
 * conditional ("yes, cancel that", "yes, hold on", "yes if it is free") never runs the tool —
 * not through the parser, and not through a model that reads it as agreement.
 */
import { llm } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { createDeepAgent } from '../../src/deep-agent/agent.js';
import { isClearYes, parseApproval } from '../../src/deep-agent/approval/caller.js';
import { startDeepCall, toolResults } from './helpers.js';

const args = { room: '1204', amount: 144 };
const action = 'charge 144.00 dollars to room 1204';

/** Replies that start with a yes and then take it back, hold it, condition or negate it. */
const NOT_A_YES = [
  // retractions
  'yes, cancel that',
  'yes stop',
  'yeah scrap that',
  'yes forget it',
  'yep never mind',
  'sure, call it off',
  'yes, abort',
  'okay, undo that',
  // holds
  'yes, hold on',
  'yeah hang on a second',
  'yes one moment',
  'sure, let me check with my wife first',
  'yes, in a minute',
  'okay but not yet',
  'yes tomorrow',
  // conditions
  'yes if it is free',
  'yeah as long as it is under a hundred',
  'yes provided the spa is included',
  'sure, unless there is a fee',
  'yes only if it is the discounted rate',
  // negations and contrasts
  "yes, don't",
  'yeah no',
  'yes but not the whole amount',
  'yes, maybe',
  // contradictions and recogniser slips ("no" heard as "oh")
  'no wait yes',
  'oh wait yes',
  'yes oh',
  // a question back
  'yes? what is that for',
];

describe('parseApproval: only a clear yes approves', () => {
  it.each(NOT_A_YES)('%j is neither an approval nor a rejection', (text) => {
    expect(parseApproval(text, args, action)).toEqual({ kind: 'nomatch' });
    expect(isClearYes(text, action)).toBe(false);
  });

  it.each([
    'yes',
    'yes please',
    'yeah go ahead',
    'sure, go for it',
    'yes I do',
    'oh yes',
    'yes, charge it',
    'yes please charge room 1204',
  ])('%j approves', (text) => {
    expect(parseApproval(text, args, action)).toEqual({
      kind: 'match',
      value: { decision: 'approve' },
    });
    expect(isClearYes(text, action)).toBe(true);
  });

  it.each(['no', 'no thanks', 'no, cancel it', "no, don't charge it", 'nope, not now'])(
    '%j rejects',
    (text) => {
      expect(parseApproval(text, args, action)).toMatchObject({
        kind: 'match',
        value: { decision: 'reject' },
      });
    },
  );

  it('a repeated action word that qualifies stays a qualifier', () => {
    // "stop" is part of the action, yet "yes stop" still does not approve stopping blindly.
    expect(parseApproval('yes stop', {}, 'stop the subscription')).toEqual({ kind: 'nomatch' });
  });
});

function hotel() {
  const charges: Array<{ room: string; amount: number }> = [];
  const charge_room = llm.tool({
    description: "Charge an amount to the guest's room.",
    parameters: z.object({ room: z.string(), amount: z.number().positive() }),
    execute: async (a) => {
      charges.push(a);
      return `Charged ${a.amount} dollars to room ${a.room}.`;
    },
  });
  const agent = createDeepAgent({
    instructions: 'You are the concierge.',
    tools: { charge_room },
    approval: {
      tools: {
        charge_room: {
          describe: (a) => `charge ${Number(a.amount).toFixed(2)} dollars to room ${a.room}`,
        },
      },
    },
  });
  const decisions: string[] = [];
  agent.approvals?.on('decision', (e) => decisions.push(`${e.by}:${e.decision.decision}`));
  return { agent, charges, decisions };
}

const chargeCall = { toolCalls: [{ name: 'charge_room', args }] };

describe('on a call (real openai plugin)', () => {
  it('"yes, cancel that" does not charge, even when the model submits approve', async () => {
    const { agent, charges, decisions } = hotel();
    const { server, caller } = await startDeepCall(agent, [
      chargeCall,
      // A model that hears agreement in "yes, cancel that".
      { toolCalls: [{ name: 'submit', args: { decision: 'approve' } }] },
      { content: 'Sorry, shall I go ahead? Please say yes or no.' },
      { toolCalls: [{ name: 'submit', args: { decision: 'reject', reason: 'caller said no' } }] },
      { content: 'All right, nothing was charged.' },
    ]);
    await caller.say('Put 144 on room 1204 please');
    expect(caller.agentLines.at(-1)).toBe(
      "I'm about to charge 144.00 dollars to room 1204. Shall I go ahead?",
    );
    await caller.say('yes, cancel that');
    expect(charges).toEqual([]);
    // The model was told why its approve was refused.
    const refusal = toolResults(server.requests[2]).submit?.[0] ?? '';
    expect(refusal).toContain('the caller has not clearly said yes');
    expect(refusal).toContain('yes, cancel that');
    expect(caller.agentLines.at(-1)).toBe('Sorry, shall I go ahead? Please say yes or no.');
    await caller.say('no');
    expect(charges).toEqual([]);
    expect(decisions).toEqual(['caller:reject']);
    expect(caller.agentLines.at(-1)).toBe('All right, nothing was charged.');
    expect(server.failures).toEqual([]);
  });

  it('after the model has spoken, a plain yes goes through the model and then charges', async () => {
    const { agent, charges, decisions } = hotel();
    const { server, caller } = await startDeepCall(agent, [
      chargeCall,
      { content: 'No problem. Shall I go ahead with the charge? Please say yes or no.' },
      { toolCalls: [{ name: 'submit', args: { decision: 'approve' } }] },
      { content: 'Done: 144 dollars on room 1204.' },
    ]);
    await caller.say('Put 144 on room 1204 please');
    await caller.say('yes, hold on');
    expect(charges).toEqual([]);
    expect(caller.agentLines.at(-1)).toBe(
      'No problem. Shall I go ahead with the charge? Please say yes or no.',
    );
    await caller.say('yes');
    expect(charges).toEqual([{ room: '1204', amount: 144 }]);
    expect(decisions).toEqual(['caller:approve']);
    // The yes went to the model, which had asked the question it answers.
    expect(server.requests).toHaveLength(4);
  });
});
