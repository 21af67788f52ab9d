// The survey flow with tracing on: one flow span, a span per step visit with the step's
// capture task inside it, a span per checkpoint write, step-duration and parser metrics.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/memory.js';
import { ATTR, METRIC, SPAN } from '../../src/observability/index.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from '../flows/helpers.js';
import { installTelemetry, type TestTelemetry } from './otel.js';

let otel: TestTelemetry;
let caller: SimulatedCaller | undefined;
beforeEach(() => {
  otel = installTelemetry();
});
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  await otel.close();
});

describe('survey flow traced', () => {
  it('flow → steps → tasks, with checkpoint writes, in one trace', async () => {
    const s = await startSurvey({ checkpoints: new MemoryCheckpointStore(), callId: 'call-7' });
    caller = s.caller;
    await caller.say('yes, sure');
    await caller.say('three');
    await caller.say('the wait was far too long');
    expect(s.agent.result?.status).toBe('completed');
    await caller.close();
    caller = undefined;

    const [flow, ...more] = otel.named(SPAN.flow);
    expect(more).toEqual([]);
    expect(flow?.attributes).toMatchObject({
      [ATTR.flowName]: 'survey',
      [ATTR.callId]: 'call-7',
      [ATTR.flowStatus]: 'completed',
    });
    const flowId = flow!.spanContext().spanId;
    const steps = otel.named(SPAN.step);
    expect(steps.map((s) => s.attributes[ATTR.stepId])).toEqual([
      'consent',
      'score',
      'reason',
      'thanks',
    ]);
    for (const step of steps) expect(step.parentSpanContext?.spanId).toBe(flowId);
    expect(otel.find(SPAN.step, ATTR.stepId, 'score').attributes).toMatchObject({
      [ATTR.status]: 'ok',
      [ATTR.attempts]: 1,
      [ATTR.stepVisit]: 1,
    });
    // Each capture task runs inside its step's span.
    for (const name of ['consent', 'score', 'reason']) {
      const task = otel.find(SPAN.task, ATTR.taskName, name);
      const step = otel.find(SPAN.step, ATTR.stepId, name);
      expect(task.parentSpanContext?.spanId).toBe(step.spanContext().spanId);
      expect(task.attributes[ATTR.status]).toBe('ok');
    }
    expect(otel.find(SPAN.task, ATTR.taskName, 'score').attributes[ATTR.modality]).toBe('speech');
    // The claim, one write per step, and the final write.
    const checkpoints = otel.named(SPAN.checkpoint);
    expect(checkpoints).toHaveLength(6);
    for (const c of checkpoints) {
      expect(c.parentSpanContext?.spanId).toBe(flowId);
      expect(c.attributes[ATTR.checkpointWritten]).toBe(true);
    }
    expect(checkpoints.map((c) => c.attributes[ATTR.checkpointVersion])).toEqual([
      1, 2, 3, 4, 5, 6,
    ]);
    expect(new Set(otel.spans().map((s) => s.spanContext().traceId)).size).toBe(1);

    for (const step of ['consent', 'score', 'reason', 'thanks']) {
      expect((await otel.histogram(METRIC.stepDuration, { flow: 'survey', step })).count).toBe(1);
    }
    expect(await otel.metric(METRIC.flowResults, { flow: 'survey', status: 'completed' })).toBe(1);
    // Every answer was read by a parser: no model call was needed.
    expect(s.model.requests).toHaveLength(0);
    expect(await otel.metric(METRIC.modelCallsAvoided, { task: 'score' })).toBe(1);
    expect(await otel.metric(METRIC.modelCallsAvoided)).toBeGreaterThanOrEqual(3);
  });
});
