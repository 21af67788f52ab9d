import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { isTasklineError, TasklineError } from '../core/errors.js';
import {
  type DelegationRecord,
  type DelegationStore,
  FINAL_STATES,
  isFinished,
  RESULT_STAGE,
  stageOf,
} from '../delegation/record.js';
import { traceWorkerExecution } from '../observability/delegation.js';
import { withoutTraceContext } from '../observability/propagation.js';
import { JobLimit } from './bus/dedupe.js';
import type { DelegationEvent } from './bus/events.js';
import { errorMessage, logDelegation } from './bus/log.js';
import {
  type OutboxPublisher,
  type OutboxPublisherOptions,
  startOutboxPublisher,
} from './bus/publisher.js';
import type { BusSubscription, DelegationBus } from './bus/types.js';
import { checkIncomingResult, type ResultSchemaRegistry } from './constraints.js';
import { answerSelection, type SelectionAnswers } from './select.js';
import { hasOutbox, loadWithStale } from './stores/change.js';

/** One delegated sub-task handed to a worker's handler. */
export interface DelegatedTask {
  record: DelegationRecord;
  /** The stage being executed. */
  stage: string;
  /** The record's `sub_task_data` (without the `trace_context` taskline adds for tracing). */
  data: Record<string, unknown>;
  /** Aborts when the delegation is cancelled, deleted, re-targeted or passes its deadline. */
  signal: AbortSignal;
  /** Delivery attempt (more than 1 after a crash or a failed earlier attempt). */
  attempt: number;
}

/** Executes one sub-task and returns its result (throw to fail it). */
export type DelegationTaskHandler = (task: DelegatedTask) => Promise<unknown> | unknown;

/** Options of {@link serveDelegations}. */
export interface ServeDelegationsOptions extends SelectionAnswers {
  /** The agent this worker acts as: it takes the delegations targeted at this id. */
  agentId: string;
  bus: DelegationBus;
  store: DelegationStore;
  handler: DelegationTaskHandler;
  /**
   * Stage to execute (default "execution"; a record without it runs its only open stage, and a
   * record with none reports in the contract's `delegation_result` stage).
   */
  stage?: string;
  /** Sub-tasks run at once (default 4). */
  concurrency?: number;
  /** Result schemas by delegation type: an invalid result fails the stage. */
  schemas?: ResultSchemaRegistry;
  clock?: Clock;
  /** Run an outbox publisher for this store (default true when it has an outbox). */
  publisher?: boolean | Omit<OutboxPublisherOptions, 'store' | 'bus'>;
}

/** A running worker. */
export interface DelegationWorker {
  readonly agentId: string;
  /** Sub-tasks executing now. */
  readonly running: number;
  /** Stops taking work and waits for running sub-tasks to finish (or be aborted). */
  close(options?: { abort?: boolean }): Promise<void>;
}

/**
 * Executes delegated sub-tasks for `agentId`: takes `delegation_task` events from its work
 * queue, claims the stage (`pending` → `in_progress`, atomically), runs `handler`, checks the
 * result (sender is the target, stage still open and on time, schema) and stores it as `done` —
 * or `failed` with the error message — which the outbox turns into a `delegation_result` for
 * the sender. A record with no stage (as a contract client creates it) is reported in the
 * contract's `delegation_result` stage. The event is acknowledged only after the result is
 * stored, so a crash means a redelivery, not a loss.
 *
 * Pools: any number of workers may serve one agent id, in one process or many. Each job goes
 * to one of them (a shared work queue on NATS, round robin in process) and runs once; a job
 * whose worker died is redelivered to another. Cancels reach whichever worker runs the job.
 */
