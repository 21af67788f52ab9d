/**
 * Bounded waits on a task's completion: every wait ends on the clock or on a signal, never
 * only on the task.
 */
import type { Clock, TimerHandle } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { isFinalStatus, type TaskResult } from '../types.js';
import { resultIn } from './delivery-state.js';
import type { TaskState } from './state.js';

/** Resolves when `promise` settles or any signal aborts. */
export function promiseOr(promise: Promise<unknown>, signals: AbortSignal[]): Promise<void> {
  if (signals.some((s) => s.aborted)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const finish = () => {
      for (const s of signals) s.removeEventListener('abort', finish);
      resolve();
    };
    for (const s of signals) s.addEventListener('abort', finish, { once: true });
    promise.then(finish, finish);
  });
}

/** Resolves when the task ends or any signal aborts. */
export function settledOr(task: TaskState, signals: AbortSignal[]): Promise<void> {
  if (resultIn(task.delivery)) return Promise.resolve();
  return promiseOr(task.done, signals);
}

/** True when the task ended within `ms` on the clock; false on timeout or abort. */
export function settledWithin(
  task: TaskState,
  ms: number,
  signal: AbortSignal,
  clock: Clock,
): Promise<boolean> {
  if (resultIn(task.delivery)) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const finish = (value: boolean) => {
      if (settled) return;
      settled = true;
      timer.cancel();
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => finish(false);
    const timer = clock.setTimer(ms, () => finish(false));
    signal.addEventListener('abort', onAbort, { once: true });
    task.done.then(
      () => finish(true),
      () => finish(true),
    );
  });
}

/**
 * The task's result, giving up after `timeoutMs` on the clock (a `timeout` error; the task
 * keeps running) or when `signal` aborts (its reason).
 */
export function resultWithin(
  task: TaskState,
  clock: Clock,
  options: { timeoutMs?: number; signal?: AbortSignal },
): Promise<TaskResult> {
  if (options.timeoutMs === undefined && !options.signal) return task.done;
  const id = task.snap.id;
  return new Promise<TaskResult>((resolve, reject) => {
    let timer: TimerHandle | undefined;
    const cleanup = () => {
      timer?.cancel();
      options.signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      cleanup();
      reject(options.signal?.reason ?? new TasklineError('cancelled', 'Stopped waiting.'));
    };
    if (options.timeoutMs !== undefined) {
      timer = clock.setTimer(options.timeoutMs, () => {
        cleanup();
        reject(
          new TasklineError(
            'timeout',
            `Task ${id} did not finish within ${options.timeoutMs} ms; it is still running.`,
            { id },
          ),
        );
      });
    }
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    task.done.then(
      (result) => {
        cleanup();
        resolve(result);
      },
      (err: unknown) => {
        cleanup();
        reject(err);
      },
    );
  });
}

/**
 * Resolves true once none of `tasks()` is queued or running (tasks started meanwhile
 * included), false when `timeoutMs` passes first on the clock or `signal` aborts.
 */
export async function allSettled(
  tasks: () => Iterable<TaskState>,
  clock: Clock,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const limit = new AbortController();
  const timer = clock.setTimer(timeoutMs, () => limit.abort());
  const signals = signal ? [limit.signal, signal] : [limit.signal];
  try {
    for (;;) {
      const open = [...tasks()].filter((t) => !isFinalStatus(t.snap.status));
      if (open.length === 0) return true;
      if (signals.some((s) => s.aborted)) return false;
      await promiseOr(Promise.allSettled(open.map((t) => t.done)), signals);
    }
  } finally {
    timer.cancel();
  }
}
