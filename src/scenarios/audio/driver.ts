/**
 * The caller of an audio-mode scenario: speaks each turn into the session's audio input
 * in real time (espeak-ng speech, registered with the transcription oracle), presses keys
 * through the call context while the agent talks, talks over the agent for a barge-in, and
 * measures each turn from the end of the caller's speech to the first agent audio.
 */
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';
import { attachCall, type CallContext } from '../../core/call.js';
import { TasklineError } from '../../core/errors.js';
import { synthesize } from '../../testing/espeak.js';
import { agentListening } from '../../testing/listening.js';
import type { TranscriptLine } from '../../testing/simulated-caller.js';
import type { CallerSpeech } from '../../testing/speech-endpoints.js';
import type { CallDriver, TurnMeasure } from '../driver.js';
import { durationMs, type TurnSpec } from '../schema.js';
import { AgentSpeaker } from './agent-speaker.js';
import { CallerLine } from './caller-line.js';

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
const IDLE = new Set<voice.AgentState>(['listening', 'idle']);
const CALLER = 'caller';

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
  private closed = false;
  /** Caller turns the agent has taken (user messages committed to the conversation). */
  private heard = 0;
  private readonly closedPromise: Promise<void>;
  private readonly quietMs: number;
  private readonly answerWithinMs: number;
  private readonly guardMs: number;
  private readonly bargeInAfterMs: number;

  constructor(
    private readonly session: voice.AgentSession,
    callId: string,
    private readonly callerSpeech: CallerSpeech,
    options: AudioDriverOptions = {},
  ) {
    this.quietMs = options.quietMs ?? 600;
    this.answerWithinMs = options.answerWithinMs ?? 8_000;
    this.guardMs = options.guardMs ?? 45_000;
    this.bargeInAfterMs = options.bargeInAfterMs ?? 500;
    this.call = attachCall(session, { callId, callerIdentity: CALLER });
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
      if (item.type === 'message' && item.role === 'user') this.heard += 1;
      if (item.type === 'message' && item.role === 'assistant' && item.textContent) {
        // Upstream keeps the whole text of a cut-off line (no word timing here): mark it.
        const text = item.interrupted ? `${item.textContent} (interrupted)` : item.textContent;
        this.transcript.push({ role: 'agent', text, via: 'speech', at: Date.now() });
      }
    });
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
    this.callerSpeech.reset();
    await this.session.start({ agent });
    this.line.start();
    await this.afterTurn(performance.now(), first);
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
      endedAt = await this.say(turn.say);
      await this.taken(heardBefore);
    } else if ('barge_in' in turn) {
      await this.intoPrompt(turn.after, 'barge_in');
      endedAt = await this.say(turn.barge_in);
      await this.taken(heardBefore);
    } else if ('keys' in turn) {
      if (turn.after !== undefined) await this.intoPrompt(turn.after, 'keys');
      endedAt = await this.press(
        turn.keys,
        turn.gap === undefined ? 250 : durationMs(turn.gap),
        turn.mask,
      );
    } else {
      const ms = durationMs(turn.silence);
      this.note(`(silence ${ms} ms)`, 'silence');
      await this.wait(ms);
    }
    const answeredAt = await this.afterTurn(endedAt ?? performance.now(), next);
    return {
      ...(endedAt !== undefined && answeredAt !== undefined
        ? { latencyMs: answeredAt - endedAt }
        : {}),
      interruptions: this.interruptions() - interruptedBefore,
    };
  }

  async close(): Promise<void> {
    if (!this.closed) await this.bounded(this.session.close(), 'the session to close');
    await this.line.close();
  }

  /** Speaks `text` (registered with the oracle first); resolves when the last sample was sent. */
  private async say(text: string): Promise<number> {
    const pcm = await synthesize(text, { sampleRate: this.line.sampleRate });
    this.callerSpeech.register(text, pcm);
    this.note(this.call.expectsSecret ? '****' : text, 'speech');
    const spoken = await this.bounded(this.line.speak(pcm), 'the caller to finish speaking');
    return spoken.endedAt;
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

  /** Waits until agent audio is playing, then until `after` into it. */
  private async intoPrompt(after: number | string | undefined, what: string): Promise<void> {
    const offset = after === undefined ? this.bargeInAfterMs : durationMs(after);
    await this.until(() => this.speaker.playing, `agent audio to play before ${what}`);
    const started = this.speaker.played.at(-1)!.startedAt;
    await this.wait(Math.max(0, started + offset - performance.now()));
  }

  /**
   * After the caller's input ended at `since`: waits for the agent to start answering (at
   * most `answerWithinMs`), then, unless the next turn talks over it, for it to go quiet.
   * Returns when the first agent audio after `since` started, if any.
   */
  private async afterTurn(since: number, next: TurnSpec | undefined): Promise<number | undefined> {
    const firstAudioAfter = () => this.speaker.played.find((p) => p.startedAt >= since)?.startedAt;
    const deadline = performance.now() + this.answerWithinMs;
    await this.until(
      () => this.closed || firstAudioAfter() !== undefined || performance.now() >= deadline,
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

  private note(text: string, via: TranscriptLine['via']): void {
    this.transcript.push({ role: 'caller', text, via, at: Date.now() });
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
