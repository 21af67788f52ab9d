/**
 * Task-aware end of turn: an upstream turn detector (`_TurnDetector`, the text-based kind
 * `turnHandling.turnDetection` takes) that asks the active capture whether the caller's
 * words so far are a whole answer (the call's {@link Expectation}). After the VAD's end of
 * speech, upstream waits `endpointing.minDelay` when the probability we return is at or
 * above our threshold and `endpointing.maxDelay` below it; a third timing, for answers the
 * capture cannot judge, is kept here by holding the prediction back:
 *
 * - `complete` ("yes", all four digits, a menu option): the agent acknowledges at once
 *   ("Okay.", see ./turn-acknowledgement.ts) and the turn ends when that line has played —
 *   anything the caller adds meanwhile stops it and joins the utterance, so a cut utterance
 *   is parsed whole; without an acknowledgement the turn keeps the ordinary timing (a value
 *   from a cut utterance is never kept);
 * - `incomplete` ("my number is four one five"): probability 0 → the turn ends after
 *   `maxDelay` (long: the caller is mid-answer);
 * - `unknown`, or nothing expected (free speech, the model's turn): the app's own text turn
 *   detector (LiveKit's turn-detector model) decides when one is given; otherwise the turn
 *   ends `unknownDelayMs` after the end of speech, as upstream's default settings would.
 */
