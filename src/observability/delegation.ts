/**
 * Delegation instrumentation. Voice side: a `taskline.delegation` span per task of a
 * TaskManager, from its creation to the delivery of its result (a `taskline.delegation.deliver`
 * child when the result is spoken or answered inline), plus queue depth and latency metrics.
 * Worker side: a `taskline.delegation.execute` span per sub-task, whose parent is the span
 * that created the record (W3C trace context in `sub_task_data.trace_context`), so the
 * worker's work joins the caller's trace even in another process.
 */
import { context, type Span, trace } from '@opentelemetry/api';
import { count, observe } from './metrics.js';
import { ATTR, SPAN } from './names.js';
import { contextFromCarrier, recordTraceCarrier } from './propagation.js';
import { endSpan, inSpan, isLiveSpan, setAttributes, startSpan, withSpan } from './tracing.js';

/** The parts of a TaskManager snapshot the spans read (structural: no import cycle). */
interface ObservedTask {
  readonly id: string;
  readonly subagentType: string;
  readonly mode: string;
  readonly status: string;
  readonly depth: number;
  readonly createdAt: number;
  readonly endedAt?: number;
  readonly delivery: string;
}

/** What {@link traceTaskManager} gives the manager back. */
export interface TaskManagerTrace {
  /**
   * Follows one change of a task: call it synchronously with the task's live snapshot (it is
   * read again a microtask after `finished`, to see whether anyone will deliver the result).
   */
  observe(type: string, task: ObservedTask, detail?: unknown): void;
  /** Runs `fn` (the task's execution) with the task's span active. */
  run<T>(taskId: string, fn: () => T): T;
  /** Ends the spans of tasks never delivered (the manager is closing). */
  close(): void;
}

interface Open {
  span: Span;
  queued: boolean;
  finished: boolean;
}

/**
 * The spans and metrics of one TaskManager: it calls `observe` for every change of a task.
 * Spans are non-recording when tracing is off; nothing is copied either way.
 */
export function traceTaskManager(): TaskManagerTrace {
  const open = new Map<string, Open>();
  const ensure = (task: ObservedTask, queued: boolean): Open => {
    let entry = open.get(task.id);
    if (!entry) {
      const span = startSpan(SPAN.delegation, () => ({
        [ATTR.delegationTask]: task.id,
        [ATTR.subagentType]: task.subagentType,
        [ATTR.delegationMode]: task.mode,
        [ATTR.delegationDepth]: task.depth,
      }));
      entry = { span, queued, finished: false };
      // With tracing off a running task needs no entry: nothing to end, nothing to propagate.
      if (queued || isLiveSpan(span)) open.set(task.id, entry);
      if (queued) count((i) => i.delegationQueueDepth, 1, {});
    }
    return entry;
  };
  const unqueue = (entry: Open) => {
    if (!entry.queued) return;
    entry.queued = false;
    count((i) => i.delegationQueueDepth, -1, {});
  };
  const end = (id: string, entry: Open, delivery: string) => {
    open.delete(id);
    unqueue(entry);
    setAttributes(entry.span, { [ATTR.deliveryVia]: delivery });
    endSpan(entry.span);
  };
  const finished = (task: ObservedTask) => {
    const attrs = { subagent_type: task.subagentType, mode: task.mode, status: task.status };
    count((i) => i.delegationOutcomes, 1, attrs);
    if (task.endedAt !== undefined) {
      observe((i) => i.delegationLatency, task.endedAt - task.createdAt, attrs);
    }
    // No entry: the task started while tracing was off, and gets no span now either.
    const entry = open.get(task.id);
    if (!entry) return;
    unqueue(entry);
    entry.finished = true;
    setAttributes(entry.span, { [ATTR.delegationStatus]: task.status });
    if (!isLiveSpan(entry.span)) {
      // Tracing is off: nothing to end later, and nothing to keep.
      open.delete(task.id);
      return;
    }
    // Nobody will deliver it (no session, notify off): the span ends with the task.
    queueMicrotask(() => {
      if (open.get(task.id) === entry && task.delivery === 'none') end(task.id, entry, 'none');
    });
  };
  const delivered = (task: ObservedTask, via: string) => {
    const entry = open.get(task.id);
    if (!entry) return;
    endSpan(
      startSpan(
        SPAN.delivery,
        { [ATTR.delegationTask]: task.id, [ATTR.deliveryVia]: via },
        traceContextOf(entry.span),
      ),
    );
    end(task.id, entry, via);
  };
  return {
    observe(type, task, detail) {
      switch (type) {
        case 'queued':
          ensure(task, true);
          return;
        case 'started':
          unqueue(ensure(task, false));
          return;
        case 'released':
          open.get(task.id)?.span.addEvent('released');
          return;
        case 'finished':
          finished(task);
          return;
        case 'delivered':
          delivered(task, String(detail));
          return;
        case 'store_error': {
          const span = open.get(task.id)?.span;
          if (span?.isRecording()) span.addEvent('store_error');
          return;
        }
      }
    },
    run: (taskId, fn) => inSpan(open.get(taskId)?.span, fn),
    close() {
      for (const [id, entry] of [...open]) end(id, entry, entry.finished ? 'none' : 'closed');
    },
  };
}

function traceContextOf(span: Span) {
  return trace.setSpan(context.active(), span);
}

/** The parts of a delegation record the worker span reads. */
interface ObservedRecord {
  delegation_id: string;
  delegation_type: string;
  sub_task_data: Record<string, unknown>;
}

/**
 * Runs a worker's handler for one sub-task inside a `taskline.delegation.execute` span whose
 * parent is the trace context the record carries (the sender's delegation span).
 */
export async function traceWorkerExecution<T>(
  record: ObservedRecord,
  info: { agentId: string; stage: string; attempt: number; clock: { now(): number } },
  run: () => Promise<T>,
): Promise<T> {
  const parent = contextFromCarrier(recordTraceCarrier(record.sub_task_data));
  const started = info.clock.now();
  // `completed` or `failed`: the words a task's `status` uses, so one dashboard reads both sides.
  let status = 'failed';
  try {
    const result = await withSpan(
      SPAN.execute,
      {
        [ATTR.delegationId]: record.delegation_id,
        [ATTR.delegationType]: record.delegation_type,
        [ATTR.workerAgent]: info.agentId,
        [ATTR.workerStage]: info.stage,
        [ATTR.workerAttempt]: info.attempt,
      },
      run,
      parent,
    );
    status = 'completed';
    return result;
  } finally {
    observe((i) => i.workerDuration, info.clock.now() - started, {
      agent_id: info.agentId,
      status,
    });
  }
}
