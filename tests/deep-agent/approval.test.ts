/**
 * Spoken approval of sensitive tools: the caller approves, rejects or changes an argument
 * ("no, make it 50 dollars") through a typed yes/no task, on a call with the real openai
 * plugin; a supervisor approves through a callback or a delegation record with a bounded
 * wait; sub-agents inherit the policy; a rejection reaches the model as a tool result.
 */
import { llm } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { createDeepAgent } from '../../src/deep-agent/agent.js';
import { parseApproval } from '../../src/deep-agent/approval/caller.js';
import { ApprovalGate } from '../../src/deep-agent/approval/guard.js';
import { APPROVAL_STAGE } from '../../src/deep-agent/approval/supervisor.js';
import type { ApprovalRequest } from '../../src/deep-agent/approval/types.js';
import { createHeadlessDeepAgent } from '../../src/deep-agent/headless.js';
import { MemoryDelegationStore } from '../../src/delegation/memory-store.js';
import { runHeadless } from '../../src/delegation/runner.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';
import { callTool } from '../tools/tool-helpers.js';
import { startDeepCall, toolResults } from './helpers.js';

/** A bank with one sensitive tool; `transfers` records what really ran. */
function bank() {
  const transfers: Array<{ amount: number; to_account: string }> = [];
  const transfer_funds = llm.tool({
    description: "Move money between the caller's accounts.",
    parameters: z.object({
      amount: z.number().positive().max(10_000).describe('Dollars'),
      to_account: z.enum(['savings', 'checking']),
    }),
    execute: async (args) => {
      transfers.push(args);
      return `Transferred ${args.amount} dollars to ${args.to_account}.`;
    },
  });
  return { transfers, tools: { transfer_funds } };
}

const describeTransfer = (a: Record<string, unknown>) =>
  `transfer ${a.amount} dollars to ${a.to_account}`;

describe('parseApproval (no model)', () => {
  const args = { amount: 500, to_account: 'savings' };
  it.each([
    ['yes', { decision: 'approve' }],
    ['yes go ahead', { decision: 'approve' }],
    ['sure', { decision: 'approve' }],
    ['no', { decision: 'reject', reason: 'no' }],
    ['no thanks', { decision: 'reject', reason: 'no thanks' }],
    ['no, make it 50 dollars', { decision: 'change', changes: { amount: 50 } }],
    ['no, only fifty', { decision: 'change', changes: { amount: 50 } }],
    ['make it 75 dollars', { decision: 'change', changes: { amount: 75 } }],
  ])('%s', (text, expected) => {
    const r = parseApproval(text, args);
    expect(r.kind).toBe('match');
    expect(r.kind === 'match' ? r.value : undefined).toMatchObject(expected);
  });

  it.each(['no, send it to checking', 'nope, send 20 and 30', 'hmm what was that', 'about 50'])(
    'leaves %s to the model',
    (text) => {
      expect(parseApproval(text, args).kind).toBe('nomatch');
    },
  );

  it('does not guess which of several numbers a change means', () => {
    expect(parseApproval('no, make it 50', { amount: 500, fee: 5 }).kind).toBe('nomatch');
  });
});

describe('the caller approves on the call (real openai plugin)', () => {
  const call = {
    toolCalls: [{ name: 'transfer_funds', args: { amount: 500, to_account: 'savings' } }],
  };

  it('changes an argument, hears the new action, approves; the tool runs with the change', async () => {
    const { transfers, tools } = bank();
    const agent = createDeepAgent({
      instructions: 'You are a bank assistant.',
      tools,
      approval: { tools: { transfer_funds: { describe: describeTransfer } } },
    });
    const decisions: string[] = [];
    agent.approvals?.on('decision', (e) => decisions.push(`${e.by}:${e.decision.decision}`));
    const { server, caller } = await startDeepCall(agent, [
      call,
      { content: 'Done: 50 dollars moved.' },
    ]);
    await caller.say('Move 500 dollars to savings');
    expect(caller.agentLines.at(-1)).toBe(
      "I'm about to transfer 500 dollars to savings. Shall I go ahead?",
    );
    expect(transfers).toEqual([]);
    await caller.say('no, make it 50 dollars');
    expect(caller.agentLines.at(-1)).toBe('OK: transfer 50 dollars to savings. Shall I go ahead?');
    await caller.say('yes please');
    expect(transfers).toEqual([{ amount: 50, to_account: 'savings' }]);
    expect(caller.agentLines.at(-1)).toBe('Done: 50 dollars moved.');
    expect(decisions).toEqual(['caller:change']);
    // The parser understood the caller: the model was asked twice (the call, the answer).
    expect(server.requests).toHaveLength(2);
    expect(toolResults(server.requests[1]).transfer_funds).toEqual([
      JSON.stringify(
        '(Approved with changes by the caller: {"amount":50}.) Transferred 50 dollars to savings.',
      ),
    ]);
    expect(server.failures).toEqual([]);
  });

  it('gives the model a rejection it can act on when the caller says no', async () => {
    const { transfers, tools } = bank();
    const agent = createDeepAgent({
      instructions: 'You are a bank assistant.',
      tools,
      approval: { tools: ['transfer_funds'] },
    });
    const { server, caller } = await startDeepCall(agent, [
      call,
      { content: 'All right, I did not move anything. What would you like instead?' },
    ]);
    await caller.say('Move 500 dollars to savings');
    expect(caller.agentLines.at(-1)).toBe(
      "I'm about to transfer funds (amount: 500, to account: savings). Shall I go ahead?",
    );
    await caller.say('no, not now');
    expect(transfers).toEqual([]);
    const result = toolResults(server.requests[1]).transfer_funds?.[0] ?? '';
    expect(result).toContain('rejected: The caller did not approve transfer funds (amount: 500');
    expect(result).toContain('Nothing was done.');
    expect(caller.agentLines.at(-1)).toBe(
      'All right, I did not move anything. What would you like instead?',
    );
    // The model was told, in the prompt, which tools need approval.
    expect(server.requests[0]?.messages[0]?.content).toContain('transfer_funds need approval');
  });
});

