import { type llm as lkllm, voice } from '@livekit/agents';
import { type CallerAction, type CallerTurn, toCallerTurn } from '../app/module.js';
import { attachCall, type CallContext } from '../core/call.js';
import { durationMs } from '../core/duration.js';
import { TasklineError } from '../core/errors.js';
import { ensureLogger } from '../core/log.js';
import { farEndOf } from '../telephony/outbound/far-end.js';
import { isSessionClosing } from '../upstream/internals.js';
import { agentListening, runningOnEnter } from './listening.js';
import { ScriptedLLM } from './scripted-llm.js';
import { installRunResultWorkaround } from './upstream-workarounds.js';
import { flushAsync, VirtualClock } from './virtual-clock.js';

export type { CallerAction, CallerTurn };

/**
 * How long a caller who pressed keys waits for the agent before the next turn (virtual):
 * more than any inter-digit timeout, so an unfinished entry ends as it would on a phone.
 */
export const KEYS_REPLY_WAIT_MS = 10_000;

/** One line of a simulated call, as a person reading the call log would see it. */
export interface TranscriptLine {
  role: 'agent' | 'caller';
  text: string;
  /**
   * How the line arrived: speech (or typed text), keypad, silence, a tone (a voicemail's
   * beep), or the end of the call (`hangup`: the caller's "(hangs up)" or the bot's "(ends
   * the call)").
   */
  via: 'speech' | 'dtmf' | 'silence' | 'tone' | 'hangup';
  /** Clock time of the line. */
  at: number;
  /**
   * What the agent's recogniser heard for a caller's speech (audio mode): the final
   * transcripts of it, joined; "" when it heard nothing. Absent where words arrive as text.
   */
  heard?: string;
}

/** Options for {@link SimulatedCaller}. */
export interface SimulatedCallerOptions {
  /** The virtual clock the call's timers use (a new one by default). */
  clock?: VirtualClock;
  /** Call id for checkpoints and reports. */
  callId?: string;
  /** The caller's participant identity (DTMF from it is accepted). */
  identity?: string;
  /** Upper bound on event-loop rounds spent waiting for the agent to go quiet. */
  maxSettleRounds?: number;
  /** Wall-clock guard (ms) for one wait on the session; a bug, not a test, trips it. */
  guardMs?: number;
  /** Called with every transcript line as it happens (the terminal runner prints them). */
  onLine?: (line: TranscriptLine) => void;
}

/** Options for {@link SimulatedCaller.start}. */
export interface StartCallOptions extends SimulatedCallerOptions {
  agent: voice.Agent;
  llm: lkllm.LLM;
  /** Extra AgentSession options (no room, audio or TTS is needed). */
  sessionOptions?: Omit<voice.AgentSessionOptions, 'llm'>;
  /** Called with the session before it starts, for listeners that must see the greeting. */
  onSession?: (session: voice.AgentSession) => void;
}

/**
 * Drives an AgentSession with no room and no audio from a script of caller actions —
 * speech, key presses, silence, barge-in, hang-up — and keeps the transcript. Key presses
 * and the hang-up go through the call context, the same path room events take, and
 * silence advances the virtual clock, so timeouts fire without waiting.
 */
export class SimulatedCaller {
  readonly session: voice.AgentSession;
  readonly call: CallContext;
  readonly clock: VirtualClock;
  readonly identity: string;
  /** Everything said and pressed so far. */
  readonly transcript: TranscriptLine[] = [];
  /** Ids of every agent and task that became active, in order (repeats kept). */
  readonly visited: string[] = [];
  private readonly onLine: ((line: TranscriptLine) => void) | undefined;
  private readonly maxSettleRounds: number;
  private readonly guardMs: number;
  private activity = 0;
  private closed = false;
  private pendingRun: voice.testing.RunResult | undefined;
  private readonly closedPromise: Promise<void>;

