/**
 * taskline's spans, on upstream's tracer provider: `telemetry.tracer.getProvider()` of
 * @livekit/agents is the provider given to `telemetry.setTracerProvider`, or else the
 * OpenTelemetry API's global one. Spans therefore land in the same trace as upstream's
 * session and turn spans, and cost one non-recording span object when tracing is off
 * (attributes are only computed for a recording span).
 */
import { telemetry } from '@livekit/agents';
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Span,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { maskPII } from '../core/pii.js';
import { SCOPE } from './names.js';

let cachedProvider: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/** taskline's tracer, from whichever provider upstream uses right now. */
export function tasklineTracer(): Tracer {
  const provider = telemetry.tracer.getProvider();
  if (provider !== cachedProvider || !cachedTracer) {
    cachedProvider = provider;
    cachedTracer = provider.getTracer(SCOPE);
  }
  return cachedTracer;
}

/** Attributes, built only when a span records (so masking costs nothing with tracing off). */
export type LazyAttributes = Attributes | (() => Attributes);

function resolve(attrs: LazyAttributes | undefined): Attributes | undefined {
  return typeof attrs === 'function' ? attrs() : attrs;
}

/** Starts a span under `parent` (default: the active context) without making it active. */
export function startSpan(name: string, attrs?: LazyAttributes, parent?: Context): Span {
  const span = tasklineTracer().startSpan(name, undefined, parent ?? context.active());
  if (attrs && span.isRecording()) span.setAttributes(maskAttributes(resolve(attrs)!));
  return span;
}

/** Sets attributes on a recording span (masked), computing them only then. */
export function setAttributes(span: Span, attrs: LazyAttributes): void {
  if (span.isRecording()) span.setAttributes(maskAttributes(resolve(attrs)!));
}

/** Ends a span, marking it failed with a masked message when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined && span.isRecording()) {
    const message = maskPII(error instanceof Error ? error.message : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message });
    span.addEvent('exception', {
      'exception.type': error instanceof Error ? error.name : 'Error',
      'exception.message': message,
    });
  }
  span.end();
}

/**
 * Runs `fn` inside a new active span (so spans and upstream work started inside nest under
 * it), ending the span when `fn` settles; a throw marks it failed and is rethrown.
 */
export async function withSpan<T>(
  name: string,
  attrs: LazyAttributes | undefined,
  fn: (span: Span) => Promise<T>,
  parent?: Context,
): Promise<T> {
  const span = startSpan(name, attrs, parent);
  const ctx = trace.setSpan(parent ?? context.active(), span);
  let result: T;
  try {
    result = await context.with(ctx, () => fn(span));
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
  span.end();
  return result;
}

/**
 * False for a span of a no-op tracer with no parent (tracing off): it records nothing and
 * has no context to propagate, so there is no point keeping it active or ending it later.
 */
export function isLiveSpan(span: Span): boolean {
  return span.isRecording() || isSpanContextValid(span.spanContext());
}

/** Runs `fn` with `span` as the active span (for work started later on its behalf). */
export function inSpan<T>(span: Span | undefined, fn: () => T): T {
  // A span that is not live has nothing to propagate: no new context per call.
  if (!span || !isLiveSpan(span)) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/**
 * Attribute values with every string masked by `maskPII` (card numbers, registered secrets
 * such as a PIN collected with `mask: true`), so a masked value never reaches an exporter.
 */
export function maskAttributes(attrs: Attributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined) continue;
    if (typeof value === 'string') out[key] = maskPII(value);
    else if (Array.isArray(value))
      out[key] = value.map((v) => (typeof v === 'string' ? maskPII(v) : v)) as typeof value;
    else out[key] = value;
  }
  return out;
}

/** A phone number or SIP address cut to its last four digits ("***0100"), for attributes. */
export function maskNumber(value: string): string {
  const digits = value.replace(/[^0-9]/g, '');
  return digits.length <= 4 ? '****' : `***${digits.slice(-4)}`;
}
