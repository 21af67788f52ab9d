/**
 * The call a session serves (`CallContext`): keys, hang-up, who ended the call, how each caller
 * message arrived and how sure the recogniser was, what the active capture expects, turn
 * interceptors, secrets and work in progress. Over 500 lines: every part reads one set of
 * session events and must agree on them.
 */
import { EventEmitter } from 'node:events';
import { voice } from '@livekit/agents';
import { isSessionClosing } from '../upstream/internals.js';
import { type Clock, systemClock } from './clock.js';
import type { Expectation } from './expectation.js';
import type { InterceptedTurn, TurnAction, TurnInterceptor } from './interception.js';
import { logLine } from './log.js';
import { beginSecretCapture } from './pii.js';

/** A key pressed by the caller: one of 0-9, *, #, A-D. */
export type DtmfDigit =
  | '0'
  | '1'
  | '2'
  | '3'
  | '4'
  | '5'
  | '6'
  | '7'
  | '8'
  | '9'
  | '*'
  | '#'
  | 'A'
  | 'B'
  | 'C'
  | 'D';

/** One DTMF key press as taskline sees it, whatever delivered it (room, simulator, terminal). */
export interface DtmfEvent {
  digit: DtmfDigit;
  /** Identity of the participant that pressed the key. */
  participant: string;
  /** Clock time the key arrived. */
  at: number;
}

/** Why the caller's side of the call ended. */
export interface HangupEvent {
  reason: string;
  at: number;
}

/** How a call ended: the caller hung up, or the bot ended it (after its goodbye). */
export interface CallEnd {
  by: 'caller' | 'bot';
  reason: string;
  at: number;
}

/** The events a call emits, independent of where they come from. */
export interface CallEvents {
  dtmf: [DtmfEvent];
  hangup: [HangupEvent];
  /** The call ended, by the caller or by the bot (logs and transcripts tell them apart). */
  ended: [CallEnd];
  /** The agent started or stopped waiting on the caller; carries the number of waiters. */
  waiting: [number];
  /** Work that is not speech (a flow writing a checkpoint) started or ended; carries the count. */
  busy: [number];
  /** What the agent listens for changed (a capture started or ended waiting); see {@link Expectation}. */
  expecting: [Expectation | undefined];
  /**
   * A step ended: a capture has its answer (or never will) and is closing, so the call is
   * between two questions. Carries the capture's name. See {@link CallContext.noteStepEnded}.
   */
  stepEnded: [string];
}

/** How the caller gave their last answer. */
export type InputModality = 'speech' | 'dtmf' | 'text';

/** Options for {@link attachCall}. */
export interface CallOptions {
  /** Stable id of the call (used for checkpoints and reports). Random if omitted. */
  callId?: string;
  /** The clock every taskline timer in this call uses. Defaults to the wall clock. */
  clock?: Clock;
  /** Identity of the caller participant; DTMF from anyone else is ignored. */
  callerIdentity?: string;
}

const DTMF_DIGITS = new Set<string>('0123456789*#ABCD'.split(''));

/** True when `s` is a single valid DTMF key. */
export function isDtmfDigit(s: string): s is DtmfDigit {
  return DTMF_DIGITS.has(s);
}

/**
 * The per-call hub taskline hangs off an AgentSession: its clock, its caller, and the
 * DTMF and hang-up events. Rooms, the simulated caller and the terminal runner all feed
 * the same hub, so tasks never care where a key press came from.
 */
export class CallContext {
  readonly callId: string;
  readonly clock: Clock;
  readonly session: voice.AgentSession;
  private readonly emitter = new EventEmitter<CallEvents>();
  private _callerIdentity: string | undefined;
  private _hungUp: HangupEvent | undefined;
  private _ended: CallEnd | undefined;
  private waiters = 0;
  private dials = 0;
  private busyCount = 0;
  private secrets = 0;
  private _lastInput: InputModality | undefined;
  /** Final transcripts since the last caller message was committed (the latest few). */
  private heard: string[] = [];
  /** Recogniser confidences of the final transcripts in `heard` (0 < c ≤ 1), by their words. */
  private heardConfidence = new Map<string, number>();
  /** The lowest recogniser confidence of each recent caller message that had one, by id. */
  private readonly messageConfidence = new Map<string, number>();
  /** A driver declared the next caller message spoken (see {@link noteInput}). */
  private declaredSpeech = false;
  /** How the latest caller messages arrived, by message id (a few, oldest dropped first). */
  private readonly messages = new Map<string, 'speech' | 'text'>();
  private readonly expectations: Expectation[] = [];
  private readonly interceptors: TurnInterceptor[] = [];

