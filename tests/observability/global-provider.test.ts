// An app that only registers a global provider (no telemetry.setTracerProvider): upstream's
// tracer and taskline's both reach it, and taskline's span nests under upstream's.
import { telemetry } from '@livekit/agents';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { SPAN, withSpan } from '../../src/observability/index.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

describe('global tracer provider only', () => {
  it("taskline's span is a child of upstream's, in one trace", async () => {
    await telemetry.tracer.startActiveSpan(() => withSpan(SPAN.task, {}, async () => 1), {
      name: 'agent_turn',
    });
    const [task, turn] = exporter.getFinishedSpans();
    expect(turn?.name).toBe('agent_turn');
    expect(task?.name).toBe(SPAN.task);
    expect(task?.parentSpanContext?.spanId).toBe(turn?.spanContext().spanId);
    expect(task?.spanContext().traceId).toBe(turn?.spanContext().traceId);
  });
});
