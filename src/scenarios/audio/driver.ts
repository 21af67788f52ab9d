/**
 * The caller of an audio-mode scenario: speaks each turn into the session's audio input
 * in real time (flite or espeak-ng speech, registered with the transcription oracle when
 * the oracle hears), through a phone line (level, noise, echo, G.711), presses keys through
 * the call context while the agent talks, talks over the agent for a barge-in, records what
 * the agent's recogniser heard beside the scripted words, and measures each turn from the
 * end of the caller's speech to the first agent audio.
 *
 * Over 500 lines: one real-time turn loop whose waits (prompt, floor, quiet, transcripts) share its timing state.
 */
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { attachCall, type CallContext } from '../../core/call.js';
import { TasklineError } from '../../core/errors.js';
import {
  applyRecognizerHints,
  type PromptableStt,
  promptHints,
} from '../../core/recognizer-hints.js';
import { phraseWords } from '../../testing/hint-grammar.js';
import { agentListening } from '../../testing/listening.js';
import type { TranscriptLine } from '../../testing/simulated-caller.js';
import type { CallerSpeech, TranscriptionEvent } from '../../testing/speech-endpoints.js';
import { speak, type Voice } from '../../testing/voices.js';
import type { CallDriver, TurnMeasure } from '../driver.js';
import { durationMs, type LineSpec, type TurnSpec } from '../schema.js';
import { AgentSpeaker } from './agent-speaker.js';
import { CallerLine } from './caller-line.js';
import { LineProcessor } from './phone-line.js';
import { StageRecorder } from './stages.js';

/** Who is calling and over what line (one call). */
export interface AudioCaller {
  /** The caller's voice. */
  voice: Voice;
  /** The phone line (clean when empty). */
  line: LineSpec;
  /** The transcription oracle to register speech with, when the oracle hears the caller. */
  oracle?: CallerSpeech;
  /** Pass what the active capture expects to the recogniser (default true). */
  hints?: boolean;
  /** Seed of the line's noise. */
  seed?: number;
}

/** Timing knobs of the audio caller (all bounded waits). */
export interface AudioDriverOptions {
  /** How long the agent must stay quiet before the next turn (default 600 ms). */
  quietMs?: number;
  /** How long to wait for the agent to start answering a turn (default 8 s). */
  answerWithinMs?: number;
  /** Upper bound on any one wait (default 45 s). */
  guardMs?: number;
  /** Default offset of a barge-in into the agent's prompt (default 500 ms). */
  bargeInAfterMs?: number;
}

const POLL_MS = 20;
/** Longest the driver waits at the end of a call for transcriptions still being made. */
const TRANSCRIPTION_GRACE_MS = 15_000;
const IDLE = new Set<voice.AgentState>(['listening', 'idle']);
const CALLER = 'caller';

type PauseSpec = { after: number; for: number | string };

/** The words of a line between its pauses, each with the pause before it (ms). */
function splitAtPauses(text: string, pauses: PauseSpec[]): { words: string; pauseMs: number }[] {
  const words = text.split(/\s+/).filter(Boolean);
  const parts: { words: string; pauseMs: number }[] = [];
  let from = 0;
  let pauseMs = 0;
  for (const pause of [...pauses].sort((a, b) => a.after - b.after)) {
    const at = Math.min(pause.after, words.length);
    if (at <= from) continue;
    parts.push({ words: words.slice(from, at).join(' '), pauseMs });
    from = at;
    pauseMs = durationMs(pause.for);
  }
  if (from < words.length) parts.push({ words: words.slice(from).join(' '), pauseMs });
  return parts;
}

/** One caller utterance on the line (performance.now() times; no end while it is spoken). */
interface Utterance {
  line: TranscriptLine;
  startedAt: number;
  endedAt?: number;
}

/** Agent audio (24 kHz from the TTS) at the caller line's 16 kHz, for the echo. */
function to16k(frame: AudioFrame): Float32Array {
  const ratio = frame.sampleRate / 16_000;
  const n = Math.floor(frame.samplesPerChannel / ratio);
  const out = new Float32Array(n);
  const data = frame.data;
  for (let i = 0; i < n; i++) {
    const x = i * ratio;
    const k = Math.floor(x);
    const t = x - k;
    out[i] = (data[k] ?? 0) * (1 - t) + (data[k + 1] ?? data[k] ?? 0) * t;
  }
  return out;
}

