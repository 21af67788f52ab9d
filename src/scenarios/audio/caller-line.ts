/**
 * The caller's side of the line in audio mode: an upstream `AudioInput` that streams 10 ms
 * frames in real time, like a phone line — silence when the caller is quiet, their
 * synthesised speech when they talk — so Silero VAD, endpointing and barge-in run on real
 * audio timing. A {@link LineProcessor} makes it a phone line: level, noise, the agent's
 * echo, G.711. Plugged in as `session.input.audio` (no room needed).
 */
import { performance } from 'node:perf_hooks';
import { ReadableStream, type ReadableStreamDefaultController } from 'node:stream/web';
import { voice } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import type { Pcm } from '../../testing/espeak.js';
import type { LineProcessor } from './phone-line.js';

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
/** Echo kept ahead of the line at most (agent audio arrives faster than it plays). */
const MAX_ECHO_CHUNKS = 4_096;

interface EchoChunk {
  /** Line sample where it starts. */
  at: number;
  samples: Float32Array;
}

/** A real-time audio input fed with caller speech (16 kHz mono). */
export class CallerLine extends voice.AudioInput {
  readonly sampleRate = 16_000;
  private controller: ReadableStreamDefaultController<AudioFrame> | undefined;
  private readonly queue: Queued[] = [];
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private framesSent = 0;
  private closed = false;
  private echoes: EchoChunk[] = [];

  constructor(private lineProcessor?: LineProcessor) {
    super();
    const stream = new ReadableStream<AudioFrame>({
      start: (controller) => {
        this.controller = controller;
      },
    });
    this.multiStream.addInputStream(stream);
  }

  /** Makes the line a phone line (set before {@link start}). */
  useProcessor(processor: LineProcessor): void {
    this.lineProcessor = processor;
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

  /**
   * Puts `pcm` on the line after what is queued, `gainDb` louder (clipping at full scale);
   * resolves once its last sample was sent.
   */
  speak(pcm: Pcm, gainDb = 0): Promise<Spoken> {
    if (pcm.sampleRate !== this.sampleRate) {
      throw new RangeError(`the caller line runs at ${this.sampleRate} Hz, got ${pcm.sampleRate}`);
    }
    const samples = gainDb === 0 ? pcm.samples : scaled(pcm.samples, 10 ** (gainDb / 20));
    return new Promise((resolve) => {
      this.queue.push({ samples, offset: 0, done: resolve });
    });
  }

  /** Queues `ms` of the caller saying nothing (a pause mid-sentence: still their turn). */
  pause(ms: number): Promise<Spoken> {
    const samples = new Int16Array(Math.round((this.sampleRate * ms) / 1000));
    return this.speak({ samples, sampleRate: this.sampleRate });
  }

  /**
   * The agent's audio (16 kHz) that plays from `playAt` (performance.now() time): heard back
   * on the line after the line's echo delay, when it has one.
   */
  echo(samples: Float32Array, playAt: number): void {
    const delay = this.lineProcessor?.echoDelayMs;
    if (delay === undefined || !this.timer || this.echoes.length >= MAX_ECHO_CHUNKS) return;
    const at = Math.round(((playAt + delay - this.startedAt) * this.sampleRate) / 1000);
    this.echoes.push({ at, samples });
  }

  /** The agent's audio stopped at `at` (an interruption): drops the echo of what never played. */
  cutEcho(at: number): void {
    const delay = this.lineProcessor?.echoDelayMs;
    if (delay === undefined) return;
    const end = Math.round(((at + delay - this.startedAt) * this.sampleRate) / 1000);
    this.echoes = this.echoes.flatMap((c) =>
      c.at >= end
        ? []
        : c.at + c.samples.length <= end
          ? [c]
          : [{ at: c.at, samples: c.samples.subarray(0, end - c.at) }],
    );
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
    const from = this.framesSent * size;
    this.framesSent += 1;
    const line = this.lineProcessor;
    const out = line ? line.process(data, this.echoAt(from, size)) : data;
    try {
      this.controller?.enqueue(new AudioFrame(out, this.sampleRate, 1, size));
    } catch {
      // the session closed the stream
    }
  }

  /** The echo falling on line samples [from, from+size), or undefined when there is none. */
  private echoAt(from: number, size: number): Float32Array | undefined {
    if (!this.echoes.length) return undefined;
    const end = from + size;
    this.echoes = this.echoes.filter((c) => c.at + c.samples.length > from);
    let out: Float32Array | undefined;
    for (const c of this.echoes) {
      if (c.at >= end) continue;
      out ??= new Float32Array(size);
      const start = Math.max(from, c.at);
      const stop = Math.min(end, c.at + c.samples.length);
      for (let i = start; i < stop; i++) out[i - from] = out[i - from]! + c.samples[i - c.at]!;
    }
    return out;
  }
}

function scaled(samples: Int16Array, gain: number): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32_768, Math.min(32_767, Math.round(samples[i]! * gain)));
  }
  return out;
}
