// A TaskManager's own spans and metrics, in one process: a task nobody delivers (host-started,
// no call) ends its span with `delivery.via = none`, the sub-agent's model calls nest under it,
// and a provider installed after the manager was made still gets the spans of later tasks.
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { defineSubAgent } from '../../src/delegation/subagent.js';
import { ATTR, METRIC, SPAN } from '../../src/observability/index.js';
import { researcher, researchModel } from '../delegation/helpers.js';
import { installTelemetry, type TestTelemetry } from './otel.js';

let telemetry: TestTelemetry | undefined;
afterEach(async () => {
  await telemetry?.close();
  telemetry = undefined;
});

function newManager(): TaskManager {
  const manager: TaskManager = new TaskManager({
    namespace: 'otel-local',
    subagents: [researcher(() => manager, { delayMs: 0 })],
    llm: researchModel('Thirty days.'),
  });
  return manager;
}

describe('delegation spans in one process', () => {
  it('a task nobody delivers ends its span as delivered "none", its model calls inside', async () => {
    telemetry = installTelemetry();
    const manager = newManager();
    const task = manager.start({ subagentType: 'researcher', description: 'Refund window' });
    expect((await manager.wait(task.id)).status).toBe('completed');
    await manager.close();
    const span = telemetry.find(SPAN.delegation, ATTR.delegationTask, task.id);
    expect(span.attributes[ATTR.deliveryVia]).toBe('none');
    expect(span.attributes[ATTR.delegationStatus]).toBe('completed');
    const inside = telemetry
      .spans()
      .filter((s) => s !== span && telemetry!.ancestors(s).includes(SPAN.delegation));
    expect(inside.length).toBeGreaterThan(0);
    expect(await telemetry.metric(METRIC.delegationOutcomes, { status: 'completed' })).toBe(1);
  });

  it('tracing turned on after the manager was made covers the tasks started after it', async () => {
    const manager = newManager();
    const dark = manager.start({ subagentType: 'researcher', description: 'Before' });
    expect((await manager.wait(dark.id)).status).toBe('completed');
    telemetry = installTelemetry();
    const lit = manager.start({ subagentType: 'researcher', description: 'After' });
    expect((await manager.wait(lit.id)).status).toBe('completed');
    await manager.close();
    expect(telemetry.named(SPAN.delegation).map((s) => s.attributes[ATTR.delegationTask])).toEqual([
      lit.id,
    ]);
  });
});

describe('tracing turned on while a task runs', () => {
  it('gives that task no span (it started dark), only its outcome metric', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = defineSubAgent({
      name: 'slow',
      description: 'Waits for the test.',
      instructions: 'Wait.',
      run: async () => {
        await gate;
        return { output: 'Done late.' };
      },
    });
    const manager = new TaskManager({ subagents: [slow], generalPurpose: false });
    const task = manager.start({ subagentType: 'slow', description: 'Started dark' });
    telemetry = installTelemetry();
    release();
    expect((await manager.wait(task.id)).status).toBe('completed');
    await manager.close();
    expect(telemetry.named(SPAN.delegation)).toEqual([]);
    expect(await telemetry.metric(METRIC.delegationOutcomes, { status: 'completed' })).toBe(1);
  });
});
