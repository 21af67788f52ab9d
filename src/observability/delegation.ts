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
import { endSpan, inSpan, setAttributes, startSpan, withSpan } from './tracing.js';

/** The parts of a TaskManager snapshot the spans read (structural: no import cycle). */
interface ObservedTask {
  id: string;
  subagentType: string;
  mode: string;
  status: string;
  depth: number;
  createdAt: number;
  endedAt?: number;
  delivery: string;
}

/** The TaskManager events the spans follow. */
type ObservedEvent =
  | { type: 'queued' | 'started' | 'released' | 'finished'; task: ObservedTask }
  | { type: 'delivered'; task: ObservedTask; via: string }
  | { type: 'store_error'; taskId: string; error: unknown };

/** What {@link traceTaskManager} gives the manager back. */
export interface TaskManagerTrace {
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
 * Follows one TaskManager's events: call it once in its constructor with the manager.
 * Costs one listener per manager; spans are non-recording when tracing is off.
 */
export function traceTaskManager(manager: {
  subscribe(listener: (event: ObservedEvent) => void): () => void;
  get(id: string): { delivery: string } | undefined;
}): TaskManagerTrace {
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
      open.set(task.id, entry);
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
  manager.subscribe((event) => {
    if (event.type === 'store_error') {
      const entry = open.get(event.taskId);
      if (entry?.span.isRecording()) entry.span.addEvent('store_error');
      return;
    }
    const task = event.task;
    switch (event.type) {
      case 'queued':
        ensure(task, true);
        return;
      case 'started':
        unqueue(ensure(task, false));
        return;
      case 'released':
        open.get(task.id)?.span.addEvent('released');
        return;
      case 'finished': {
        const entry = ensure(task, false);
        unqueue(entry);
        entry.finished = true;
        setAttributes(entry.span, { [ATTR.delegationStatus]: task.status });
        const attrs = { subagent_type: task.subagentType, mode: task.mode, status: task.status };
        count((i) => i.delegationOutcomes, 1, attrs);
        if (task.endedAt !== undefined) {
          observe((i) => i.delegationLatency, task.endedAt - task.createdAt, attrs);
        }
        // Nobody will deliver it (no session, notify off): the span ends with the task.
        queueMicrotask(() => {
          if (open.get(task.id) === entry && manager.get(task.id)?.delivery === 'none') {
            end(task.id, entry, 'none');
          }
        });
        return;
      }
      case 'delivered': {
        const entry = open.get(task.id);
        if (!entry) return;
        const via = event.via;
        endSpan(
          startSpan(
            SPAN.delivery,
            { [ATTR.delegationTask]: task.id, [ATTR.deliveryVia]: via },
            traceContextOf(entry.span),
          ),
        );
        end(task.id, entry, via);
        return;
      }
    }
  });
  return {
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
    status = 'done';
    return result;
  } finally {
    observe((i) => i.workerDuration, info.clock.now() - started, {
      agent_id: info.agentId,
      status,
    });
  }
}
