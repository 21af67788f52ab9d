/**
 * Where the time of a turn goes, from upstream's own events: when the VAD reported the end
 * of the caller's speech, when the final transcript came, when the session ended the turn
 * (its `eou_metrics`), the TTS's first byte (`tts_metrics`) and the first agent audio — each
 * in ms after the caller really stopped speaking (the audio caller knows that instant).
 */
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';

/** One turn's stages, ms after the end of the caller's speech (ttfb: a duration). */
export interface TurnStages {
  /** The VAD reported the end of speech. */
  vadMs?: number;
  /** The recogniser's final transcript arrived. */
  sttMs?: number;
  /** The session ended the caller's turn (committed it). */
  turnEndMs?: number;
  /** First byte of the first TTS request made after the end of speech (its duration). */
  ttsFirstByteMs?: number;
  /** The first agent audio started. */
  firstAudioMs?: number;
  /**
   * The first agent audio that started after the turn ended: the answer itself (after an
   * acknowledgement said while the turn was still open, the same as `firstAudioMs` otherwise).
   */
  answerMs?: number;
}

interface Marks {
  vad: number[];
  stt: number[];
  eou: number[];
  tts: { at: number; ttfbMs: number; durationMs: number }[];
}

/** Records a session's turn events (performance.now() times) for {@link StageRecorder.stagesSince}. */
export class StageRecorder {
  private readonly marks: Marks = { vad: [], stt: [], eou: [], tts: [] };

  constructor(session: voice.AgentSession) {
    session.on(voice.AgentSessionEventTypes.UserStateChanged, (ev) => {
      if (ev.oldState === 'speaking' && ev.newState !== 'speaking') {
        this.marks.vad.push(performance.now());
      }
    });
    session.on(voice.AgentSessionEventTypes.UserInputTranscribed, (ev) => {
      if (ev.isFinal && ev.transcript.trim()) this.marks.stt.push(performance.now());
    });
    session.on(voice.AgentSessionEventTypes.MetricsCollected, (ev) => {
      const m = ev.metrics;
      if (m.type === 'eou_metrics') this.marks.eou.push(performance.now());
      if (m.type === 'tts_metrics') {
        this.marks.tts.push({ at: performance.now(), ttfbMs: m.ttfbMs, durationMs: m.durationMs });
      }
    });
  }

  /**
   * True while the caller's turn whose speech ended at `endedAt` is still open: the VAD or
   * the recogniser has heard it, but the session has not ended the turn (an acknowledgement
   * may be playing meanwhile, and more speech joins the same turn).
   */
  turnOpenSince(endedAt: number): boolean {
    const heard = [...this.marks.vad, ...this.marks.stt].some((t) => t >= endedAt);
    return heard && !this.marks.eou.some((t) => t >= endedAt);
  }

  /** When the session ended the caller's turn whose speech ended at `endedAt`, if it has. */
  turnEndSince(endedAt: number): number | undefined {
    return this.marks.eou.find((t) => t >= endedAt);
  }

  /** The stages of the turn whose speech ended at `endedAt` (first event of each kind after it). */
  stagesSince(
    endedAt: number,
    firstAudioAt: number | undefined,
    audioStarts: readonly number[] = [],
  ): TurnStages {
    const after = (times: number[]) => times.find((t) => t >= endedAt);
    const rel = (t: number | undefined) => (t === undefined ? undefined : Math.round(t - endedAt));
    // A TTS request is timed once it has finished: its start is `at - durationMs`.
    const tts = this.marks.tts.find((m) => m.at - m.durationMs >= endedAt);
    const turnEnd = after(this.marks.eou);
    // Audio already queued when the turn ended starts a moment later: allow one frame.
    const answer =
      turnEnd === undefined
        ? undefined
        : audioStarts.find((t) => t >= turnEnd - 20 && t >= endedAt);
    const stages: TurnStages = {
      vadMs: rel(after(this.marks.vad)),
      sttMs: rel(after(this.marks.stt)),
      turnEndMs: rel(turnEnd),
      ttsFirstByteMs: tts ? Math.round(tts.ttfbMs) : undefined,
      firstAudioMs: rel(firstAudioAt),
      answerMs: rel(answer),
    };
    return Object.fromEntries(
      Object.entries(stages).filter(([, v]) => v !== undefined),
    ) as TurnStages;
  }
}

/** One line for a turn: "vad 282 · stt 301 · turn end 903 · tts 1st byte 71 · first audio 330 ms". */
export function formatStages(s: TurnStages): string {
  const parts: string[] = [];
  if (s.vadMs !== undefined) parts.push(`vad ${s.vadMs}`);
  if (s.sttMs !== undefined) parts.push(`stt ${s.sttMs}`);
  if (s.turnEndMs !== undefined) parts.push(`turn end ${s.turnEndMs}`);
  if (s.ttsFirstByteMs !== undefined) parts.push(`tts 1st byte ${s.ttsFirstByteMs}`);
  if (s.firstAudioMs !== undefined) parts.push(`first audio ${s.firstAudioMs}`);
  if (s.answerMs !== undefined && s.answerMs !== s.firstAudioMs) parts.push(`answer ${s.answerMs}`);
  return parts.length ? `${parts.join(' · ')} ms` : '';
}
