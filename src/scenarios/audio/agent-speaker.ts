/**
 * The agent's side of the line in audio mode: an upstream `AudioOutput` that plays the
 * TTS audio in real time (nobody hears it) and records when each stretch of agent speech
 * started, how long it was and whether it was cut off. Plugged in as `session.output.audio`.
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';

/** One stretch of agent audio (performance.now() times). */
export interface AgentAudio {
  startedAt: number;
  /** Audio received for it, ms. */
  durationMs: number;
  endedAt?: number;
  interrupted?: boolean;
}

interface Playing extends AgentAudio {
  flushed: boolean;
  timer?: NodeJS.Timeout;
}

/** A real-time audio output that records agent speech timing. */
export class AgentSpeaker extends voice.AudioOutput {
  /** Every stretch of agent audio, in order. */
  readonly played: AgentAudio[] = [];
  /**
   * Emits "start" with the AgentAudio when agent audio begins, "frame" for each frame with
   * when it plays (performance.now() time; not the frames of a cut segment still arriving),
   * "cut" with the time agent audio was cut off, and "end" when a stretch ends.
   */
  readonly events = new EventEmitter<{
    start: [AgentAudio];
    frame: [AudioFrame, number];
    cut: [number];
    end: [AgentAudio];
  }>();
  private current: Playing | undefined;
  /** After an interruption, frames of the cut segment still arriving are dropped until flush. */
  private discarding = false;
  private lastEnd = 0;

  constructor(sampleRate = 24_000) {
    super(sampleRate, undefined, { pause: false });
  }

  /** True while agent audio is playing. */
  get playing(): boolean {
    return this.current !== undefined;
  }

  override async captureFrame(frame: AudioFrame): Promise<void> {
    if (this.discarding) return;
    await super.captureFrame(frame);
    if (!this.current) {
      const startedAt = Math.max(performance.now(), this.lastEnd);
      this.current = { startedAt, durationMs: 0, flushed: false };
      this.played.push(this.current);
      this.onPlaybackStarted(Date.now());
      this.events.emit('start', this.current);
    }
    this.events.emit('frame', frame, this.current.startedAt + this.current.durationMs);
    this.current.durationMs += (frame.samplesPerChannel / frame.sampleRate) * 1000;
  }

  override flush(): void {
    super.flush();
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    const segment = this.current;
    if (!segment || segment.flushed) return;
    segment.flushed = true;
    const endsAt = segment.startedAt + segment.durationMs;
    segment.timer = setTimeout(
      () => this.finish(segment, false),
      Math.max(0, endsAt - performance.now()),
    );
  }

  override clearBuffer(): void {
    const segment = this.current;
    if (!segment) return;
    if (!segment.flushed) this.discarding = true;
    this.finish(segment, true);
  }

  private finish(segment: Playing, interrupted: boolean): void {
    if (this.current !== segment) return;
    clearTimeout(segment.timer);
    const now = performance.now();
    const playedMs = Math.min(Math.max(0, now - segment.startedAt), segment.durationMs);
    segment.endedAt = now;
    segment.interrupted = interrupted;
    this.lastEnd = interrupted ? now : segment.startedAt + segment.durationMs;
    this.current = undefined;
    if (interrupted) this.events.emit('cut', now);
    this.onPlaybackFinished({ playbackPosition: playedMs / 1000, interrupted });
    this.events.emit('end', segment);
  }
}
