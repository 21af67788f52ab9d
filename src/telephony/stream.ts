import { voice } from '@livekit/agents';
import { callOf, type DtmfEvent } from '../core/call.js';
import { checkOptions, type OptionTable, whole } from '../core/options.js';

/** Options for {@link dtmfStream}. */
export interface DtmfStreamOptions {
  /** Ends the stream when aborted. */
  signal?: AbortSignal;
  /** Keys kept while nobody reads, 1 to 10,000; the oldest are dropped beyond this (default 64). */
  maxBuffered?: number;
}

/** The cap of {@link DtmfStreamOptions}, with its accepted range and default. */
const STREAM_CAP = {
  maxBuffered: { range: whole(1, 10_000), default: 64 },
} as const satisfies OptionTable;

/**
 * The caller's key presses as a typed async iterable, for code outside tasks (a
 * supervisor, a barge-in shortcut). It ends on hang-up, when the session closes, or when
 * `signal` aborts; keys from other participants never appear (the call filters them).
 * Throws a TasklineError (`invalid_argument`) for a `maxBuffered` outside its range.
 *
 * @example
 * for await (const key of dtmfStream(session, { signal })) if (key.digit === '0') transfer();
 */
export function dtmfStream(
  session: voice.AgentSession,
  options: DtmfStreamOptions = {},
): AsyncIterableIterator<DtmfEvent> {
  // NaN or Infinity would leave the queue uncapped: refused, with the range.
  const { maxBuffered: max } = checkOptions(STREAM_CAP, options, { owner: 'dtmfStream' });
  const call = callOf(session);
  const queue: DtmfEvent[] = [];
  let ended = call.hungUp !== undefined || options.signal?.aborted === true;
  let wake: (() => void) | undefined;

  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const end = () => {
    if (ended) return;
    ended = true;
    cleanup();
    notify();
  };
  const offDtmf = call.on('dtmf', (ev) => {
    queue.push(ev);
    if (queue.length > max) queue.shift();
    notify();
  });
  const offHangup = call.on('hangup', end);
  const onClose = () => end();
  session.on(voice.AgentSessionEventTypes.Close, onClose);
  options.signal?.addEventListener('abort', end, { once: true });
  function cleanup() {
    offDtmf();
    offHangup();
    session.off(voice.AgentSessionEventTypes.Close, onClose);
    options.signal?.removeEventListener('abort', end);
  }
  if (ended) cleanup();

  const iterator: AsyncIterableIterator<DtmfEvent> = {
    async next(): Promise<IteratorResult<DtmfEvent>> {
      for (;;) {
        const ev = queue.shift();
        if (ev) return { value: ev, done: false };
        if (ended) return { value: undefined, done: true };
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
    async return(): Promise<IteratorResult<DtmfEvent>> {
      end();
      queue.length = 0;
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
