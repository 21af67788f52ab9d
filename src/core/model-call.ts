import { AsyncLocalStorage } from 'node:async_hooks';
import type { llm } from '@livekit/agents';
import type { Clock } from './clock.js';
import { TasklineError } from './errors.js';

/** What went wrong with one model call (undefined while it is fine). */
export interface ModelCallWatch {
  failure?: Error;
}

/**
 * Upstream reports a failed completion only as an `error` event on the LLM instance, which
 * every call on that model shares, and the call's stream then just ends as if it were
 * complete. The event is emitted from the call's own async context, so a call started
 * inside its own scope gets exactly its own failure — never another concurrent call's.
 */
const callScope = new AsyncLocalStorage<ModelCallWatch>();
const watchedModels = new WeakSet<llm.LLM>();

function watchModel(model: llm.LLM): void {
  if (watchedModels.has(model)) return;
  watchedModels.add(model);
  // First in line: a later listener may throw (an AgentSession re-emits the error as its own
  // 'error' event, which throws when nobody listens), and emit() stops at the first throw.
  model.prependListener('error', (ev) => {
    const watch = callScope.getStore();
    if (watch && !watch.failure) watch.failure = ev.error;
  });
}

/**
 * Starts one model call (`start` calls `model.chat(...)`) so that its failure, if upstream
 * reports one, lands in the returned watch. Read `watch.failure` once the stream has ended:
 * a stream that ended with a failure set did not complete, whatever it delivered.
 */
export function watchModelCall<S>(
  model: llm.LLM,
  start: () => S,
): { stream: S; watch: ModelCallWatch } {
  watchModel(model);
  const watch: ModelCallWatch = {};
  const stream = callScope.run(watch, start);
  return { stream, watch };
}

/**
 * Reads a model call to its end, bounded: a stream that sends nothing for `idleMs` (a model
 * or network gone silent mid-answer, which upstream's request timeout does not cover) is
 * closed and recorded as a `timeout` failure in `watch`. Returns every chunk received.
 */
export async function readModelCall(
  stream: AsyncIterable<llm.ChatChunk> & { close(): void },
  watch: ModelCallWatch,
  bound: { idleMs: number; clock: Clock },
): Promise<llm.ChatChunk[]> {
  const chunks: llm.ChatChunk[] = [];
  const it = stream[Symbol.asyncIterator]();
  for (;;) {
    let timer: { cancel(): void } | undefined;
    const idle = new Promise<'idle'>((resolve) => {
      timer = bound.clock.setTimer(bound.idleMs, () => resolve('idle'));
    });
    const next = await Promise.race([it.next(), idle]);
    timer?.cancel();
    if (next === 'idle') {
      watch.failure ??= new TasklineError(
        'timeout',
        `The model sent nothing for ${bound.idleMs} ms mid-answer; the call was abandoned.`,
      );
      stream.close();
      return chunks;
    }
    if (next.done) return chunks;
    chunks.push(next.value);
  }
}
