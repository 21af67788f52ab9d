/** A scheduled callback that can be cancelled before it fires. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * Every timer taskline uses goes through a Clock, so tests can swap in a virtual one
 * and a path with five 8-second no-input timeouts runs in milliseconds.
 */
export interface Clock {
  /** Milliseconds since the epoch, as this clock sees it. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds unless cancelled first. */
  setTimer(ms: number, fn: () => void): TimerHandle;
  /** Resolves after `ms` milliseconds; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock: the default everywhere outside tests. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms, signal) {
    return sleepOn(systemClock, ms, signal);
  },
};

/** Implements `sleep` on top of any clock's `setTimer`, honouring an abort signal. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
