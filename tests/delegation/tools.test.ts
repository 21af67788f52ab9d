// What the model is given: tool names, parameters and descriptions that teach it when to
// delegate, how to brief, and not to poll; task_status never blocks.
import { llm } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { specialistFromTask } from '../../src/delegation/subagent.js';
import { createDelegationTools } from '../../src/delegation/task-tools.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { VirtualClock } from '../../src/testing/index.js';
import { Lookups, researcher, researchModel } from './helpers.js';

let manager: TaskManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

function schemaOf(tool: { parameters: unknown }): {
  properties: Record<string, { enum?: string[] }>;
  required: string[];
} {
  return llm.oaiParams(tool.parameters) as unknown as {
    properties: Record<string, { enum?: string[] }>;
    required: string[];
  };
}

describe('delegation tools', () => {
  it('task lists the sub-agents, marks voice specialists, and says not to poll', () => {
    const clock = new VirtualClock();
    const m: TaskManager = new TaskManager({
      clock,
      subagents: [
        researcher(() => m),
        specialistFromTask(yesNo({ question: 'Premium?' }), {
          name: 'plan_picker',
          description: 'Asks about premium.',
        }),
      ],
      llm: researchModel('x'),
    });
    manager = m;
    const tools = createDelegationTools(m);
    expect(Object.keys(tools)).toEqual(['task', 'task_status', 'task_cancel']);
    const text = tools.task.description;
    expect(text).toContain('- general-purpose:');
    expect(text).toContain('- researcher: Looks things up in the document store.');
    expect(text).toContain('- plan_picker [voice: talks to the caller]: Asks about premium.');
    expect(text).toContain('Never poll with task_status');
    expect(text).toContain('knows nothing about this call');
    const schema = schemaOf(tools.task);
    expect(Object.keys(schema.properties)).toEqual([
      'subagent_type',
      'description',
      'prompt',
      'run_in_background',
      'task_id',
      'model',
    ]);
    expect(schema.properties.subagent_type?.enum).toEqual([
      'general-purpose',
      'researcher',
      'plan_picker',
    ]);
    expect(tools.task_status.description).toContain('without waiting');
  });

  it("keeps the contract's model parameter, saying whether choosing a model is allowed", () => {
    const on = new TaskManager({
      llm: researchModel('x'),
      allowModelOverride: true,
      models: { fast: researchModel('y') },
    });
    const off = new TaskManager({ llm: researchModel('x') });
    const describe = (m: TaskManager) =>
      (schemaOf(createDelegationTools(m).task).properties.model as { description?: string })
        ?.description;
    expect(describe(on)).toContain('instead of its default');
    expect(describe(off)).toContain('Not available here');
    void off.close();
    manager = on;
  });

  it('task_status answers at once while a task runs, and lists every task', async () => {
    const clock = new VirtualClock();
    const lookups = new Lookups();
    const m: TaskManager = new TaskManager({
      clock,
      subagents: [researcher(() => m, { delayMs: 10_000, lookups })],
      llm: researchModel('Done.'),
    });
    manager = m;
    m.start({ subagentType: 'researcher', description: 'Refund window' });
    await lookups.reached(1);
    await clock.advance(3_000);
    expect(m.statusText(undefined, {})).toBe('t1 · researcher · "Refund window" · running for 3 s');
    expect(m.statusText('t1', {})).toContain('no need to check again');
    expect(() => m.statusText('t7', {})).toThrow(/not_found/);
    await clock.advance(7_000);
    await m.wait('t1');
    expect(m.statusText('t1', {})).toBe('t1 · researcher · "Refund window" · completed: Done.');
  });
});
