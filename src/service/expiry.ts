import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { isTasklineError } from '../core/errors.js';
import {
  type DelegationRecord,
  type DelegationStore,
  FINAL_STATES,
  isFinished,
} from '../delegation/record.js';
import { errorMessage, logDelegation } from './bus/log.js';

/** One stage the checker marked expired. */
export interface ExpiredStage {
  delegation_id: string;
  stage: string;
  sender: string;
  record: DelegationRecord;
}

/** Options of {@link expireOverdue} and {@link startExpiryChecker}. */
export interface ExpiryOptions {
  /** Clock that says what "now" is (default the system clock). */
  clock?: Clock;
  /** Records handled per round (default 100). */
  batch?: number;
  /**
   * Called for each expired stage. Stores with an outbox already notify the sender through a
   * `delegation_result` event (state `expired`); this is for stores without one.
   */
  onExpired?: (expired: ExpiredStage) => void;
}

/**
 * Marks every open stage whose deadline (epoch seconds) has passed as `expired` (which, through
 * the store's outbox, tells the sender with a taskline `delegation_result` event; the contract's
 * subjects only carry submitted results). A stage that finished in the meantime, or any stage of
 * a record whose result was submitted, is left alone. Returns what it expired.
 */
export async function expireOverdue(
  store: DelegationStore,
  options: ExpiryOptions = {},
): Promise<ExpiredStage[]> {
  const clock = options.clock ?? systemClock;
  const batch = options.batch ?? 100;
  const out: ExpiredStage[] = [];
  const skipped = new Set<string>();
  for (;;) {
    const now = clock.now();
    const due = (await store.overdue(now, batch)).filter(
      (r) => !skipped.has(r.record.delegation_id),
    );
    if (due.length === 0) return out;
    for (const { record, stages } of due) {
      let progressed = false;
      for (const stage of isFinished(record) ? [] : stages) {
        const s = record.status[stage];
        if (
          !s ||
          FINAL_STATES.has(s.state) ||
          s.deadline === undefined ||
          s.deadline * 1000 >= now
        ) {
          continue;
        }
        try {
          const updated = await store.setStage(record.delegation_id, stage, { state: 'expired' });
          const expired = {
            delegation_id: record.delegation_id,
            stage,
            sender: updated.sender_subject_id,
            record: updated,
          };
          out.push(expired);
          progressed = true;
          options.onExpired?.(expired);
        } catch (error) {
          // Finished or deleted meanwhile: nothing to expire.
          if (!isTasklineError(error, 'invalid_state') && !isTasklineError(error, 'not_found')) {
            throw error;
          }
        }
      }
      if (!progressed) skipped.add(record.delegation_id);
    }
  }
}

/** A running expiry checker. */
export interface ExpiryChecker {
  /** Runs one pass now (also what the timer runs). */
  runOnce(): Promise<ExpiredStage[]>;
  stop(): void;
}

/**
 * Runs {@link expireOverdue} every `intervalMs` (default 1 s) on the clock, one pass at a time;
 * failures are logged and retried on the next tick.
 */
export function startExpiryChecker(
  store: DelegationStore,
  options: ExpiryOptions & { intervalMs?: number } = {},
): ExpiryChecker {
  const clock = options.clock ?? systemClock;
  const intervalMs = options.intervalMs ?? 1_000;
  let timer: TimerHandle | undefined;
  let running: Promise<ExpiredStage[]> | undefined;
  let stopped = false;
  const runOnce = () => {
    running ??= expireOverdue(store, options).finally(() => {
      running = undefined;
    });
    return running;
  };
  const tick = () => {
    if (stopped) return;
    timer = clock.setTimer(intervalMs, () => {
      runOnce()
        .catch((error: unknown) =>
          logDelegation('warn', 'expiry check failed; retrying next tick', {
            error: errorMessage(error),
          }),
        )
        .finally(tick);
    });
  };
  tick();
  return {
    runOnce,
    stop() {
      stopped = true;
      timer?.cancel();
    },
  };
}
