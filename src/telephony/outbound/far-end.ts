/**
 * The far end of an outbound call, as the bot perceives it beyond words: tones (the beep
 * after a voicemail greeting) and sound that is not speech (hold music), read from the
 * session's incoming audio, plus how to send it keys. One per session. In a room or audio
 * mode the session's input audio is read alongside upstream's pipeline (which sees every
 * frame unchanged); in text mode a test driver reports what the far end played
 * (`heardTone`, `heardSound`).
 */
import { EventEmitter } from 'node:events';
import type { ReadableStream } from 'node:stream/web';
import { voice } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { callOf } from '../../core/call.js';
import { logCall } from '../log.js';
import type { KeySender } from './key-sender.js';
import { ToneDetector, type ToneWindow } from './tone.js';

/** A steady tone the far end played. */
export interface ToneHeard {
  hz: number;
  durationMs: number;
  /** Call-clock time the tone ended. */
  at: number;
}

/** Sound from the far end that is not speech, going on for `sinceMs` with no words heard. */
export interface SoundHeard {
  sinceMs: number;
  at: number;
}

/** The events of a {@link FarEnd}. */
export interface FarEndEvents {
  tone: [ToneHeard];
  sound: [SoundHeard];
}

/** Quietest window counted as sound, dBFS. */
const SOUND_LEVEL_DB = -50;
/** A quiet stretch this long ends a stretch of sound. */
const SOUND_GAP_MS = 1_500;
/** How often an ongoing stretch of sound is reported. */
const SOUND_EVERY_MS = 500;
/** How often a newly started agent activity is looked for, to read its audio too. */
const CHECK_EVERY_MS = 100;

/** What the bot perceives of the far end besides its words, and how it sends keys there. */
export class FarEnd {
  readonly session: voice.AgentSession;
  /** How keys reach the far end (a room, a linked test line); see {@link roomKeySender}. */
  keys: KeySender | undefined;
  /** Call-clock time the far end answered (set by `callOut`). */
  answeredAt: number | undefined;
  private readonly emitter = new EventEmitter<FarEndEvents>();
  private _lastTone: ToneHeard | undefined;
  private tapped = false;
  private soundSince: number | undefined;
  private lastLoudAt = 0;
  private lastSoundReport = 0;

  constructor(session: voice.AgentSession) {
    this.session = session;
    this.emitter.setMaxListeners(32);
  }

  /** The last tone heard, if any. */
  get lastTone(): ToneHeard | undefined {
    return this._lastTone;
  }

  /** Reports a tone the far end played (the audio tap calls this; so does a text-mode driver). */
  heardTone(tone: { hz: number; durationMs: number }): void {
    const heard: ToneHeard = { ...tone, at: callOf(this.session).clock.now() };
    this._lastTone = heard;
    logCall(callOf(this.session), 'debug', 'far end: tone', { hz: tone.hz, ms: tone.durationMs });
    this.emitter.emit('tone', heard);
  }

  /** Reports sound that is not speech, ongoing for `sinceMs` with no words heard. */
  heardSound(sinceMs: number): void {
    this.emitter.emit('sound', { sinceMs, at: callOf(this.session).clock.now() });
  }

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<K extends keyof FarEndEvents>(
    event: K,
    listener: (...args: FarEndEvents[K]) => void,
  ): () => void {
    this.emitter.on(event, listener as never);
    return () => this.emitter.off(event, listener as never);
  }

  /**
   * Starts reading the session's incoming audio for tones and non-speech sound (once; later
   * calls do nothing). Returns false when the session has no audio input (text mode).
   *
   * Reads a branch of each agent activity's input audio (`session._subscribeAudioStream()`,
   * what upstream's `voice.AMD` reads; pinned by tests/upstream/subscribe_audio.test.ts): an
   * inline task runs in its own activity, so each new activity is subscribed as it starts
   * (by the far-end tasks as they enter, and checked every 100 ms until the session closes). Wrapping `session.input.audio` instead
   * does not work after the session started: in @livekit/agents 1.9.0 the input's change
   * callback is unbound (`AgentSession.onAudioInputChanged`), so the running activity keeps
   * reading the old input.
   */
  listenToAudio(): boolean {
    if (this.tapped) return true;
    if (!this.session.input.audio) return false;
    this.tapped = true;
    const subscribe = () => this.follow();
    const timer = setInterval(subscribe, CHECK_EVERY_MS);
    timer.unref?.();
    const onWords = (ev: voice.UserInputTranscribedEvent) => {
      if (ev.isFinal && ev.transcript.trim()) this.soundSince = undefined;
    };
    this.session.on(voice.AgentSessionEventTypes.UserInputTranscribed, onWords);
    this.session.once(voice.AgentSessionEventTypes.Close, () => {
      clearInterval(timer);
      this.session.off(voice.AgentSessionEventTypes.UserInputTranscribed, onWords);
    });
    subscribe();
    return true;
  }

  /**
   * Reads the audio of the session's current activity too, if it is new. A far-end task calls
   * this from its `onEnter`, before the session attaches the input to the task's activity,
   * so no frame of a beep that comes as the task starts is missed (frames meanwhile wait in
   * the input). Does nothing until `listenToAudio` was called.
   */
  follow(): void {
    if (!this.tapped) return;
    const activity = this.session._activity;
    if (!activity || this.followed.has(activity)) return;
    const stream = this.session._subscribeAudioStream();
    if (!stream) return;
    this.followed.add(activity);
    void this.read(stream);
  }

  private readonly followed = new WeakSet<object>();

  /** Reads one activity's branch of the input audio until it ends. */
  private async read(stream: ReadableStream<AudioFrame>): Promise<void> {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        try {
          this.onFrame(value);
        } catch {
          // analysis must never disturb the call
        }
      }
    } catch {
      // the activity closed its audio
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  private detector: ToneDetector | undefined;

  private onFrame(frame: AudioFrame): void {
    if (!this.detector || this.detector.sampleRate !== frame.sampleRate) {
      this.detector = new ToneDetector(frame.sampleRate, { onWindow: (w) => this.onWindow(w) });
    }
    const channels = frame.channels;
    const samples =
      channels === 1
        ? frame.data.subarray(0, frame.samplesPerChannel)
        : Int16Array.from({ length: frame.samplesPerChannel }, (_, i) => frame.data[i * channels]!);
    for (const tone of this.detector.push(samples)) this.heardTone(tone);
  }

  private onWindow(w: ToneWindow): void {
    const now = callOf(this.session).clock.now();
    const speaking = this.session.userState === 'speaking';
    if (w.levelDb >= SOUND_LEVEL_DB && !w.tonal && !speaking) {
      this.lastLoudAt = now;
      this.soundSince ??= now;
      if (now - this.lastSoundReport >= SOUND_EVERY_MS) {
        this.lastSoundReport = now;
        this.heardSound(now - this.soundSince);
      }
    } else if (this.soundSince !== undefined && now - this.lastLoudAt > SOUND_GAP_MS) {
      this.soundSince = undefined;
    }
  }
}

const farEnds = new WeakMap<voice.AgentSession, FarEnd>();

/** The far end of `session`'s call (created on first use). */
export function farEndOf(session: voice.AgentSession): FarEnd {
  let farEnd = farEnds.get(session);
  if (!farEnd) {
    farEnd = new FarEnd(session);
    farEnds.set(session, farEnd);
  }
  return farEnd;
}
