/**
 * Tracing and metrics: what an app needs to turn them on, read them and carry a trace to
 * its own services. The instrumentation points themselves are internal.
 */
export { MaskingSpanProcessor } from './masking.js';
export { instruments, type TasklineInstruments } from './metrics.js';
export { ATTR, METRIC, SCOPE, SPAN, TRACE_CONTEXT_FIELD } from './names.js';
export {
  contextFromCarrier,
  parseCarrier,
  type TraceCarrier,
  traceCarrier,
  withTraceContext,
} from './propagation.js';
export { maskAttributes, tasklineTracer, withSpan } from './tracing.js';
