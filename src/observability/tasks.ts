/**
 * Capture-task instrumentation: a `taskline.task` span per run with its outcome, a
 * `taskline.task.reprompt` span per re-prompt under it, and the task metrics. Called from
 * one line each in the task shell (src/tasks/capture.ts) and the typed task.
 */
import { context, type Span, trace } from '@opentelemetry/api';
import type { Outcome } from '../outcome.js';
import { count, observe } from './metrics.js';
import { ATTR, SPAN } from './names.js';
import { endSpan, setAttributes, startSpan, withSpan } from './tracing.js';

const taskSpans = new WeakMap<object, Span>();

/** The attributes an outcome adds to a span (reason masked). */
export function outcomeAttributes(
  outcome: Outcome<unknown>,
): Record<string, string | number | boolean> {
  const attrs: Record<string, string | number | boolean> = {
    [ATTR.status]: outcome.status,
    [ATTR.attempts]: outcome.attempts,
  };
  if (outcome.status === 'ok') {
    if (outcome.modality) attrs[ATTR.modality] = outcome.modality;
    if (outcome.confirmed !== undefined) attrs[ATTR.confirmed] = outcome.confirmed;
  } else if (outcome.reason) {
    attrs[ATTR.reason] = outcome.reason;
  }
  return attrs;
}

/**
 * Runs one capture task inside a `taskline.task` span named after it and counts its outcome.
 * The captured value itself is never an attribute.
 */
export function traceCapture<T>(
  task: { readonly id: string },
  run: () => Promise<Outcome<T>>,
): Promise<Outcome<T>> {
  const name = task.id;
  return withSpan(SPAN.task, { [ATTR.taskName]: name }, async (span) => {
    taskSpans.set(task, span);
    try {
      const outcome = await run();
      setAttributes(span, () => outcomeAttributes(outcome));
      const attrs = { task: name, status: outcome.status };
      count((i) => i.taskOutcomes, 1, attrs);
      observe((i) => i.taskAttempts, outcome.attempts, attrs);
      return outcome;
    } finally {
      taskSpans.delete(task);
    }
  });
}

/** Records one re-prompt of a running capture task (a short span under its task span). */
export function traceReprompt(
  task: { readonly id: string },
  kind: 'noInput' | 'noMatch' | 'invalid' | string,
  n: number,
): void {
  count((i) => i.reprompts, 1, { task: task.id, kind });
  const parent = taskSpans.get(task);
  if (!parent?.isRecording()) return;
  endSpan(
    startSpan(
      SPAN.reprompt,
      { [ATTR.taskName]: task.id, [ATTR.repromptKind]: kind, [ATTR.repromptCount]: n },
      trace.setSpan(context.active(), parent),
    ),
  );
}

/** Counts a caller turn answered by a parser instead of the model. */
export function countModelCallAvoided(task: { readonly id: string }): void {
  count((i) => i.modelCallsAvoided, 1, { task: task.id });
}