/** Whether a turn speaks over the agent (so the turn before it must not wait for quiet). */
function overlaps(turn: TurnSpec | undefined): boolean {
  if (!turn || typeof turn === 'string') return false;
  return 'barge_in' in turn || ('keys' in turn && turn.after !== undefined);
}

/** An audio caller bound to one session. */
export class AudioDriver implements CallDriver {
  readonly transcript: TranscriptLine[] = [];
  readonly visited: string[] = [];
  private readonly call: CallContext;
  private readonly line = new CallerLine();
  private readonly speaker = new AgentSpeaker();
  private readonly stages: StageRecorder;
  /** When the caller's last spoken turn ended (undefined after keys or silence). */
  private lastSpeechEndedAt: number | undefined;
  private stopHints: (() => void) | undefined;
  /** The caller's utterances with when they were on the line, for what was heard. */
  private readonly utterances: Utterance[] = [];
  private readonly closeHandlers: Array<() => void> = [];
  private inFlight = 0;
  /** Caller lines said while a secret was expected: what was heard is masked too. */
  private readonly masked = new WeakSet<TranscriptLine>();
  private closed = false;
  /** Caller turns the agent has taken (user messages committed to the conversation). */
  private heard = 0;
  /** When the agent last took the caller's words (performance.now()). */
  private takenAt = 0;
  private readonly closedPromise: Promise<void>;
  private readonly quietMs: number;
  private readonly answerWithinMs: number;
  private readonly guardMs: number;
  private readonly bargeInAfterMs: number;

