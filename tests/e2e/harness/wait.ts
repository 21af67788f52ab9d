/**
 * Bounded waits on events for the e2e suite: a condition is checked whenever its source
 * says something changed (no polling sleeps), and the wait fails with what it waited for
 * once `timeoutMs` passed — or at once when `broken()` says it can no longer happen.
 */

/**
 * Resolves the first truthy value of `check()`, re-checked on each call of a listener put
 * in `listeners`; rejects after `timeoutMs` with `what` in the message.
 */
export function waitFor<T>(
  check: () => T | undefined,
  listeners: Set<() => void>,
  timeoutMs: number,
  what: string,
  broken?: () => string | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      listeners.delete(listener);
    };
    const listener = () => {
      const value = check();
      if (value !== undefined && value !== null && value !== false) {
        done();
        resolve(value as T);
        return;
      }
      const why = broken?.();
      if (why) {
        done();
        reject(new Error(`gave up waiting for ${what}: ${why}`));
      }
    };
    timer = setTimeout(() => {
      done();
      reject(new Error(`gave up waiting for ${what} after ${timeoutMs} ms`));
    }, timeoutMs);
    listeners.add(listener);
    listener();
  });
}
