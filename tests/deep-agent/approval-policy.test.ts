/**
 * An approval policy fails closed: a name that is not one of the agent's tools is refused at
 * set-up, guarding one workspace writer while another stays open is refused, and the
 * sub-agents a deep agent's TaskManager runs inherit its policy by default.
 */
import { llm } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { isTasklineError, type TasklineError } from '../../src/core/errors.js';
import { createDeepAgent } from '../../src/deep-agent/agent.js';
import { ApprovalGate } from '../../src/deep-agent/approval/guard.js';
import type { ApprovalRequest } from '../../src/deep-agent/approval/types.js';
import { createHeadlessDeepAgent } from '../../src/deep-agent/headless.js';
import { TaskManager } from '../../src/delegation/manager.js';
import { defineSubAgent } from '../../src/delegation/subagent.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { callTool } from '../tools/tool-helpers.js';

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
  return { charges, charge_room };
}

function setUpError(make: () => unknown): TasklineError {
  try {
    make();
  } catch (error) {
    if (isTasklineError(error)) return error;
    throw error;
  }
  throw new Error('expected a TasklineError at set-up');
}

describe('a policy naming a tool that does not exist is refused at set-up', () => {
  it.each([
    ['charge_rooms', 'did you mean "charge_room"?'],
    ['Charge_Room', 'did you mean "charge_room"?'],
    ['refund_room', 'refund_room'],
  ])('%j', (name, hint) => {
    const { charge_room } = hotel();
    const error = setUpError(() =>
      createDeepAgent({
        instructions: 'You are the concierge.',
        tools: { charge_room },
        approval: { tools: [name] },
      }),
    );
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toContain(hint);
    expect(error.message).toContain('nothing would be guarded');
    expect(error.details).toMatchObject({ unknown: [name] });
  });

  it.each([' charge_room', 'charge_room ', '', 'charge room'])('%j is not a tool name', (name) => {
    const error = setUpError(() => new ApprovalGate({ tools: [name] }));
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toContain('not a tool name');
  });

  it('names the near miss in a per-tool options object too', () => {
    const { charge_room } = hotel();
    const error = setUpError(() =>
      createDeepAgent({
        instructions: 'You are the concierge.',
        tools: { charge_room },
        approval: { tools: { chargeroom: { describe: () => 'charge' } } },
      }),
    );
    expect(error.message).toContain('"chargeroom" (did you mean "charge_room"?)');
  });
});

describe('guarding one workspace writer while another stays open is refused', () => {
  it('write_file guarded, edit_file and delete_file open', () => {
    const error = setUpError(() =>
      createDeepAgent({ instructions: 'You keep notes.', approval: { tools: ['write_file'] } }),
    );
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toContain('edit_file, delete_file can change the same files');
  });

  it('write_file guarded with execution on: execute and execute_python are named', () => {
    const error = setUpError(() =>
      createDeepAgent({
        instructions: 'You keep notes.',
        execution: true,
        approval: { tools: ['write_file', 'edit_file', 'delete_file'] },
      }),
    );
    expect(error.message).toContain('execute, execute_python can change the same files');
    expect(error.details).toMatchObject({ unguarded: ['execute', 'execute_python'] });
  });

  it('every writer guarded: accepted, and execute asks before it runs', async () => {
    const asked: ApprovalRequest[] = [];
    const agent = createDeepAgent({
      instructions: 'You keep notes.',
      execution: { python: false },
      approval: {
        tools: ['write_file', 'edit_file', 'delete_file', 'execute'],
        caller: false,
        supervisor: async (request) => {
          asked.push(request);
          return { decision: 'reject', reason: 'not now' };
        },
      },
    });
    const execute = agent.toolCtx.getFunctionTool('execute');
    expect(execute).toBeDefined();
    const out = await callTool(execute!, { command: 'echo hi > /notes.txt' });
    expect(String(out)).toContain('rejected: The supervisor did not approve execute');
    expect(asked.map((r) => r.tool)).toEqual(['execute']);
    expect(await agent.backend.stat('/notes.txt')).toBeUndefined();
    await agent.close();
  });
});