import { type llm, voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import type { TurnJudgement } from '../core/expectation.js';
import { Acknowledgement } from './turn-acknowledgement.js';

/** Upstream's text-based turn detector interface (`_TurnDetector`), as the session takes it. */
export type TextTurnDetector = Extract<
  NonNullable<NonNullable<voice.AgentSessionOptions['turnHandling']>['turnDetection']>,
  { predictEndOfTurn: unknown }
>;

/** What the detector decided for one prediction (for reports and logs: no caller words). */
export interface TurnDecision {
  /** Wall-clock time of the prediction. */
  at: number;
  /** The capture's judgement, or `none` when nothing was expected. */
  judgement: TurnJudgement | 'none';
  /** Name of the capture that judged, if any. */
  task?: string;
  /**
   * Which timing the session applies: `acknowledged` (complete: the line is said and the turn
   * ends when it has played), `long` (incomplete, or the model says the caller goes on) or
   * `ordinary`.
   */
  timing: 'acknowledged' | 'long' | 'ordinary';
  /** Time spent deciding (judge and any model), ms, without the ordinary timing's hold. */
  decisionMs: number;
}

/** Options for {@link TaskAwareTurnDetector}. */
export interface TaskAwareTurnOptions {
  /**
   * The app's own text turn detector (e.g. LiveKit's turn-detector model), asked whenever
   * the capture cannot judge: below its threshold the turn waits `maxDelay`, else it ends
   * after `unknownDelayMs`.
   */
  fallback?: TextTurnDetector;
  /**
   * When the capture cannot judge and no model decides: how long after the end of the
   * caller's speech the turn ends (default {@link TURN_TIMING}.unknownDelayMs).
   */
  unknownDelayMs?: number;
  /**
   * What the agent says the moment an answer is complete, ending the turn once it has
   * played (default {@link TURN_TIMING}.acknowledgement). `false`: say nothing and keep the
   * ordinary timing for complete answers too.
   */
  acknowledgement?: string | false;
  /** Called with every decision (reports, traces). Must not throw. */
  onDecision?: (decision: TurnDecision) => void;
}

/**
 * taskline's turn-taking defaults, shared by the room entry ({@link taskAwareTurnHandling})
 * and audio-mode scenarios. Measured on this machine (docs/latency.md):
 * - `vadMinSilenceMs`: Silero's silence before it reports the end of speech (its default is
 *   550 ms, most of upstream's response time);
 * - `completeDelayMs`: upstream `endpointing.minDelay`, from the end of speech, for a
 *   complete answer — at or below the VAD's silence it adds nothing;
 * - `incompleteDelayMs`: upstream `endpointing.maxDelay`, for an answer half given;
 * - `unknownDelayMs`: everything else, as upstream's defaults time it.
 */
export const TURN_TIMING = {
  vadMinSilenceMs: 250,
  completeDelayMs: 250,
  incompleteDelayMs: 2_000,
  unknownDelayMs: 600,
  acknowledgement: 'Okay.',
  /** Longest wait for the acknowledgement to play before the turn ends anyway. */
  acknowledgementMaxMs: 3_000,
  /**
   * After the acknowledgement has played, how long the turn stays open: speech the caller
   * began while it played needs this long for the VAD to report it (50 ms of speech, 32 ms
   * windows, inference).
   */
  afterAcknowledgementMs: 150,
} as const;

/**
 * Longest an acknowledged turn keeps the call busy before its words are committed: the
 * acknowledgement's bounded playout, the time the turn stays open after it, and the commit.
 */
const ACK_TURN_MAX_MS =
  TURN_TIMING.acknowledgementMaxMs + TURN_TIMING.afterAcknowledgementMs + 2_000;

/** Upstream endpointing for task-aware turns: short when complete, long when not. */
const TURN_ENDPOINTING = {
  mode: 'fixed',
  minDelay: TURN_TIMING.completeDelayMs,
  maxDelay: TURN_TIMING.incompleteDelayMs,
} as const;

/** The probability that stands for "the turn is over" (any value at or above THRESHOLD). */
const THRESHOLD = 0.5;

/**
 * Ends the caller's turn as soon as the active capture says the answer is complete; waits
 * longer when the capture says the caller is mid-answer; keeps the ordinary timing (or the
 * app's turn-detector model) otherwise. Bind it to its session with {@link bind} (the room
 * entry and audio mode do) so it can see the call's expectation.
 */
export class TaskAwareTurnDetector implements TextTurnDetector {
  readonly model = 'taskline-task-aware';
  readonly provider = 'taskline';
  private session: voice.AgentSession | undefined;
  private readonly fallback: TextTurnDetector | undefined;
  private readonly unknownDelayMs: number;
  private readonly onDecision: ((decision: TurnDecision) => void) | undefined;
  private readonly ackText: string | undefined;
  private ack: Acknowledgement | undefined;
  /** The acknowledgement said in the caller's open turn (cleared when the turn is committed). */
  private turnAck: voice.SpeechHandle | undefined;
  /** Ends the call's busy mark of an acknowledged turn (see {@link acknowledge}). */
  private turnWork: (() => void) | undefined;
  private turnWorkTimer: NodeJS.Timeout | undefined;
  /** Estimated wall-clock end of the caller's last speech (VAD end of speech − silence). */
  private speechEndedAt: number | undefined;
  private unbind: (() => void) | undefined;

  constructor(options: TaskAwareTurnOptions = {}) {
    const unknown = options.unknownDelayMs ?? TURN_TIMING.unknownDelayMs;
    if (!(Number.isFinite(unknown) && unknown >= 0 && unknown <= 10_000)) {
      throw new RangeError(`unknownDelayMs must be 0-10000 ms, got ${String(unknown)}`);
    }
    this.fallback = options.fallback;
    this.unknownDelayMs = unknown;
    this.onDecision = options.onDecision;
    const ack = options.acknowledgement ?? TURN_TIMING.acknowledgement;
    this.ackText = ack === false || !ack.trim() ? undefined : ack.trim();
  }

  /**
   * Binds the detector to the session whose call it reads (once; a second session is
   * refused, as one detector keeps one caller's timing). Returns the detector.
   */
  bind(session: voice.AgentSession): this {
    if (this.session === session) return this;
    if (this.session) {
      throw new Error('a TaskAwareTurnDetector serves one session: make one per session');
    }
    this.session = session;
    const onUserState = (ev: voice.UserStateChangedEvent) => {
      if (ev.newState === 'speaking') this.speechEndedAt = undefined;
      else if (ev.oldState === 'speaking') {
        // Upstream reports the end of speech once the VAD heard its minimum silence.
        const silence = session.vad?.minSilenceDuration ?? 0;
        this.speechEndedAt = ev.createdAt - silence;
      }
    };
    const onItem = (ev: voice.ConversationItemAddedEvent) => {
      if (ev.item.type === 'message' && ev.item.role === 'user') {
        this.turnAck = undefined;
        this.endTurnWork();
      }
    };
    session.on(voice.AgentSessionEventTypes.UserStateChanged, onUserState);
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
    this.unbind = () => {
      this.endTurnWork();
      session.off(voice.AgentSessionEventTypes.UserStateChanged, onUserState);
      session.off(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
    };
    session.once(voice.AgentSessionEventTypes.Close, () => this.unbind?.());
    if (this.ackText) {
      const ack = new Acknowledgement(session, this.ackText);
      this.ack = ack;
      // Synthesised ahead once the session's TTS has worked (the agent's first speech, before
      // any answer): a TTS that cannot answer at all is not asked again in the background,
      // where upstream 1.9 leaves a failed request as an unhandled rejection.
      const onAgentState = (ev: voice.AgentStateChangedEvent) => {
        if (ev.newState !== 'speaking') return;
        session.off(voice.AgentSessionEventTypes.AgentStateChanged, onAgentState);
        ack.prepare();
      };
      session.on(voice.AgentSessionEventTypes.AgentStateChanged, onAgentState);
      const unbind = this.unbind;
      this.unbind = () => {
        unbind();
        session.off(voice.AgentSessionEventTypes.AgentStateChanged, onAgentState);
      };
    }
    return this;
  }

  async supportsLanguage(): Promise<boolean> {
    // Judging answers needs no language model; an unsupported language would make
    // upstream skip us and fall back to its shortest timing.
    return true;
  }

  async unlikelyThreshold(): Promise<number> {
    return THRESHOLD;
  }

  async predictEndOfTurn(chatCtx: llm.ChatContext, timeoutMs?: number): Promise<number> {
    const started = Date.now();
    const expectation = this.session ? callOf(this.session).expectation : undefined;
    const text = lastCallerWords(chatCtx);
    let judgement: TurnJudgement | 'none' = 'none';
    if (expectation && text !== undefined) {
      try {
        judgement = expectation.judge(text);
      } catch {
        judgement = 'unknown';
      }
    }
    if (judgement === 'incomplete') {
      this.report(started, judgement, expectation?.task, 'long');
      return 0;
    }
    if (judgement === 'complete' && this.ack) {
      this.report(started, judgement, expectation?.task, 'acknowledged');
      await this.acknowledge(this.ack);
      return 1;
    }
    if (this.fallback) {
      try {
        const p = await this.fallback.predictEndOfTurn(chatCtx, timeoutMs);
        const threshold = await this.fallback.unlikelyThreshold();
        if (threshold !== undefined && p < threshold) {
          this.report(started, judgement, expectation?.task, 'long');
          return 0;
        }
      } catch {
        // A model that fails leaves the ordinary timing.
      }
    }
    this.report(started, judgement, expectation?.task, 'ordinary');
    await this.holdUntilOrdinary();
    return 1;
  }

  /**
   * Says the acknowledgement (once per caller turn) and waits for it to play out, bounded:
   * the turn stays open meanwhile, so words the caller adds join the utterance.
   */
  private async acknowledge(ack: Acknowledgement): Promise<void> {
    const session = this.session;
    if (!session) return;
    if (!this.turnAck) {
      // Never over the agent's own speech (a line that cannot be interrupted is playing).
      if (session.agentState === 'speaking') return this.holdUntilOrdinary();
      try {
        this.turnAck = ack.say();
      } catch {
        return this.holdUntilOrdinary();
      }
      this.beginTurnWork(session);
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.turnAck.waitForPlayout().catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, TURN_TIMING.acknowledgementMaxMs);
      }),
    ]);
    clearTimeout(timer);
    await new Promise((resolve) => setTimeout(resolve, TURN_TIMING.afterAcknowledgementMs));
  }

  /**
   * From the acknowledgement until the caller's words are committed, the agent is at work on
   * the caller's turn although the line looks idle (the "Okay." has played, the reply has not
   * started): the call is marked busy, so nothing held for a quiet moment (a background
   * result) is said between the acknowledgement and the answer to the turn, and a simulated
   * caller does not take its next turn. Bounded: a turn that is never committed (speech
   * scheduling paused by a handoff) releases it after {@link ACK_TURN_MAX_MS}.
   */
  private beginTurnWork(session: voice.AgentSession): void {
    this.endTurnWork();
    this.turnWork = callOf(session).beginWork();
    this.turnWorkTimer = setTimeout(() => this.endTurnWork(), ACK_TURN_MAX_MS);
  }

  private endTurnWork(): void {
    clearTimeout(this.turnWorkTimer);
    this.turnWorkTimer = undefined;
    const release = this.turnWork;
    this.turnWork = undefined;
    release?.();
  }

  /** Waits until `unknownDelayMs` after the end of the caller's speech (bounded by it). */
  private async holdUntilOrdinary(): Promise<void> {
    // A final transcript can come before the session's VAD reports the end of speech (the
    // recogniser's own VAD cut the segment at the same silence a moment sooner): the speech
    // then ended about one silence ago.
    const silence = this.session?.vad?.minSilenceDuration ?? 0;
    const endedAt = this.speechEndedAt ?? Date.now() - silence;
    const wait = Math.min(this.unknownDelayMs, endedAt + this.unknownDelayMs - Date.now());
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  private report(
    started: number,
    judgement: TurnDecision['judgement'],
    task: string | undefined,
    timing: TurnDecision['timing'],
  ): void {
    if (!this.onDecision) return;
    try {
      this.onDecision({
        at: Date.now(),
        judgement,
        ...(task ? { task } : {}),
        timing,
        decisionMs: Date.now() - started,
      });
    } catch {
      // a report must never change the turn
    }
  }
}

