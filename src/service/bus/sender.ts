import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import {
  type DelegationRecord,
  type DelegationStore,
  deadlineSeconds,
  epochSeconds,
  FINAL_STATES,
  RESULT_STAGE,
  stageOf,
} from '../../delegation/record.js';
import { withTraceContext } from '../../observability/propagation.js';
import { hasOutbox } from '../stores/change.js';
import { RecentKeys } from './dedupe.js';
import type { DelegationEvent } from './events.js';
import { errorMessage, logDelegation } from './log.js';
import {
  type OutboxPublisher,
  type OutboxPublisherOptions,
  startOutboxPublisher,
} from './publisher.js';
import type { BusSubscription, DelegationBus } from './types.js';

/** A stage's final outcome, as the sender sees it. */
export interface DelegationResult {
  delegation_id: string;
  stage: string;
  state: 'done' | 'failed' | 'expired' | 'cancelled';
  /** The stage's `delegation_result` (for `failed`, the error message). */
  result?: unknown;
  record: DelegationRecord;
}

/** What the sender fills in for a new delegation; everything else has a default. */
export interface NewDelegation {
  target: string;
  delegation_type: string;
  sub_task_data?: Record<string, unknown>;
  /** Default: a random UUID. */
  delegation_id?: string;
  /** Default: the delegation id. */
  task_id?: string;
  /** Default: the delegation id. */
  sub_task_id?: string;
  /** Default 0. */
  workflow_level?: number;
  /**
   * Stage to create, pending (default "execution"); `null` creates none, as a contract client
   * does (the worker then reports in the contract's `delegation_result` stage).
   */
  stage?: string | null;
  /** Deadline, ms from now on the sender's clock (the expiry checker enforces it). */
  deadlineMs?: number;
}

/** Options of {@link createDelegationSender}. */
export interface DelegationSenderOptions {
  agentId: string;
  bus: DelegationBus;
  store: DelegationStore;
  clock?: Clock;
  /**
   * Run an outbox publisher for this store (default true when the store has an outbox). Pass
   * options to tune it, or false when another process publishes.
   */
  publisher?: boolean | Omit<OutboxPublisherOptions, 'store' | 'bus'>;
}