describe('a supervisor approves', () => {
  const request = { amount: 500, to_account: 'savings' };

  it('through a callback, with changes, and is not waited on past the limit', async () => {
    const { transfers, tools } = bank();
    const clock = new VirtualClock();
    const seen: ApprovalRequest[] = [];
    const gate = new ApprovalGate(
      {
        tools: ['transfer_funds'],
        caller: false,
        timeoutMs: 30_000,
        supervisor: async (req) => {
          seen.push(req);
          return { decision: 'change', changes: { amount: 200 } };
        },
      },
      { clock },
    );
    const [guarded] = gate.guard(tools);
    expect(await callTool(guarded!, request)).toBe(
      '(Approved with changes by the supervisor: {"amount":200}.) Transferred 200 dollars to savings.',
    );
    expect(seen[0]).toMatchObject({ tool: 'transfer_funds', args: request, origin: 'voice' });

    const slow = new ApprovalGate(
      {
        tools: ['transfer_funds'],
        caller: false,
        timeoutMs: 30_000,
        supervisor: () => new Promise(() => {}),
      },
      { clock },
    );
    const pending = callTool(slow.guard(tools)[0]!, request);
    await flushAsync();
    await clock.advance(30_000);
    expect(await pending).toContain('rejected: The supervisor did not approve');
    expect(await pending).toContain('no decision from the supervisor within 30 s');
    expect(transfers).toEqual([{ amount: 200, to_account: 'savings' }]);
  });

  it('through a delegation record answered over the records API, or expired', async () => {
    const { transfers, tools } = bank();
    const clock = new VirtualClock();
    const store = new MemoryDelegationStore();
    const gate = new ApprovalGate(
      {
        tools: ['transfer_funds'],
        caller: false,
        timeoutMs: 60_000,
        delegations: { store, pollMs: 1_000 },
      },
      { clock },
    );
    const guarded = gate.guard(tools)[0]!;
    const approved = callTool(guarded, request, { toolCallId: 'call_a' });
    await flushAsync();
    const [record] = (await store.query({ delegation_type: 'approval' })).items;
    expect(record).toMatchObject({
      target_subject_id: 'supervisor',
      status: { approval: { state: 'pending' } },
      sub_task_data: { tool: 'transfer_funds', args: request },
    });
    // The supervisor answers (what PUT /delegations/:id/status does).
    await store.setStage(record!.delegation_id, APPROVAL_STAGE, {
      state: 'done',
      delegation_result: { decision: 'approve' },
    });
    await clock.advance(1_000);
    expect(await approved).toBe('Transferred 500 dollars to savings.');

    const expired = callTool(guarded, request, { toolCallId: 'call_b' });
    await flushAsync();
    await clock.advance(61_000);
    expect(await expired).toContain('no decision from the supervisor within 60 s');
    const last = (await store.query({ task_id: 'call_b' })).items[0];
    expect(last?.status.approval?.state).toBe('expired');
    expect(transfers).toHaveLength(1);
  });
});

describe('sub-agents inherit the policy', () => {
  it('refuses a guarded tool in a sub-agent that cannot ask the caller, with a result it can report', async () => {
    const { transfers, tools } = bank();
    const voiceAgent = createDeepAgent({
      instructions: 'You are a bank assistant.',
      tools,
      approval: { tools: ['transfer_funds'] },
    });
    const sub = await createHeadlessDeepAgent({
      name: 'payments',
      description: 'Does payments.',
      instructions: 'You make payments.',
      tools,
      approvals: voiceAgent.approvals!,
    });
    const model = new ScriptedLLM({
      respond: (req) =>
        req.lastToolOutput
          ? { say: `Could not: ${req.lastToolOutput.output}` }
          : {
              toolCalls: [{ name: 'transfer_funds', args: { amount: 10, to_account: 'checking' } }],
            },
    });
    const result = await runHeadless({
      model,
      instructions: sub.spec.instructions,
      tools: typeof sub.spec.tools === 'function' ? undefined : sub.spec.tools,
      conversation: llm.ChatContext.empty(),
      prompt: 'Move 10 dollars to checking.',
      maxTurns: 3,
      signal: new AbortController().signal,
    });
    expect(transfers).toEqual([]);
    expect(result.output).toContain('rejected: The approval policy did not approve transfer funds');
    expect(result.output).toContain('a sub-agent cannot ask for');
    await sub.close();
  });
});