  constructor(
    private readonly session: voice.AgentSession,
    callId: string,
    private readonly caller: AudioCaller,
    options: AudioDriverOptions = {},
  ) {
    this.quietMs = options.quietMs ?? 600;
    this.answerWithinMs = options.answerWithinMs ?? 8_000;
    this.guardMs = options.guardMs ?? 45_000;
    this.bargeInAfterMs = options.bargeInAfterMs ?? 500;
    this.call = attachCall(session, { callId, callerIdentity: CALLER });
    this.stages = new StageRecorder(session);
    session.input.audio = this.line;
    session.output.audio = this.speaker;
    const visit = () => {
      try {
        const id = session.currentAgent.id;
        if (this.visited.at(-1) !== id) this.visited.push(id);
      } catch {
        // no agent yet
      }
    };
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, visit);
    session.on(voice.AgentSessionEventTypes.SpeechCreated, visit);
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (ev) => {
      visit();
      const item = ev.item;
      if (item.type === 'message' && item.role === 'user') {
        this.heard += 1;
        this.takenAt = performance.now();
      }
      if (item.type === 'message' && item.role === 'assistant' && item.textContent) {
        // Upstream keeps the whole text of a cut-off line (no word timing here): mark it.
        // The line is dated when the agent started saying it (upstream's createdAt), so a
        // prompt cut off by the next turn belongs to the turn it was said in.
        const text = item.interrupted ? `${item.textContent} (interrupted)` : item.textContent;
        this.transcript.push({ role: 'agent', text, via: 'speech', at: item.createdAt });
      }
    });
    this.speaker.events.on('frame', (frame, playAt) => this.line.echo(to16k(frame), playAt));
    this.speaker.events.on('cut', (at) => this.line.cutEcho(at));
    this.closedPromise = new Promise((resolve) => {
      session.once(voice.AgentSessionEventTypes.Close, () => {
        this.closed = true;
        resolve();
      });
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async start(agent: voice.Agent, first?: TurnSpec): Promise<void> {
    this.caller.oracle?.reset();
    this.line.useProcessor(
      await LineProcessor.create(this.caller.line, this.caller.voice, this.caller.seed),
    );
    if (this.caller.hints !== false) {
      const stt = this.session.stt as Partial<PromptableStt> | undefined;
      if (typeof stt?.updateOptions === 'function') {
        this.stopHints = applyRecognizerHints(this.call, promptHints(stt as PromptableStt));
      }
    }
    let spoke = false;
    const onSpeech = () => {
      spoke = true;
    };
    this.session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    await this.session.start({ agent });
    this.line.start();
    const since = performance.now();
    // An outbound bot speaks second: it dials, then listens. When it has said nothing and
    // waits for the far end (quietly, for `quietMs`), the first turn starts at once instead
    // of after `answerWithinMs` of waiting for a greeting.
    let listeningSince: number | undefined;
    await this.until(() => {
      if (this.closed || this.speaker.played.some((p) => p.startedAt >= since)) return true;
      const listening =
        !spoke &&
        this.call.isWaitingForCaller &&
        IDLE.has(this.session.agentState) &&
        !this.speaker.playing;
      const now = performance.now();
      listeningSince = listening ? (listeningSince ?? now) : undefined;
      return (
        (listeningSince !== undefined && now - listeningSince >= this.quietMs) ||
        now - since >= this.answerWithinMs
      );
    }, 'the agent to greet or to listen');
    this.session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    if (spoke || this.speaker.played.length > 0) await this.afterTurn(since, first);
  }

  async perform(turn: TurnSpec, _index: number, next: TurnSpec | undefined): Promise<TurnMeasure> {
    const interruptedBefore = this.interruptions();
    let endedAt: number | undefined;
    if (turn === 'hangup' || 'hangup' in turn) {
      this.note('(hangs up)', 'hangup');
      this.call.hangup('caller hung up');
      await this.bounded(this.closedPromise, 'the session to close after the hang-up');
      return { interruptions: this.interruptions() - interruptedBefore };
    }
    const heardBefore = this.heard;
    if ('say' in turn) {
      const words =
        turn.unless_misheard !== undefined && this.readingBackMisheard()
          ? turn.unless_misheard
          : turn.say;
      endedAt = await this.say(words, turn);
      this.lastSpeechEndedAt = endedAt;
      await this.taken(heardBefore);
    } else if ('barge_in' in turn) {
      await this.intoPrompt(turn.after, 'barge_in');
      endedAt = await this.say(turn.barge_in, turn);
      this.lastSpeechEndedAt = endedAt;
      await this.taken(heardBefore);
    } else if ('keys' in turn) {
      if (turn.after !== undefined) await this.intoPrompt(turn.after, 'keys');
      endedAt = await this.press(
        turn.keys,
        turn.gap === undefined ? 250 : durationMs(turn.gap),
        turn.mask,
      );
      this.lastSpeechEndedAt = undefined;
    } else if ('tone' in turn) {
      endedAt = await this.tone(turn.tone.hz, turn.tone.ms);
      this.lastSpeechEndedAt = undefined;
    } else {
      const ms = durationMs(turn.silence);
      this.note(`(silence ${ms} ms)`, 'silence');
      await this.wait(ms);
    }
    // The answer to spoken words comes after the agent took them: an acknowledgement said
    // while the caller's turn was open ("Okay.") is not the answer to wait for.
    const answerAfter = this.heard > heardBefore ? this.takenAt : undefined;
    const answeredAt = await this.afterTurn(endedAt ?? performance.now(), next, answerAfter);
    return {
      ...(endedAt !== undefined && answeredAt !== undefined
        ? { latencyMs: answeredAt - endedAt }
        : {}),
      interruptions: this.interruptions() - interruptedBefore,
      ...(overlaps(next) && !this.closed ? { unsettled: true } : {}),
      ...(endedAt !== undefined && ('say' in turn || 'barge_in' in turn)
        ? {
            stages: this.stages.stagesSince(
              endedAt,
              answeredAt,
              this.speaker.played.map((p) => p.startedAt),
            ),
          }
        : {}),
    };
  }

  async close(): Promise<void> {
    this.stopHints?.();
    try {
      // What the recogniser is still working on belongs in the transcript (bounded wait).
      const until = performance.now() + TRANSCRIPTION_GRACE_MS;
      while (this.inFlight > 0 && performance.now() < until) await this.wait(POLL_MS);
      if (!this.closed) await this.bounded(this.session.close(), 'the session to close');
      await this.line.close();
    } finally {
      for (const fn of this.closeHandlers.splice(0)) fn();
    }
  }

  /**
   * Speaks `text` in the caller's voice (registered with the oracle first, when it hears),
   * with a pause mid-sentence when the turn asks; resolves when the last sample was sent.
   */
  private async say(
    text: string,
    turn: { pause?: PauseSpec | PauseSpec[]; level_db?: number },
  ): Promise<number> {
    const parts = splitAtPauses(text, turn.pause === undefined ? [] : [turn.pause].flat());
    const pcms = await Promise.all(
      parts.map((p) => speak(p.words, this.caller.voice, this.line.sampleRate)),
    );
    for (let i = 0; i < parts.length; i++) this.caller.oracle?.register(parts[i]!.words, pcms[i]!);
    const line = this.note(this.call.expectsSecret ? '****' : text, 'speech');
    if (this.call.expectsSecret) this.masked.add(line);
    const utterance: Utterance = { line, startedAt: performance.now() };
    this.utterances.push(utterance);
    let spoken: Promise<{ endedAt: number }> | undefined;
    pcms.forEach((pcm, i) => {
      const pauseMs = parts[i]!.pauseMs;
      if (pauseMs > 0) void this.line.pause(pauseMs);
      spoken = this.line.speak(pcm, turn.level_db ?? 0);
    });
    const done = await this.bounded(spoken!, 'the caller to finish speaking');
    utterance.endedAt = done.endedAt;
    return done.endedAt;
  }

  /**
   * The recogniser answered for a segment of this call's line. Segments come in the order
   * they were spoken, and on a busy machine upstream sends one seconds after its audio ended,
   * so its words belong to the caller's latest utterance begun before the request arrived; a
   * segment before any utterance is something the line carried (noise, echo) heard as speech.
   */
  transcribed(event: TranscriptionEvent): void {
    const text = event.recognition.text.trim();
    if (!text) return;
    const best = this.utterances.findLast((u) => u.startedAt < event.receivedAt);
    if (!best) {
      this.transcript.push({
        role: 'caller',
        text: '(no speech)',
        via: 'speech',
        at: Date.now(),
        heard: text,
      });
      return;
    }
    const line = best.line;
    // A masked answer (a spoken PIN) stays masked in what was heard too.
    if (this.masked.has(line)) line.heard = '****';
    else line.heard = line.heard ? `${line.heard} ${text}` : text;
  }

  /**
   * Whether the agent misheard the caller's latest answer: its heard words differ from the
   * scripted ones (compared as a recogniser writes them), as a caller listening to a read-back
   * would notice.
   */
  /**
   * The agent reads back a value now, and the caller's last words were misheard: the case a
   * caller says no to. A question asked again after a misheard answer is no read-back: the
   * caller answers it as they meant to.
   */
  private readingBackMisheard(): boolean {
    return this.call.expectation?.readingBack === true && this.misheard();
  }

  private misheard(): boolean {
    const last = this.utterances.at(-1)?.line;
    if (!last || this.masked.has(last)) return false;
    return phraseWords(last.heard ?? '').join(' ') !== phraseWords(last.text).join(' ');
  }

  /** A transcription of this call's audio started (+1) or ended (−1). */
  transcribing(delta: number): void {
    this.inFlight = Math.max(0, this.inFlight + delta);
  }

  /** Calls `fn` once the driver has closed. */
  onClose(fn: () => void): void {
    this.closeHandlers.push(fn);
  }

  /** Plays a sine tone (a voicemail's beep) on the line; resolves when its last sample was sent. */
  private async tone(hz: number, ms: number): Promise<number> {
    const rate = this.line.sampleRate;
    const samples = new Int16Array(Math.round((rate * ms) / 1000));
    for (let i = 0; i < samples.length; i++) {
      samples[i] = Math.round(0.3 * 32767 * Math.sin((2 * Math.PI * hz * i) / rate));
    }
    this.note(`(tone ${hz} Hz, ${ms} ms)`, 'tone');
    const played = await this.bounded(
      this.line.speak({ samples, sampleRate: rate }),
      'the tone to play',
    );
    return played.endedAt;
  }

  /**
   * Waits until the agent has taken the caller's words as a turn (its user message is in the
   * conversation), so a slow end of turn or transcription is not mistaken for the agent
   * listening again. Bounded by `answerWithinMs`: speech the agent never hears (during
   * upstream's echo warm-up) leaves the turn to the usual waits.
   */
  private async taken(heardBefore: number): Promise<void> {
    const deadline = performance.now() + this.answerWithinMs;
    await this.until(
      () => this.closed || this.heard > heardBefore || performance.now() >= deadline,
      "the agent to take the caller's words",
    );
  }

  /** Presses keys `gapMs` apart through the call context; resolves at the last key. */
  private async press(keys: string, gapMs: number, mask: boolean | undefined): Promise<number> {
    const shown = (mask ?? this.call.expectsSecret) ? '*'.repeat(keys.length) : keys;
    this.note(shown, 'dtmf');
    const chars = [...keys];
    for (let i = 0; i < chars.length; i++) {
      if (!this.call.pushDtmf(chars[i]!, CALLER)) {
        throw new TasklineError(
          'invalid_argument',
          `"${chars[i]}" is not a DTMF key (0-9 * # A-D)`,
        );
      }
      if (i < chars.length - 1) await this.wait(gapMs);
    }
    return performance.now();
  }

  /**
   * Waits until the agent's prompt is playing, then until `after` into it. After a spoken
   * turn the prompt is the first audio once the session has ended that turn: an
   * acknowledgement ("Okay.") said while the turn is still open is not the prompt.
   */
  private async intoPrompt(after: number | string | undefined, what: string): Promise<void> {
    const offset = after === undefined ? this.bargeInAfterMs : durationMs(after);
    const since = this.lastSpeechEndedAt;
    const promptStart = (): number | undefined => {
      if (!this.speaker.playing) return undefined;
      const current = this.speaker.played.at(-1)!.startedAt;
      if (since === undefined) return current;
      if (this.stages.turnOpenSince(since)) return undefined;
      const turnEnd = this.stages.turnEndSince(since);
      // Audio already queued when the turn ended starts a moment later: allow one frame.
      return turnEnd === undefined || current >= turnEnd - 20 ? current : undefined;
    };
    await this.until(() => promptStart() !== undefined, `agent audio to play before ${what}`);
    const started = promptStart()!;
    await this.wait(Math.max(0, started + offset - performance.now()));
  }

  /**
   * After the caller's input ended at `since`: waits for the agent to start answering (at
   * most `answerWithinMs`; audio from `answerAfter` on, when the agent took spoken words
   * then), then, unless the next turn talks over it, for it to go quiet. Returns when the
   * first agent audio after `since` started, if any (an acknowledgement counts: the caller
   * hears it).
   */
  private async afterTurn(
    since: number,
    next: TurnSpec | undefined,
    answerAfter = since,
  ): Promise<number | undefined> {
    const audioFrom = (t: number) => this.speaker.played.find((p) => p.startedAt >= t)?.startedAt;
    const firstAudioAfter = () => audioFrom(since);
    // A tone is the far end's recording going on (a voicemail's beep): it never waits for the bot.
    if (next && typeof next !== 'string' && 'tone' in next) return undefined;
    const deadline = performance.now() + this.answerWithinMs;
    await this.until(
      () => this.closed || audioFrom(answerAfter) !== undefined || performance.now() >= deadline,
      'the agent to answer',
    );
    if (!overlaps(next)) await this.quiet();
    return firstAudioAfter();
  }

  /** Waits until nothing happens on the agent side for `quietMs`. */
  private async quiet(): Promise<void> {
    let quietSince: number | undefined;
    await this.until(() => {
      if (this.closed) return true;
      // Listening, not merely silent: an onEnter still at work (a store opening before a
      // flow) has not handed the turn over, however long the pause (see agentListening).
      const still =
        !this.speaker.playing &&
        !this.line.speaking &&
        IDLE.has(this.session.agentState) &&
        agentListening(this.session, this.call) &&
        this.session.userState !== 'speaking';
      const now = performance.now();
      if (!still) quietSince = undefined;
      else quietSince ??= now;
      return quietSince !== undefined && now - quietSince >= this.quietMs;
    }, 'the agent to go quiet');
  }

  private interruptions(): number {
    return this.speaker.played.filter((p) => p.interrupted).length;
  }

  private note(text: string, via: TranscriptLine['via']): TranscriptLine {
    const line: TranscriptLine = {
      role: 'caller',
      text,
      via,
      at: Date.now(),
      ...(via === 'speech' ? { heard: '' } : {}),
    };
    this.transcript.push(line);
    return line;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  private async until(done: () => boolean, what: string): Promise<void> {
    const limit = performance.now() + this.guardMs;
    while (!done()) {
      if (performance.now() > limit) {
        throw new TasklineError('timeout', `gave up waiting for ${what} after ${this.guardMs} ms`);
      }
      await this.wait(POLL_MS);
    }
  }

  private async bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TasklineError('timeout', `gave up waiting for ${what} after ${this.guardMs} ms`),
          ),
        this.guardMs,
      );
    });
    try {
      return await Promise.race([promise, limit]);
    } finally {
      clearTimeout(timer);
    }
  }
}