  /** Starts a session for `agent` on `llm` and returns its caller once the greeting is done. */
  static async start(options: StartCallOptions): Promise<SimulatedCaller> {
    ensureLogger();
    const session = new voice.AgentSession({ ...options.sessionOptions, llm: options.llm });
    const caller = new SimulatedCaller(session, options);
    if (options.llm instanceof ScriptedLLM) options.llm.bind(session);
    options.onSession?.(session);
    await session.start({ agent: options.agent });
    await caller.settle();
    return caller;
  }

  constructor(session: voice.AgentSession, options: SimulatedCallerOptions = {}) {
    installRunResultWorkaround();
    this.session = session;
    this.clock = options.clock ?? new VirtualClock();
    this.identity = options.identity ?? 'caller';
    this.maxSettleRounds = options.maxSettleRounds ?? 500;
    this.guardMs = options.guardMs ?? 15_000;
    this.onLine = options.onLine;
    this.call = attachCall(session, {
      clock: this.clock,
      callId: options.callId,
      callerIdentity: this.identity,
    });
    if (this.call.clock !== this.clock) {
      throw new TasklineError(
        'invalid_state',
        'This session already has a call context with another clock: create the SimulatedCaller before anything calls attachCall()/callOf() on the session.',
      );
    }
    const bump = () => {
      this.activity += 1;
      const id = this.currentAgentId();
      if (id !== undefined && this.visited.at(-1) !== id) this.visited.push(id);
    };
    session.on(voice.AgentSessionEventTypes.SpeechCreated, bump);
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, bump);
    session.on(voice.AgentSessionEventTypes.FunctionToolsExecuted, bump);
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (ev) => {
      bump();
      const item = ev.item;
      if (item.type === 'message' && item.role === 'assistant') {
        const text = item.textContent ?? '';
        if (text) this.record({ role: 'agent', text, via: 'speech', at: this.clock.now() });
      }
    });
    this.call.on('ended', (end) => {
      // A hang-up is already in the transcript as the caller's line.
      if (end.by === 'bot') {
        this.record({ role: 'agent', text: '(ends the call)', via: 'hangup', at: end.at });
      }
    });
    this.closedPromise = new Promise<void>((resolve) => {
      session.once(voice.AgentSessionEventTypes.Close, () => {
        this.closed = true;
        resolve();
      });
    });
  }

  private record(line: TranscriptLine): void {
    this.transcript.push(line);
    this.onLine?.(line);
  }

  private currentAgentId(): string | undefined {
    try {
      return this.session.currentAgent.id;
    } catch {
      return undefined;
    }
  }

  /** The agent's spoken lines, in order (the end of the call is not a line). */
  get agentLines(): string[] {
    return this.transcript
      .filter((l) => l.role === 'agent' && l.via !== 'hangup')
      .map((l) => l.text);
  }

  /** How the call ended, once it has: `caller` hung up, or the `bot` ended it. */
  get endedBy(): 'caller' | 'bot' | undefined {
    return this.call.ended?.by;
  }

  /** True once the session has closed. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * The caller says (or types) `text`; resolves when the agent has answered and gone quiet.
   * Returns upstream's RunResult, so `run.expect` assertions work on the turn.
   */
  async say(text: string): Promise<voice.testing.RunResult> {
    this.assertOpen('say');
    await this.finishPendingRun();
    // A secret said aloud (a spoken PIN) is masked in the transcript, its length too.
    const shown = this.call.expectsSecret ? '****' : text;
    this.record({ role: 'caller', text: shown, via: 'speech', at: this.clock.now() });
    this.call.noteInput('speech');
    const run = this.session.run({ userInput: text });
    // A run still open when the call closes rejects; that is the close, not a test failure.
    run.wait().catch(() => undefined);
    this.pendingRun = run;
    await this.settle();
    return run;
  }

  /** The caller talks over the agent: current speech is interrupted, then `text` is said. */
  async bargeIn(text: string): Promise<voice.testing.RunResult> {
    this.assertOpen('bargeIn');
    try {
      await this.session.interrupt({ force: true });
    } catch {
      // nothing was playing: a barge-in on silence is just speech
    }
    return this.say(text);
  }

  /**
   * The caller presses keys, `gapMs` apart on the virtual clock (250 ms by default).
   * The transcript shows "*" for every key with `mask`, or when the agent expects a secret
   * (a `collectDigits({ mask: true })` is listening).
   */
  async dtmf(keys: string, options: { gapMs?: number; mask?: boolean } = {}): Promise<void> {
    this.assertOpen('dtmf');
    const gapMs = options.gapMs ?? 250;
    const shown = (options.mask ?? this.call.expectsSecret) ? '*'.repeat(keys.length) : keys;
    this.record({ role: 'caller', text: shown, via: 'dtmf', at: this.clock.now() });
    const chars = [...keys];
    for (let i = 0; i < chars.length; i++) {
      if (!this.call.pushDtmf(chars[i]!, this.identity)) {
        throw new TasklineError(
          'invalid_argument',
          `"${chars[i]}" is not a DTMF key (0-9 * # A-D)`,
        );
      }
      await this.settle();
      if (i < chars.length - 1 && gapMs > 0) await this.clock.advance(gapMs, () => this.settle());
    }
  }

  /**
   * The caller waits for the agent to react, as a phone caller does after pressing keys:
   * when the agent has said nothing since `since` (a transcript length; default: now), time
   * passes on the virtual clock, timer by timer, until it does — an unfinished key entry
   * ends with its inter-digit timeout — but never past `withinMs`. Resolves true when the
   * agent said something. Nothing is added to the transcript.
   */
  async waitForReply(withinMs: number, since = this.transcript.length): Promise<boolean> {
    const answered = () =>
      this.transcript.slice(since).some((l) => l.role === 'agent') || this.closed;
    const deadline = this.clock.now() + withinMs;
    while (!answered()) {
      const next = this.clock.nextTimerAt();
      if (next === undefined || next > deadline) break;
      await this.clock.advance(Math.max(0, next - this.clock.now()), () => this.settle());
    }
    return answered();
  }

  /** The caller stays silent for `ms` of virtual time; timers that fall due fire. */
  async silence(ms: number): Promise<void> {
    this.assertOpen('silence');
    this.record({
      role: 'caller',
      text: `(silence ${ms} ms)`,
      via: 'silence',
      at: this.clock.now(),
    });
    await this.clock.advance(ms, () => this.settle());
  }

  /**
   * The far end plays a steady tone (a voicemail's beep) for `durationMs` of virtual time;
   * the bot hears it when it ends, as a room's audio would report it.
   */
  async tone(hz: number, durationMs: number): Promise<void> {
    this.assertOpen('tone');
    this.record({
      role: 'caller',
      text: `(tone ${hz} Hz, ${durationMs} ms)`,
      via: 'tone',
      at: this.clock.now(),
    });
    await this.clock.advance(durationMs, () => this.settle());
    farEndOf(this.session).heardTone({ hz, durationMs });
    await this.settle();
  }

  /** The caller hangs up; resolves when the session has closed. */
  async hangup(): Promise<void> {
    if (this.closed) return;
    this.record({
      role: 'caller',
      text: '(hangs up)',
      via: 'hangup',
      at: this.clock.now(),
    });
    this.call.hangup('caller hung up');
    await this.guard(this.closedPromise, 'the session to close after the hang-up');
  }

  /**
   * Plays caller turns in order (the scenario-file form; earlier `{ dtmf }` / `{ bargeIn }`
   * actions are read too). See {@link playTurn}.
   */
  async play(turns: readonly (CallerTurn | CallerAction)[]): Promise<void> {
    for (const turn of turns) await this.playTurn(turn);
  }

  /**
   * Plays one caller turn. A `keys` turn is one keypad entry: the keys are pressed, then
   * the caller waits for the agent as a phone caller does (see {@link waitForReply}), so an
   * entry the agent still collects ends with its inter-digit timeout instead of running
   * into the next turn's keys. `after` (audio mode: into the agent's prompt) is ignored.
   */
  async playTurn(entry: CallerTurn | CallerAction): Promise<void> {
    const turn = toCallerTurn(entry);
    if (turn === 'hangup' || 'hangup' in turn) await this.hangup();
    else if ('say' in turn) await this.say(turn.say);
    else if ('barge_in' in turn) await this.bargeIn(turn.barge_in);
    else if ('keys' in turn) {
      const since = this.transcript.length;
      await this.dtmf(turn.keys, {
        ...(turn.gap !== undefined ? { gapMs: durationMs(turn.gap) } : {}),
        ...(turn.mask !== undefined ? { mask: turn.mask } : {}),
      });
      if (!this.closed) await this.waitForReply(KEYS_REPLY_WAIT_MS, since);
    } else if ('silence' in turn) await this.silence(durationMs(turn.silence));
    else if ('tone' in turn) await this.tone(turn.tone.hz, turn.tone.ms);
    else {
      throw new TasklineError('invalid_argument', `Unknown caller turn ${JSON.stringify(entry)}`);
    }
  }

  /**
   * Waits until the agent has finished everything it started, or is blocked waiting on
   * the caller, and nothing new begins.
   */
  async settle(): Promise<void> {
    for (let round = 0; round < this.maxSettleRounds; round++) {
      if (this.closed || isSessionClosing(this.session)) return;
      const before = this.activity;
      await flushAsync(2);
      try {
        await this.guard(this.idleOrWaitingForCaller(), 'the agent to finish its turn');
      } catch (error) {
        if (this.closed || isSessionClosing(this.session)) return;
        // An activity closed under us (a task finished, a handoff): look again.
        if (error instanceof Error && error.name === 'AbortError') continue;
        throw error;
      }
      await flushAsync(2);
      if (this.pendingRun?.done()) await this.finishPendingRun();
      const runOpen = this.pendingRun !== undefined && !this.call.isWaitingForCaller;
      if (this.activity === before && !runOpen) return;
    }
    throw new TasklineError(
      'timeout',
      `The agent never went quiet within ${this.maxSettleRounds} rounds: is something looping?`,
    );
  }

  /**
   * Resolves when the agent is listening (see {@link agentListening}: its turn is over, or
   * it is blocked on the caller). Event-driven on purpose: upstream `waitForIdle()` leaves an abort listener on the
   * activity per call, which leaks over a long simulated call.
   */
  private idleOrWaitingForCaller(): Promise<void> {
    const idle = () => this.closed || agentListening(this.session, this.call);
    if (idle()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let done = false;
      const check = () => {
        if (done) return;
        if (!idle()) {
          // An onEnter still at work ends without an event of its own: look again then.
          runningOnEnter(this.session)?.result.then(check, check);
          return;
        }
        done = true;
        offWaiting();
        offBusy();
        this.session.off(voice.AgentSessionEventTypes.AgentStateChanged, check);
        this.session.off(voice.AgentSessionEventTypes.Close, check);
        resolve();
      };
      const offWaiting = this.call.on('waiting', check);
      const offBusy = this.call.on('busy', check);
      this.session.on(voice.AgentSessionEventTypes.AgentStateChanged, check);
      this.session.on(voice.AgentSessionEventTypes.Close, check);
      check();
    });
  }

  /** Surfaces the outcome of the last `say` turn once it has ended. */
  private async finishPendingRun(): Promise<void> {
    const run = this.pendingRun;
    if (!run) return;
    if (!run.done() && this.call.isWaitingForCaller) {
      throw new TasklineError(
        'invalid_state',
        'The agent is still waiting for key presses from the previous turn; send dtmf() or silence() first.',
      );
    }
    this.pendingRun = undefined;
    await this.guard(run.wait(), 'the previous turn to finish');
  }

  /** Closes the session (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.guard(this.session.close(), 'the session to close');
  }

  private assertOpen(action: string): void {
    if (this.closed) {
      throw new TasklineError('session_closed', `Cannot ${action}: the call has ended.`);
    }
  }

  private async guard<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new TasklineError('timeout', `Gave up waiting for ${what} after ${this.guardMs} ms.`),
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
