import { type RunResultWatchHandle, wrapRunResultWatch } from '../upstream/internals.js';

/**
 * Workaround for livekit/agents-js#2354 (@livekit/agents 1.9.0): the async-tool executor
 * hands `RunResult._watchHandle` a bare Promise (its deferred reply task), but RunResult
 * only understands SpeechHandles and Tasks (`addDoneCallback`, `done`). Once a session has
 * used `session.run()` — which the SimulatedCaller does for every `say()` — each later
 * async-tool result throws a TypeError and an open run never settles. This adapts a
 * thenable into the handle shape RunResult expects. It only touches `session.run()`, a
 * testing API, so it lives in the testing kit, installed by the first
 * `SimulatedCaller.start()` or `new ScriptedLLM()` (not on import: the package has no
 * import side effects). tests/upstream/async_tools.test.ts pins the bug; delete this file
 * when it fails there.
 */
interface PromiseHandle {
  readonly done: boolean;
  addDoneCallback(cb: () => void): void;
  removeDoneCallback(cb: () => void): void;
}

const adapted = new WeakMap<PromiseLike<unknown>, PromiseHandle>();

function adapt(promise: PromiseLike<unknown>): PromiseHandle {
  let handle = adapted.get(promise);
  if (handle) return handle;
  let settled = false;
  const callbacks = new Set<() => void>();
  const finish = () => {
    settled = true;
    for (const cb of [...callbacks]) cb();
    callbacks.clear();
  };
  promise.then(finish, finish);
  handle = {
    get done() {
      return settled;
    },
    addDoneCallback(cb) {
      if (settled) cb();
      else callbacks.add(cb);
    },
    removeDoneCallback(cb) {
      callbacks.delete(cb);
    },
  };
  adapted.set(promise, handle);
  return handle;
}

function isBareThenable(h: unknown): h is PromiseLike<unknown> {
  return (
    typeof h === 'object' &&
    h !== null &&
    typeof (h as { then?: unknown }).then === 'function' &&
    typeof (h as { addDoneCallback?: unknown }).addDoneCallback !== 'function'
  );
}

const marker = Symbol.for('taskline.workaround.2354');

/** Installs the workaround on upstream's RunResult (idempotent, process-wide). */
export function installRunResultWorkaround(): void {
  wrapRunResultWatch(marker, (handle) =>
    isBareThenable(handle) ? (adapt(handle) as unknown as RunResultWatchHandle) : handle,
  );
}