/** The caller's words of the turn being judged: upstream appends them as the last user message. */
function lastCallerWords(chatCtx: llm.ChatContext): string | undefined {
  const last = chatCtx.items.at(-1);
  if (last?.type !== 'message' || last.role !== 'user') return undefined;
  const text = last.textContent?.trim();
  return text ? text : undefined;
}

/**
 * Session options for task-aware turns (merge them into `new voice.AgentSession({...})`):
 * the detector, upstream endpointing set to taskline's timing. Bind the detector to the
 * session once it exists (`detector.bind(session)`), or use {@link useTaskAwareTurns}.
 */
export function taskAwareTurnHandling(options: TaskAwareTurnOptions = {}): {
  turnHandling: NonNullable<voice.AgentSessionOptions['turnHandling']>;
  detector: TaskAwareTurnDetector;
} {
  const detector = new TaskAwareTurnDetector(options);
  return {
    detector,
    turnHandling: {
      turnDetection: detector,
      endpointing: { ...TURN_ENDPOINTING },
    },
  };
}

/**
 * Switches a session that already exists to task-aware turns (for sessions built by the
 * app, e.g. in `roomAgent({ createSession })`): installs a bound detector and taskline's
 * endpointing. Returns the detector.
 */
export function useTaskAwareTurns(
  session: voice.AgentSession,
  options: TaskAwareTurnOptions = {},
): TaskAwareTurnDetector {
  const detector = new TaskAwareTurnDetector(options).bind(session);
  session.updateOptions({
    turnHandling: { turnDetection: detector, endpointing: TURN_ENDPOINTING },
  });
  return detector;
}

/** Silero VAD options for task-aware turns: a short silence before the end of speech. */
export const TURN_VAD_OPTIONS = { minSilenceDuration: TURN_TIMING.vadMinSilenceMs } as const;
