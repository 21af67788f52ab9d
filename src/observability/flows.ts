/**
 * Flow instrumentation: a `taskline.flow` span per run, a `taskline.flow.step` span per step
 * visit (the step's task span nests inside it), a `taskline.flow.checkpoint` span per
 * checkpoint write, and the step-duration and flow-result metrics.
 */

import type { Span } from '@opentelemetry/api';
import { count, observe } from './metrics.js';
import { ATTR, SPAN } from './names.js';
import { inSpan, setAttributes, withSpan } from './tracing.js';

const flowSpans = new WeakMap<object, Span>();

/** Runs a flow inside a `taskline.flow` span (call id known once it ran) and counts its result. */
export function traceFlow<R extends { status: string; reason?: string }>(
  owner: { readonly definition: { readonly name: string } },
  callId: () => string | undefined,
  run: () => Promise<R>,
): Promise<R> {
  const flow = owner.definition.name;
  return withSpan(SPAN.flow, { [ATTR.flowName]: flow }, async (span) => {
    flowSpans.set(owner, span);
    let result: R;
    try {
      result = await run();
    } finally {
      flowSpans.delete(owner);
    }
    setAttributes(span, () => {
      const id = callId();
      return {
        ...(id ? { [ATTR.callId]: id } : {}),
        [ATTR.flowStatus]: result.status,
        ...(result.reason ? { [ATTR.reason]: result.reason } : {}),
      };
    });
    count((i) => i.flowResults, 1, { flow, status: result.status });
    return result;
  });
}

/**
 * Runs the flow's own loop inside its `taskline.flow` span: upstream starts it from the flow
 * activity's `onEnter`, outside the context `run()` was called in.
 */
export function inFlowSpan<T>(owner: object, fn: () => T): T {
  return inSpan(flowSpans.get(owner), fn);
}

/** Runs one step visit inside a `taskline.flow.step` span with its outcome. */
export function traceStep<S extends { outcome: { status: string; attempts: number } }>(
  flow: string,
  step: string,
  visit: number,
  run: () => Promise<S>,
): Promise<S> {
  return withSpan(
    SPAN.step,
    { [ATTR.flowName]: flow, [ATTR.stepId]: step, [ATTR.stepVisit]: visit },
    async (span) => {
      const result = await run();
      setAttributes(span, {
        [ATTR.status]: result.outcome.status,
        [ATTR.attempts]: result.outcome.attempts,
      });
      return result;
    },
  );
}

/** Records a finished step's duration (call clock) and result, as the flow report has it. */
export function recordStep(
  flow: string,
  record: { step: string; durationMs: number; outcome: string },
): void {
  observe((i) => i.stepDuration, record.durationMs, {
    flow,
    step: record.step,
    outcome: record.outcome,
  });
}

/** Runs one checkpoint write inside a `taskline.flow.checkpoint` span. */
export function traceCheckpoint<V extends number | undefined>(
  flow: string,
  step: string | undefined,
  write: () => Promise<V>,
): Promise<V> {
  return withSpan(
    SPAN.checkpoint,
    { [ATTR.flowName]: flow, ...(step ? { [ATTR.stepId]: step } : {}) },
    async (span) => {
      const version = await write();
      setAttributes(span, {
        [ATTR.checkpointWritten]: version !== undefined,
        ...(version !== undefined ? { [ATTR.checkpointVersion]: version } : {}),
      });
      return version;
    },
  );
}
