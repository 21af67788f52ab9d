/**
 * The caller's side of the line in audio mode: an upstream `AudioInput` that streams 10 ms
 * frames in real time, like a phone line — silence when the caller is quiet, their
 * synthesised speech when they talk — so Silero VAD, endpointing and barge-in run on real
 * audio timing. Plugged in as `session.input.audio` (no room needed).
 */
import { performance } from 'node:perf_hooks';
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import { voice } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import type { Pcm } from '../../testing/espeak.js';

/** When an utterance was on the line (performance.now() times). */
export interface Spoken {
  startedAt: number;
  endedAt: number;
}

interface Queued {
  samples: Int16Array;
  offset: number;
  startedAt?: number;
  done: (spoken: Spoken) => void;
}

/** Frame length of the line. */
export const FRAME_MS = 10;
/** Frames pushed at most in one tick after the event loop was late. */
const MAX_BURST = 20;

/** A real-time audio input fed with caller speech (16 kHz mono). */
export class CallerLine extends voice.AudioInput {
  readonly sampleRate = 16_000;
  private controller: ReadableStreamDefaultController<AudioFrame> | undefined;
  private readonly queue: Queued[] = [];
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private framesSent = 0;
  private closed = false;

  constructor() {
    super();
    const stream = new ReadableStream<AudioFrame>({
      start: (controller) => {
        this.controller = controller;
      },
    });
    this.multiStream.addInputStream(stream);
  }

  /** Starts streaming (silence until the caller speaks). */
  start(): void {
    if (this.timer || this.closed) return;
    this.startedAt = performance.now();
    this.framesSent = 0;
    this.tick();
  }

  /** True while caller speech is queued or on the line. */
  get speaking(): boolean {
    return this.queue.length > 0;
  }

  /** Puts `pcm` on the line after what is queued; resolves once its last sample was sent. */
  speak(pcm: Pcm): Promise<Spoken> {
    if (pcm.sampleRate !== this.sampleRate) {
      throw new RangeError(`the caller line runs at ${this.sampleRate} Hz, got ${pcm.sampleRate}`);
    }
    return new Promise((resolve) => {
      this.queue.push({ samples: pcm.samples, offset: 0, done: resolve });
    });
  }

  override async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      this.controller?.close();
    } catch {
      // already closed by the session
    }
    for (const q of this.queue.splice(0)) {
      const now = performance.now();
      q.done({ startedAt: q.startedAt ?? now, endedAt: now });
    }
    await super.close();
  }

  private tick = (): void => {
    if (this.closed) return;
    const due = Math.floor((performance.now() - this.startedAt) / FRAME_MS) - this.framesSent;
    for (let i = 0; i < Math.min(due, MAX_BURST); i++) this.sendFrame();
    if (due > MAX_BURST) this.framesSent += due - MAX_BURST; // drop what we are too late for
    const nextAt = this.startedAt + (this.framesSent + 1) * FRAME_MS;
    this.timer = setTimeout(this.tick, Math.max(0, nextAt - performance.now()));
  };

  private sendFrame(): void {
    const size = (this.sampleRate * FRAME_MS) / 1000;
    const data = new Int16Array(size);
    let filled = 0;
    const now = performance.now();
    while (filled < size && this.queue.length) {
      const q = this.queue[0]!;
      q.startedAt ??= now;
      const take = Math.min(size - filled, q.samples.length - q.offset);
      data.set(q.samples.subarray(q.offset, q.offset + take), filled);
      filled += take;
      q.offset += take;
      if (q.offset >= q.samples.length) {
        this.queue.shift();
        q.done({ startedAt: q.startedAt, endedAt: now });
      }
    }
    this.framesSent += 1;
    try {
      this.controller?.enqueue(new AudioFrame(data, this.sampleRate, 1, size));
    } catch {
      // the session closed the stream
    }
  }
}