  constructor(session: voice.AgentSession, options: CallOptions = {}) {
    this.session = session;
    this.callId = options.callId ?? `call_${crypto.randomUUID()}`;
    this.clock = options.clock ?? systemClock;
    this._callerIdentity = options.callerIdentity;
    this.emitter.setMaxListeners(64);
    // How the caller answers is read from upstream's own events, whatever drives the session
    // (a room, audio mode, text mode, a user's own driver): a final transcript is speech, a
    // caller message nothing transcribed is typed text; key presses note themselves.
    session.on(voice.AgentSessionEventTypes.UserInputTranscribed, (ev) => {
      const words = comparable(ev.transcript);
      if (!ev.isFinal || words === '') return;
      this._lastInput = 'speech';
      this.heard = [...this.heard.slice(-7), words];
    });
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, ({ item }) => {
      if (item.type === 'message' && item.role === 'user') this.commitMessage(item);
    });
  }

  /** Identity of the caller, once known. */
  get callerIdentity(): string | undefined {
    return this._callerIdentity;
  }

  /** Binds the call to its caller; DTMF from other participants is dropped from then on. */
  setCaller(identity: string): void {
    this._callerIdentity = identity;
  }

  /** The hang-up, if the caller has hung up. */
  get hungUp(): HangupEvent | undefined {
    return this._hungUp;
  }

  /**
   * Delivers one key press. Returns false (and delivers nothing) when it is not a DTMF key,
   * comes from someone other than the caller, or arrives after the hang-up.
   */
  pushDtmf(digit: string, participant: string): boolean {
    if (this._hungUp || !isDtmfDigit(digit)) return false;
    if (this._callerIdentity !== undefined && participant !== this._callerIdentity) return false;
    this._lastInput = 'dtmf';
    this.emitter.emit('dtmf', { digit, participant, at: this.clock.now() });
    return true;
  }

  /**
   * Marks the caller as gone: listeners see `hangup` first (so an active task can resolve
   * `hangup` and keep what it captured), then the session shuts down.
   */
  hangup(reason = 'caller hung up'): void {
    if (this._hungUp) return;
    this._hungUp = { reason, at: this.clock.now() };
    this.emitter.emit('hangup', this._hungUp);
    this.noteEnd('caller', reason);
    this.session.shutdown({ drain: false, reason: 'participant_disconnected' });
  }

  /** How the call ended, once it has: by the caller (a hang-up) or by the bot. */
  get ended(): CallEnd | undefined {
    return this._ended;
  }

  /**
   * Ends the call from the bot's side: says `goodbye` and waits for it to play (never to a
   * caller who already left), records and logs who ended the call, then shuts the session
   * down. Safe to call more than once.
   */
  async end(options: { goodbye?: string; reason?: string } = {}): Promise<void> {
    const session = this.session;
    if (options.goodbye && !this._hungUp && !this._ended && !isSessionClosing(session)) {
      try {
        await session.say(options.goodbye, { allowInterruptions: false }).waitForPlayout();
      } catch {
        // the session is closing already
      }
    }
    // A caller who hung up ended the call (already noted); a session closing for another
    // reason (the worker shutting down) was not ended by the bot either.
    if (this._hungUp || isSessionClosing(session)) return;
    this.noteEnd('bot', options.reason ?? 'the bot ended the call');
    session.shutdown();
  }

  /**
   * Records who ended the call (the first end wins), for logs and transcripts. `end()` and
   * `hangup()` call it; so does anything that ends the session some other way (a model's
   * `end_call` tool).
   */
  noteEnd(by: CallEnd['by'], reason: string): void {
    if (this._ended) return;
    this._ended = { by, reason, at: this.clock.now() };
    logLine(
      'taskline.call',
      'info',
      by === 'bot' ? 'call ended by the bot' : 'call ended: the caller hung up',
      { callId: this.callId, reason },
    );
    this.emitter.emit('ended', this._ended);
  }

  /**
   * How the caller's most recent input arrived: a final transcript of upstream's recogniser
   * (`user_input_transcribed`) is speech, a key press dtmf, a caller message nothing
   * transcribed (typed text) text. Before any input: speech when the session has audio input,
   * text otherwise.
   */
  get lastInputModality(): InputModality {
    if (this._lastInput) return this._lastInput;
    return this.session.input.audio ? 'speech' : 'text';
  }

  /**
   * How one caller message arrived: `speech` when upstream transcribed it (a final transcript
   * came before it), `text` when nothing did (it was typed). A task asks this for the message
   * it is answering, so an earlier key press never makes a spoken answer keypad input.
   */
  modalityOf(message: { id: string; textContent?: string }): 'speech' | 'text' {
    const known = this.messages.get(message.id);
    if (known) return known;
    if (this.declaredSpeech) return 'speech';
    // Upstream commits a spoken turn as its final transcripts joined: a message holding one
    // of them was heard; one that holds none was typed (a transcript left over is stale).
    const said = comparable(message.textContent ?? '');
    return this.heard.some((heard) => said.includes(heard)) ? 'speech' : 'text';
  }

  /**
   * Records the recogniser's confidence in one final transcript (a speech-to-text event's
   * `alternatives[0].confidence`). 0, absent or out of range means the recogniser gave none:
   * "unknown", never "low". Captures call it through their STT node (see
   * ../tasks/heard-confidence.ts); a driver with its own recogniser may call it directly.
   */
  noteConfidence(transcript: string, confidence: number | undefined): void {
    const words = comparable(transcript);
    if (words === '' || confidence === undefined || !(confidence > 0 && confidence <= 1)) return;
    remember(this.heardConfidence, words, confidence);
  }

  /**
   * How sure the recogniser was of a caller message: the lowest confidence of the final
   * transcripts it holds, or undefined when the recogniser gave none (or the message was typed
   * or keyed). A capture reads back a value parsed from an unsure transcript before taking it.
   */
  confidenceOf(message: { id: string; textContent?: string }): number | undefined {
    const known = this.messageConfidence.get(message.id);
    if (known !== undefined) return known;
    const said = comparable(message.textContent ?? '');
    let lowest: number | undefined;
    for (const [words, confidence] of this.heardConfidence) {
      if (said.includes(words)) lowest = Math.min(lowest ?? 1, confidence);
    }
    return lowest;
  }

  /**
   * Declares how the caller's latest input arrived, for a driver that feeds caller messages
   * upstream did not transcribe (a simulated caller "speaking" text): `speech` makes the next
   * caller message speech. The call notes transcripts, typed messages and keys itself.
   */
  noteInput(modality: InputModality): void {
    this._lastInput = modality;
    if (modality !== 'dtmf') this.declaredSpeech = modality === 'speech';
  }

  /** A caller message entered the conversation: speech if upstream transcribed it. */
  private commitMessage(message: { id: string; textContent?: string }): void {
    const modality = this.modalityOf(message);
    const confidence = this.confidenceOf(message);
    if (confidence !== undefined) remember(this.messageConfidence, message.id, confidence);
    this.heard = [];
    this.heardConfidence = new Map();
    this.declaredSpeech = false;
    this._lastInput = modality;
    this.messages.set(message.id, modality);
    if (this.messages.size > 16) {
      const oldest = this.messages.keys().next().value;
      if (oldest !== undefined) this.messages.delete(oldest);
    }
  }

  /**
   * Declares that the bot is dialing the far end until the returned function is called: a
   * callee who leaves the room meanwhile (rejected, busy, never answered) has not hung up an
   * established call; the dial's own result says what happened. `callOut` declares it.
   */
  beginDial(): () => void {
    this.dials += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.dials -= 1;
    };
  }

  /** True while the bot is dialing the far end (see {@link beginDial}). */
  get isDialing(): boolean {
    return this.dials > 0;
  }

  /** True while something (a digit collector, a blocked tool) waits on the caller. */
  get isWaitingForCaller(): boolean {
    return this.waiters > 0;
  }

  /** True while a task that masks its input (a PIN) is collecting it. */
  get expectsSecret(): boolean {
    return this.secrets > 0;
  }

  /**
   * Declares that the caller's input is a secret until the returned function is called, so
   * whatever echoes the caller (the simulated caller's transcript, `taskline run`, the logger
   * taskline starts) masks it.
   */
  expectSecret(): () => void {
    this.secrets += 1;
    const endLogMasking = beginSecretCapture();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.secrets -= 1;
      endLogMasking();
    };
  }

  /** What the active capture listens for (the most recent one published), if any. */
  get expectation(): Expectation | undefined {
    return this.expectations.at(-1);
  }

  /**
   * Publishes what the agent listens for until the returned function is called (a capture
   * task calls it when it starts waiting and releases it when it ends). Nested captures
   * stack: the most recent one wins, and releasing it restores the one below.
   */
  expect(expectation: Expectation): () => void {
    this.expectations.push(expectation);
    this.emitter.emit('expecting', expectation);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const before = this.expectation;
      const i = this.expectations.lastIndexOf(expectation);
      if (i >= 0) this.expectations.splice(i, 1);
      // Replacing one's own expectation (publish the new, then release the old) is one change.
      if (this.expectation !== before) this.emitter.emit('expecting', this.expectation);
    };
  }

  /**
   * Marks a step boundary: the capture `task` has its answer (or gave up) and is closing, and
   * the next question has not been asked. Capture tasks call it as they close; listeners
   * that hold speech for a safe moment (a background result) may say it now, synchronously,
   * in the closing capture's activity, so it is heard before anything else is asked.
   */
  noteStepEnded(task: string): void {
    if (this._hungUp || isSessionClosing(this.session)) return;
    this.emitter.emit('stepEnded', task);
  }

  /**
   * Registers an interceptor of caller turns until the returned function is called (a flow
   * with repair patterns registers one while it runs): the active capture offers it every
   * turn, and every key it does not take as input, before its own parser. Interceptors
   * stack: the most recent one is asked first, and the first that acts wins.
   */
  interceptTurns(interceptor: TurnInterceptor): () => void {
    this.interceptors.push(interceptor);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const i = this.interceptors.lastIndexOf(interceptor);
      if (i >= 0) this.interceptors.splice(i, 1);
    };
  }

  /**
   * What the call's interceptors make of a caller turn (see {@link interceptTurns}), or
   * undefined when none acts. An interceptor that throws is skipped: a turn is never lost.
   */
  interceptTurn(turn: InterceptedTurn): TurnAction | undefined {
    for (let i = this.interceptors.length - 1; i >= 0; i--) {
      try {
        const action = this.interceptors[i]!.intercept(turn);
        if (action) return action;
      } catch (error) {
        logLine('taskline.call', 'warn', 'a turn interceptor failed; the turn goes to the task', {
          callId: this.callId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return undefined;
  }

  /** True while the agent works between turns on something that is not speech. */
  get isBusy(): boolean {
    return this.busyCount > 0;
  }

  /**
   * Declares work between turns that the session cannot see (a flow writing its checkpoint
   * and preparing the next question): the caller's turn is not over until it ends. Call the
   * returned function when it does.
   */
  beginWork(): () => void {
    this.busyCount += 1;
    this.emitter.emit('busy', this.busyCount);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busyCount -= 1;
      this.emitter.emit('busy', this.busyCount);
    };
  }

  /**
   * Declares that the agent is blocked until the caller acts (presses keys, speaks). Call
   * the returned function when the wait ends. Simulators and the terminal runner use this
   * to know a turn is over although a tool is still running.
   */
  waitForCaller(): () => void {
    this.waiters += 1;
    this.emitter.emit('waiting', this.waiters);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.waiters -= 1;
      this.emitter.emit('waiting', this.waiters);
    };
  }

  /**
   * The next key the caller presses, or undefined after `timeoutMs` on the call's clock,
   * on hang-up, or when `signal` aborts. Bounded by design: there is no "wait forever".
   */
  nextDtmf(timeoutMs: number, signal?: AbortSignal): Promise<DtmfEvent | undefined> {
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) {
      throw new RangeError(`nextDtmf(timeoutMs) needs a positive finite number, got ${timeoutMs}`);
    }
    return new Promise((resolve) => {
      if (this._hungUp || signal?.aborted) {
        resolve(undefined);
        return;
      }
      const release = this.waitForCaller();
      const finish = (ev: DtmfEvent | undefined) => {
        timer.cancel();
        offDtmf();
        offHangup();
        signal?.removeEventListener('abort', onAbort);
        release();
        resolve(ev);
      };
      const onAbort = () => finish(undefined);
      const timer = this.clock.setTimer(timeoutMs, () => finish(undefined));
      const offDtmf = this.on('dtmf', (ev) => finish(ev));
      const offHangup = this.on('hangup', () => finish(undefined));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Subscribes to a call event; returns the function that unsubscribes. */
  on<K extends keyof CallEvents>(event: K, listener: (...args: CallEvents[K]) => void): () => void {
    this.emitter.on(event, listener as never);
    return () => this.emitter.off(event, listener as never);
  }
}

/** Words of a transcript or message, for telling whether one holds the other. */
/** Sets `key` in a small map that keeps only its latest 16 entries. */
function remember<K>(map: Map<K, number>, key: K, value: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > 16) map.delete(map.keys().next().value as K);
}

function comparable(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const calls = new WeakMap<voice.AgentSession, CallContext>();

/**
 * Attaches taskline's call context to a session (once, before tasks run). Later calls
 * return the existing context unchanged.
 */
export function attachCall(session: voice.AgentSession, options: CallOptions = {}): CallContext {
  let call = calls.get(session);
  if (!call) {
    call = new CallContext(session, options);
    calls.set(session, call);
  }
  return call;
}

/** The call context of a session, created with defaults the first time it is asked for. */
export function callOf(session: voice.AgentSession): CallContext {
  return attachCall(session);
}
