// W3C trace context written by hand matches the reference propagator of @opentelemetry/core,
// a malformed carrier is ignored, and the record field is additive.
import { context, defaultTextMapGetter, defaultTextMapSetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  contextFromCarrier,
  parseCarrier,
  TRACE_CONTEXT_FIELD,
  traceCarrier,
  withSpan,
  withTraceContext,
} from '../../src/observability/index.js';
import { recordTraceHeaders } from '../../src/observability/propagation.js';
import { installTelemetry, type TestTelemetry } from './otel.js';

let otel: TestTelemetry;
beforeEach(() => {
  otel = installTelemetry();
});
afterEach(async () => {
  await otel.close();
});

const reference = new W3CTraceContextPropagator();

describe('trace context propagation', () => {
  it('writes the same traceparent as the W3C propagator, and reads it back', async () => {
    await withSpan('parent', {}, async (span) => {
      const ours = traceCarrier();
      const theirs: Record<string, string> = {};
      reference.inject(context.active(), theirs, defaultTextMapSetter);
      expect(ours).toEqual({ traceparent: theirs.traceparent });
      const sc = parseCarrier(ours);
      expect(sc).toMatchObject({
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        isRemote: true,
      });
      const viaReference = trace.getSpanContext(
        reference.extract(context.active(), theirs, defaultTextMapGetter),
      );
      expect(sc?.traceFlags).toBe(viaReference?.traceFlags);
    });
  });

  it('carries tracestate through', () => {
    const ctx = contextFromCarrier({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=abc,other=1',
    });
    expect(traceCarrier(ctx)).toEqual({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=abc,other=1',
    });
  });

  it('ignores malformed or missing carriers (no parent rather than a wrong one)', () => {
    for (const bad of [
      undefined,
      'x',
      {},
      { traceparent: 'nope' },
      { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' },
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01' },
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01' },
    ]) {
      expect(parseCarrier(bad)).toBeUndefined();
      expect(recordTraceHeaders({ [TRACE_CONTEXT_FIELD]: bad })).toBeUndefined();
    }
  });

  it('adds trace_context to sub_task_data only inside a span, never overwriting one', async () => {
    expect(withTraceContext({ prompt: 'p' })).toEqual({ prompt: 'p' });
    await withSpan('parent', {}, async () => {
      const data = withTraceContext({ prompt: 'p' });
      expect(data).toMatchObject({ prompt: 'p', [TRACE_CONTEXT_FIELD]: traceCarrier() });
      const own = { [TRACE_CONTEXT_FIELD]: { traceparent: 'kept' } };
      expect(withTraceContext(own)).toBe(own);
    });
  });
});