/** Options of {@link DelegationSender.awaitResult}. */
export interface AwaitResultOptions {
  /** Stage to wait for (default: the first stage to finish). */
  stage?: string;
  /** Give up after this many ms on the sender's clock (`timeout` error). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * The sending side of durable delegations: create records (the outbox turns them into
 * `delegation_task` events), then learn outcomes from `delegation_result` events on this
 * agent's reply inbox. `awaitResult` resolves once per call; `onResult` listeners hear each
 * stage's outcome exactly once per sender, however often the bus redelivers it.
 */
export interface DelegationSender {
  readonly agentId: string;
  /** Where its records live (a recovering job reads the call's delegations here). */
  readonly store: DelegationStore;
  delegate(input: NewDelegation): Promise<DelegationRecord>;
  awaitResult(delegationId: string, options?: AwaitResultOptions): Promise<DelegationResult>;
  /** Hears every final outcome once; returns an unsubscribe. */
  onResult(listener: (result: DelegationResult) => void): () => void;
  /** Hears every reply event (status and result) as delivered; returns an unsubscribe. */
  onEvent(listener: (event: DelegationEvent) => void): () => void;
  close(): Promise<void>;
}

interface Waiter {
  id: string;
  stage?: string;
  resolve: (r: DelegationResult) => void;
  reject: (error: unknown) => void;
}

function resultOf(record: DelegationRecord, stage: string): DelegationResult | undefined {
  const s = stageOf(record, stage);
  if (!s || !FINAL_STATES.has(s.state)) return undefined;
  return {
    delegation_id: record.delegation_id,
    stage,
    state: s.state as DelegationResult['state'],
    ...(s.delegation_result !== undefined ? { result: s.delegation_result } : {}),
    record,
  };
}

/** Starts a sender: subscribes to the agent's reply inbox and (by default) publishes its outbox. */
export async function createDelegationSender(
  options: DelegationSenderOptions,
): Promise<DelegationSender> {
  const { agentId, bus, store } = options;
  const clock = options.clock ?? systemClock;
  const waiters = new Set<Waiter>();
  const resultListeners = new Set<(r: DelegationResult) => void>();
  const eventListeners = new Set<(e: DelegationEvent) => void>();
  const delivered = new RecentKeys(10_000);

  const emit = (result: DelegationResult, incarnation: string) => {
    for (const w of [...waiters]) {
      if (w.id === result.delegation_id && (w.stage === undefined || w.stage === result.stage)) {
        waiters.delete(w);
        w.resolve(result);
      }
    }
    if (!delivered.add(`${result.delegation_id}\u0000${incarnation}\u0000${result.stage}`)) return;
    for (const l of resultListeners) {
      try {
        l(result);
      } catch (error) {
        logDelegation('warn', 'delegation result listener failed', { error: errorMessage(error) });
      }
    }
  };

  const subscription: BusSubscription = await bus.subscribe(agentId, 'reply', (event) => {
    for (const l of eventListeners) {
      try {
        l(event);
      } catch (error) {
        logDelegation('warn', 'delegation event listener failed', { error: errorMessage(error) });
      }
    }
    if (event.event === 'delegation_result' && event.stage !== undefined) {
      const result = resultOf(event.record, event.stage);
      if (result) emit(result, event.incarnation);
    }
  });

  let publisher: OutboxPublisher | undefined;
  if (options.publisher !== false && hasOutbox(store)) {
    const tuning = typeof options.publisher === 'object' ? options.publisher : {};
    publisher = startOutboxPublisher({ clock, ...tuning, store, bus });
  }

  return {
    agentId,
    store,
    async delegate(input) {
      const id = input.delegation_id ?? randomUUID();
      const now = clock.now();
      const stage = input.stage === undefined ? 'execution' : input.stage;
      const status: DelegationRecord['status'] = {};
      if (stage !== null) {
        Object.defineProperty(status, stage, {
          enumerable: true,
          value: {
            state: 'pending',
            time: epochSeconds(now),
            ...(input.deadlineMs !== undefined
              ? { deadline: deadlineSeconds(now + input.deadlineMs) }
              : {}),
          },
        });
      }
      return store.create({
        delegation_id: id,
        task_id: input.task_id ?? id,
        sub_task_id: input.sub_task_id ?? id,
        workflow_level: input.workflow_level ?? 0,
        delegation_type: input.delegation_type,
        sender_subject_id: agentId,
        target_subject_id: input.target,
        status,
        sub_task_data: withTraceContext(input.sub_task_data ?? {}),
      });
    },
    awaitResult(delegationId, opts = {}) {
      return new Promise<DelegationResult>((resolve, reject) => {
        if (opts.signal?.aborted) {
          reject(opts.signal.reason);
          return;
        }
        const cleanup = () => {
          waiters.delete(waiter);
          timer?.cancel();
          opts.signal?.removeEventListener('abort', onAbort);
        };
        const waiter: Waiter = {
          id: delegationId,
          ...(opts.stage !== undefined ? { stage: opts.stage } : {}),
          resolve: (r) => {
            cleanup();
            resolve(r);
          },
          reject: (error) => {
            cleanup();
            reject(error);
          },
        };
        const onAbort = () => {
          cleanup();
          reject(opts.signal?.reason);
        };
        const timer =
          opts.timeoutMs === undefined
            ? undefined
            : clock.setTimer(opts.timeoutMs, () => {
                cleanup();
                reject(
                  new TasklineError(
                    'timeout',
                    `No result for delegation ${delegationId} within ${opts.timeoutMs} ms.`,
                  ),
                );
              });
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(waiter);
        // The result may already be in the store (it finished before we started waiting).
        store.get(delegationId).then(
          (record) => {
            if (!waiters.has(waiter)) return;
            if (!record) {
              cleanup();
              reject(new TasklineError('not_found', `Delegation ${delegationId} does not exist.`));
              return;
            }
            const stages =
              opts.stage !== undefined
                ? [opts.stage]
                : [RESULT_STAGE, ...Object.keys(record.status)];
            for (const stage of stages) {
              const result = resultOf(record, stage);
              if (result) {
                waiter.resolve(result);
                return;
              }
            }
          },
          (error: unknown) => {
            if (!waiters.has(waiter)) return;
            cleanup();
            reject(error);
          },
        );
      });
    },
    onResult(listener) {
      resultListeners.add(listener);
      return () => resultListeners.delete(listener);
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    async close() {
      await subscription.close();
      await publisher?.close();
      for (const w of [...waiters]) {
        w.reject(new TasklineError('cancelled', `The delegation sender of ${agentId} was closed.`));
      }
    },
  };
}
