/**
 * W3C trace context (`traceparent`, `tracestate`) across processes, written by hand on
 * `@opentelemetry/api` alone: the format is one line of the spec, and it works whether or not
 * the app registered a global propagator. A delegation record carries it inside
 * `sub_task_data.trace_context` (an additive key of an open JSON object, so the wire
 * contract is unchanged); NATS messages carry it as `traceparent`/`tracestate` headers.
 */
import {
  type Context,
  context,
  createTraceState,
  isSpanContextValid,
  type SpanContext,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { TRACE_CONTEXT_FIELD } from './names.js';

/** W3C trace context as carried in a record or in message headers. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The carrier for the span active in `ctx` (default: now), or undefined when there is none. */
export function traceCarrier(ctx: Context = context.active()): TraceCarrier | undefined {
  const sc = trace.getSpanContext(ctx);
  if (!sc || !isSpanContextValid(sc)) return undefined;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: TraceCarrier = { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}` };
  const state = sc.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** The remote span context in a carrier, or undefined when it is missing or malformed. */
export function parseCarrier(carrier: unknown): SpanContext | undefined {
  if (!carrier || typeof carrier !== 'object') return undefined;
  const { traceparent, tracestate } = carrier as Record<string, unknown>;
  if (typeof traceparent !== 'string') return undefined;
  const m = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (!m) return undefined;
  const sc: SpanContext = {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: Number.parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  if (typeof tracestate === 'string' && tracestate.length <= 512) {
    sc.traceState = createTraceState(tracestate);
  }
  return isSpanContextValid(sc) ? sc : undefined;
}

/** A context whose parent is the remote span in `carrier` (`base` unchanged when there is none). */
export function contextFromCarrier(carrier: unknown, base: Context = context.active()): Context {
  const sc = parseCarrier(carrier);
  return sc ? trace.setSpanContext(base, sc) : base;
}

/** `sub_task_data` with the active trace context added (unchanged when nothing is traced). */
export function withTraceContext<D extends Record<string, unknown>>(data: D): D {
  if (Object.hasOwn(data, TRACE_CONTEXT_FIELD)) return data;
  const carrier = traceCarrier();
  return carrier ? { ...data, [TRACE_CONTEXT_FIELD]: carrier } : data;
}

/** `sub_task_data` without the trace context taskline added (what the sender passed). */
export function withoutTraceContext(data: Record<string, unknown>): Record<string, unknown> {
  if (!Object.hasOwn(data, TRACE_CONTEXT_FIELD)) return data;
  const { [TRACE_CONTEXT_FIELD]: _carried, ...rest } = data;
  return rest;
}

/** The trace context a record's `sub_task_data` carries, if any. */
export function recordTraceCarrier(data: Record<string, unknown> | undefined): unknown {
  return data && Object.hasOwn(data, TRACE_CONTEXT_FIELD) ? data[TRACE_CONTEXT_FIELD] : undefined;
}

/**
 * The trace context of a record, checked and re-serialised for message headers (undefined
 * when the record carries none or a malformed one: a bad value is never forwarded).
 */
export function recordTraceHeaders(
  data: Record<string, unknown> | undefined,
): TraceCarrier | undefined {
  const carrier = recordTraceCarrier(data);
  const sc = parseCarrier(carrier);
  if (!sc) return undefined;
  return traceCarrier(trace.setSpanContext(context.active(), sc));
}