/** A model that calls charge_room once, then reports the tool's answer. */
function payer() {
  return new ScriptedLLM({
    respond: (req) =>
      req.lastToolOutput
        ? { say: `Result: ${req.lastToolOutput.output}` }
        : { toolCalls: [{ name: 'charge_room', args: { room: '1204', amount: 144 } }] },
  });
}

describe("sub-agents inherit the deep agent's policy by default", () => {
  it('a plain sub-agent with the guarded tool is refused without a supervisor', async () => {
    const { charges, charge_room } = hotel();
    const payments = defineSubAgent({
      name: 'payments',
      description: 'Charges rooms.',
      instructions: 'You charge rooms.',
      tools: { charge_room },
    });
    const manager = new TaskManager({
      subagents: [payments],
      generalPurpose: false,
      llm: payer(),
      clock: new VirtualClock(),
    });
    createDeepAgent({
      instructions: 'You are the concierge.',
      tools: { charge_room },
      delegation: manager,
      approval: { tools: ['charge_room'] },
    });
    const task = manager.start({ subagentType: 'payments', description: 'Charge 144 to 1204' });
    const result = await manager.wait(task.id);
    expect(charges).toEqual([]);
    expect(result.output).toContain('rejected: The approval policy did not approve charge room');
    await manager.close();
  });

  it('a headless deep agent built without approvals asks the supervisor', async () => {
    const { charges, charge_room } = hotel();
    const headless = await createHeadlessDeepAgent({
      name: 'payments',
      description: 'Charges rooms.',
      instructions: 'You charge rooms.',
      tools: { charge_room },
    });
    const manager = new TaskManager({
      subagents: [headless.spec],
      generalPurpose: false,
      llm: payer(),
      clock: new VirtualClock(),
    });
    const asked: ApprovalRequest[] = [];
    createDeepAgent({
      instructions: 'You are the concierge.',
      tools: { charge_room },
      delegation: manager,
      approval: {
        tools: ['charge_room'],
        supervisor: async (request) => {
          asked.push(request);
          return { decision: 'approve' };
        },
      },
    });
    const task = manager.start({ subagentType: 'payments', description: 'Charge 144 to 1204' });
    await manager.wait(task.id);
    expect(asked).toMatchObject([
      {
        tool: 'charge_room',
        args: { room: '1204', amount: 144 },
        origin: { subagent: 'payments' },
      },
    ]);
    expect(charges).toEqual([{ room: '1204', amount: 144 }]);
    await manager.close();
    await headless.close();
  });

  it('a tool already guarded by the gate is not guarded again (asked once, not twice)', async () => {
    const { charges, charge_room } = hotel();
    const asked: string[] = [];
    const gate = new ApprovalGate({
      tools: ['charge_room'],
      supervisor: async (request) => {
        asked.push(request.tool);
        return { decision: 'approve' };
      },
    });
    const origin = { subagent: 'payments' };
    const once = gate.guard({ charge_room }, origin, { partial: true });
    const twice = gate.guard(once, origin, { partial: true });
    expect(twice[0]).toBe(once[0]);
    await callTool(twice[0]!, { room: '1204', amount: 144 });
    expect(asked).toEqual(['charge_room']);
    expect(charges).toHaveLength(1);
  });

  it('subagents: false leaves sub-agents unguarded (and says so by refusing open writers)', async () => {
    const { charges, charge_room } = hotel();
    const payments = defineSubAgent({
      name: 'payments',
      description: 'Charges rooms.',
      instructions: 'You charge rooms.',
      tools: { charge_room },
    });
    const manager = new TaskManager({
      subagents: [payments],
      generalPurpose: false,
      llm: payer(),
      clock: new VirtualClock(),
    });
    createDeepAgent({
      instructions: 'You are the concierge.',
      tools: { charge_room },
      delegation: manager,
      approval: { tools: ['charge_room'], subagents: false },
    });
    const task = manager.start({ subagentType: 'payments', description: 'Charge 144 to 1204' });
    await manager.wait(task.id);
    expect(charges).toEqual([{ room: '1204', amount: 144 }]);
    await manager.close();

    const error = setUpError(() =>
      createDeepAgent({
        instructions: 'You keep notes.',
        delegation: { llm: payer() },
        approval: {
          tools: ['write_file', 'edit_file', 'delete_file'],
          subagents: false,
        },
      }),
    );
    expect(error.message).toContain('task can change the same files');
  });
});