export async function serveDelegations(
  options: ServeDelegationsOptions,
): Promise<DelegationWorker> {
  const { agentId, bus, store, handler } = options;
  const clock = options.clock ?? systemClock;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const slots = new JobLimit(concurrency);
  const running = new Map<string, AbortController>();
  const jobs = new Set<Promise<void>>();
  let shuttingDown = false;

  const pickStage = (record: DelegationRecord): string | undefined => {
    const wanted = options.stage ?? 'execution';
    if (stageOf(record, wanted)) return wanted;
    const names = Object.keys(record.status);
    const open = names.filter((n) => !FINAL_STATES.has(record.status[n]!.state));
    if (open.length === 1) return open[0];
    // No open stage to run (a contract client creates none): report in the result stage.
    return open.length === 0 && !isFinished(record) ? RESULT_STAGE : undefined;
  };

  const quietly = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (error) {
      if (!isTasklineError(error, 'invalid_state') && !isTasklineError(error, 'not_found'))
        throw error;
    }
  };

  const execute = async (event: DelegationEvent, attempt: number) => {
    const id = event.delegation_id;
    if (running.has(id)) return;
    const loaded = await loadWithStale(store, id);
    const initial = loaded?.record;
    if (!loaded || !initial || initial.target_subject_id !== agentId) return;
    const stage = pickStage(initial);
    if (stage === undefined) {
      logDelegation('warn', 'delegation has no stage this worker can run', { id, agentId });
      return;
    }
    const status = stageOf(initial, stage);
    if (status && FINAL_STATES.has(status.state)) return;
    const controller = new AbortController();
    running.set(id, controller);
    let deadlineTimer: TimerHandle | undefined;
    await slots.acquire();
    try {
      // A deadline already past when it was written is kept as written, not enforced.
      if (status?.deadline !== undefined && !loaded.stale.includes(stage)) {
        const left = status.deadline * 1000 - clock.now();
        if (left <= 0) {
          await quietly(() => store.setStage(id, stage, { state: 'expired' }));
          return;
        }
        deadlineTimer = clock.setTimer(left, () => {
          controller.abort(new TasklineError('timeout', `Delegation ${id} passed its deadline.`));
          void quietly(() => store.setStage(id, stage, { state: 'expired' })).catch(() => {});
        });
      }
      let record = initial;
      if (status === undefined || status.state === 'pending') {
        // The claim: only one worker moves the stage out of pending. A stage already in
        // progress is run again only by whoever gets its job next (the previous holder died).
        try {
          record = await store.setStage(id, stage, { state: 'in_progress', expect: 'pending' });
        } catch (error) {
          if (isTasklineError(error, 'invalid_state') || isTasklineError(error, 'not_found')) {
            logDelegation('info', 'delegation claimed elsewhere; skipped', { id, agentId });
            return;
          }
          throw error;
        }
      }
      let result: unknown;
      let failure: unknown;
      let failed = false;
      try {
        const info = { agentId, stage, attempt, clock };
        result = await traceWorkerExecution(record, info, async () =>
          handler({
            record,
            stage,
            data: withoutTraceContext(record.sub_task_data),
            signal: controller.signal,
            attempt,
          }),
        );
      } catch (error) {
        failed = true;
        failure = error;
      }
      if (controller.signal.aborted) {
        // Shut down mid-task: leave the event unacknowledged so another worker redoes it.
        if (shuttingDown) throw controller.signal.reason;
        return;
      }
      if (failed) {
        await quietly(() =>
          store.setStage(id, stage, { state: 'failed', delegation_result: errorMessage(failure) }),
        );
        return;
      }
      const latest = await store.get(id);
      const check = checkIncomingResult(
        latest,
        { sender: agentId, stage, result: result === undefined ? null : result },
        {
          now: clock.now(),
          stale: loaded.stale,
          ...(options.schemas ? { schemas: options.schemas } : {}),
        },
      );
      if (check.ok) {
        await quietly(() =>
          store.setStage(id, stage, { state: 'done', delegation_result: check.result }),
        );
      } else if (check.reason === 'invalid_result') {
        await quietly(() =>
          store.setStage(id, stage, {
            state: 'failed',
            delegation_result: `invalid_result: ${check.message}`,
          }),
        );
      } else {
        logDelegation('info', 'delegation result not stored', { id, reason: check.reason });
      }
    } finally {
      deadlineTimer?.cancel();
      running.delete(id);
      slots.release();
    }
  };

  const cancel = (event: DelegationEvent) => {
    if (event.event !== 'delegation_cancel') return;
    running
      .get(event.delegation_id)
      ?.abort(new TasklineError('cancelled', `Delegation ${event.delegation_id} was cancelled.`));
  };
  // A cancel is queued like work, so in a pool it may reach another worker than the one running
  // the job: every worker also watches the agent's events and stops what it runs itself.
  const watching = await bus.watch(cancel, { to: agentId });

  const subscription: BusSubscription = await bus.subscribe(
    agentId,
    'work',
    async (event, info) => {
      if (event.event === 'delegation_cancel') {
        cancel(event);
        return;
      }
      if (event.event !== 'delegation_task') return;
      const job = execute(event, info.attempt);
      jobs.add(job);
      try {
        await job;
      } finally {
        jobs.delete(job);
      }
    },
    // Headroom beyond the sub-task slots, so a cancel gets through while every slot is busy.
    { concurrency: concurrency + 8 },
  );

  const selection =
    options.bid || options.vote
      ? await answerSelection(bus, agentId, {
          ...(options.bid ? { bid: options.bid } : {}),
          ...(options.vote ? { vote: options.vote } : {}),
        })
      : undefined;

  let publisher: OutboxPublisher | undefined;
  if (options.publisher !== false && hasOutbox(store)) {
    const tuning = typeof options.publisher === 'object' ? options.publisher : {};
    publisher = startOutboxPublisher({ clock, ...tuning, store, bus });
  }

  return {
    agentId,
    get running() {
      return running.size;
    },
    async close(opts = {}) {
      if (opts.abort) {
        shuttingDown = true;
        for (const c of running.values()) {
          c.abort(new TasklineError('cancelled', `Worker ${agentId} is shutting down.`));
        }
      }
      await selection?.close();
      await watching.close();
      await subscription.close();
      await Promise.allSettled([...jobs]);
      await publisher?.drain().catch(() => 0);
      await publisher?.close();
    },
  };
}
