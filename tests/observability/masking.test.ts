// Masked values never reach an exporter: taskline's own attributes pass through maskPII, and
// MaskingSpanProcessor masks every span (upstream's lk.pii.* attributes included).
import { context } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { clearSecrets, registerSecret } from '../../src/core/pii.js';
import { MaskingSpanProcessor, maskAttributes } from '../../src/observability/index.js';
import { spanStrings } from './otel.js';

afterEach(() => clearSecrets());

describe('masking in spans', () => {
  it('maskAttributes masks registered secrets and card numbers in strings and arrays', () => {
    registerSecret('4321');
    expect(
      maskAttributes({
        a: 'pin is 4321',
        b: ['card 4111 1111 1111 1111', 'ok'],
        n: 4321,
        t: true,
      }),
    ).toEqual({ a: 'pin is ****', b: ['card **** **** **** 1111', 'ok'], n: 4321, t: true });
  });

  it('MaskingSpanProcessor masks any span before every exporter, whatever the order', () => {
    registerSecret('987654');
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      // the exporter first: onEnding runs on all processors before any onEnd
      spanProcessors: [new SimpleSpanProcessor(exporter), new MaskingSpanProcessor()],
    });
    const tracer = provider.getTracer('upstream-like');
    const span = tracer.startSpan('function_tool', undefined, context.active());
    span.setAttribute('lk.pii.function_tool.arguments', '{"value":"987654"}');
    span.addEvent('said', { text: 'my account is 9 8 7 6 5 4' });
    span.setStatus({ code: 2, message: 'rejected 987654' });
    span.end();
    const [done] = exporter.getFinishedSpans();
    const text = spanStrings(done!).join(' ');
    expect(text).not.toMatch(/9\s?8\s?7\s?6\s?5\s?4/);
    expect(done!.attributes['lk.pii.function_tool.arguments']).toBe('{"value":"******"}');
    expect(done!.status.message).toBe('rejected ******');
  });
});
