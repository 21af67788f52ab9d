/**
 * Waiting on the caller, the same way for every capture: keypad entry (keys collected until the
 * finish key, the most digits, a whole answer or quiet after a key), the task's own speech (a
 * key interrupts it; timers wait until it has played out), the no-input timer (held while
 * the caller speaks, counted afresh from the end of their speech and from their transcript),
 * and the `call.waitForCaller()` declaration while the task listens.
 */
import { voice } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import type { TimerHandle } from '../core/clock.js';
import type { KeypadEntry } from './typed-task-spec.js';

/** Most keys one entry buffers, whatever the entry allows: a key-mashing caller stays bounded. */
export const MAX_ENTRY_KEYS = 64;

const DIGIT_KEYS = '0123456789';

/** Collects one keypad entry at a time and hands it over (an empty entry is a silence). */
export class KeypadCollector {
  private keys = '';
  private timer: TimerHandle | undefined;

  constructor(
    private readonly entry: KeypadEntry,
    private readonly call: CallContext,
    private readonly onEntry: (keys: string) => void,
  ) {}

  /**
   * True for a key this entry takes as its own input: its finish and delete keys, and its
   * `ownKeys` (default its `validKeys`, else the digits). Any other key may be a request for
   * the whole call (a repair key) before it is typed into the entry.
   */
  owns(digit: string): boolean {
    const { finishOnKey = '#', deleteKey, ownKeys, validKeys } = this.entry;
    if (finishOnKey !== '' && digit === finishOnKey) return true;
    if (deleteKey !== undefined && digit === deleteKey) return true;
    return (ownKeys ?? validKeys ?? DIGIT_KEYS).includes(digit);
  }

  /** True while some keys of an unfinished entry are buffered. */
  get pending(): boolean {
    return this.keys !== '';
  }

  /** One key pressed. */
  press(digit: string): void {
    this.pause();
    const { finishOnKey = '#', deleteKey } = this.entry;
    if (finishOnKey !== '' && digit === finishOnKey) {
      this.flush();
      return;
    }
    if (deleteKey !== undefined && digit === deleteKey) {
      this.keys = this.keys.slice(0, -1);
      this.resume(true);
      return;
    }
    this.keys += digit;
    if (this.complete()) {
      this.flush();
      return;
    }
    this.resume(true);
  }

  /** Stops the quiet-after-a-key timer while the task speaks (the keys so far are kept). */
  pause(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Restarts the quiet-after-a-key timer when keys are buffered (or `always`). */
  resume(always = false): void {
    if (!always && !this.pending) return;
    this.pause();
    this.timer = this.call.clock.setTimer(this.entry.interDigitTimeoutMs ?? 3_000, () => {
      this.timer = undefined;
      this.flush();
    });
  }

  /** Drops the keys so far (the caller answered some other way). */
  reset(): void {
    this.pause();
    this.keys = '';
  }

  private complete(): boolean {
    const { maxDigits, validKeys, isComplete } = this.entry;
    let counted = 0;
    for (const k of this.keys) if (validKeys === undefined || validKeys.includes(k)) counted += 1;
    return counted >= maxDigits || this.keys.length >= MAX_ENTRY_KEYS || !!isComplete?.(this.keys);
  }

  private flush(): void {
    const keys = this.keys;
    this.reset();
    this.onEntry(keys);
  }
}

/**
 * Tells `listener` when the caller starts speaking (true: the session's VAD heard speech)
 * and when their speech is over (false: they stopped, or — while they are not speaking — a
 * final transcript of theirs arrived). A silence timer holds on true and counts afresh on
 * false: what it times is the caller's silence, not the recogniser's latency (on a busy
 * machine a transcript arrives seconds after the words ended). Returns the unsubscribe.
 */
export function watchCallerSpeech(
  session: voice.AgentSession,
  listener: (speaking: boolean) => void,
): () => void {
  let speaking = session.userState === 'speaking';
  const onState = (ev: voice.UserStateChangedEvent) => {
    const now = ev.newState === 'speaking';
    if (now === speaking) return;
    speaking = now;
    listener(now);
  };
  const onTranscript = (ev: voice.UserInputTranscribedEvent) => {
    if (ev.isFinal && !speaking) listener(false);
  };
  session.on(voice.AgentSessionEventTypes.UserStateChanged, onState);
  session.on(voice.AgentSessionEventTypes.UserInputTranscribed, onTranscript);
  return () => {
    session.off(voice.AgentSessionEventTypes.UserStateChanged, onState);
    session.off(voice.AgentSessionEventTypes.UserInputTranscribed, onTranscript);
  };
}

/** What {@link CallerInput} reports to its task. */
export interface CallerInputEvents {
  /** A whole keypad entry ('' when the caller ended it with nothing entered). */
  entry(keys: string): void;
  /** The caller said and pressed nothing for the no-input timeout after the task's speech. */
  silence(): void;
  /**
   * A key the task's keypad does not take as input (every key, for a task without one): the
   * task returns what to do once the key has interrupted its speech, or undefined to treat
   * the key as usual.
   */
  foreignKey?(digit: string): (() => void) | undefined;
  /**
   * True while the task may still take an answer (it has not ended, been completed from
   * outside, or begun escalating).
   */
  listening(): boolean;
}

/**
 * One capture's ears: its speech (tracked so a key interrupts it and timers wait for it),
 * its keypad entry (when it takes keys), its no-input timer, and the declaration that the
 * agent is blocked on the caller while it listens.
 */
export class CallerInput {
  private readonly speeches = new Set<voice.SpeechHandle>();
  private readonly keypad: KeypadCollector | undefined;
  private noInput: TimerHandle | undefined;
  /** The no-input wait is on (the task listens, no answer yet), even while speech holds it. */
  private waiting = false;
  private callerSpeaking = false;
  private releaseWait: (() => void) | undefined;
  private detach: (() => void) | undefined;

  constructor(
    private readonly call: CallContext,
    private readonly noInputMs: number,
    keypad: KeypadEntry | undefined,
    private readonly on: CallerInputEvents,
  ) {
    this.keypad = keypad && new KeypadCollector(keypad, call, (keys) => on.entry(keys));
  }

  /**
   * Listens to the call's keys and the session's speech while the task is the current agent
   * (a task paused under a nested one neither hears keys nor tracks the other's speech).
   */
  attach(session: voice.AgentSession, isCurrent: () => boolean): void {
    const offKeys = this.call.on('dtmf', ({ digit }) => {
      if (this.on.listening() && isCurrent()) this.key(digit);
    });
    const onSpeech = (ev: voice.SpeechCreatedEvent) => {
      if (this.on.listening() && isCurrent()) this.speaking(ev.speechHandle);
    };
    session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    const offCaller = watchCallerSpeech(session, (speaking) => this.caller(speaking));
    this.detach = () => {
      offKeys();
      offCaller();
      session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    };
  }

  /** The task started speaking: silence does not count (and timers wait) until it ends. */
  speaking(handle: voice.SpeechHandle): void {
    if (this.speeches.has(handle)) return;
    this.speeches.add(handle);
    this.quiet();
    handle.addDoneCallback(() => {
      this.speeches.delete(handle);
      this.listen();
    });
  }

  /** A key: interrupts the task's speech and goes into the entry (or acts as a request). */
  key(digit: string): void {
    const act = this.keypad?.owns(digit) ? undefined : this.on.foreignKey?.(digit);
    if (act) {
      this.interrupt();
      this.cancelNoInput();
      this.keypad?.reset();
      act();
      return;
    }
    if (!this.keypad) return;
    this.interrupt();
    this.cancelNoInput();
    this.keypad.press(digit);
  }

  /** A spoken or typed turn: the keys so far and the no-input wait are over. */
  turn(): void {
    this.keypad?.reset();
    this.cancelNoInput();
  }

  /**
   * The caller started (true) or finished (false) speaking, or their transcript arrived
   * (false): the no-input wait holds while they speak and counts from zero after, so an
   * answer still on its way through the recogniser is not taken for silence.
   */
  caller(speaking: boolean): void {
    this.callerSpeaking = speaking;
    if (!this.waiting) return;
    this.noInput?.cancel();
    this.noInput = undefined;
    if (!speaking) this.listen();
  }

  /** Starts listening (timers, the wait declaration) once nothing of the task is playing. */
  listen(): void {
    if (this.speeches.size > 0 || !this.on.listening()) return;
    if (this.keypad) this.releaseWait ??= this.call.waitForCaller();
    if (this.keypad?.pending) {
      this.keypad.resume();
      return;
    }
    this.waiting = true;
    if (this.noInput || this.callerSpeaking) return;
    this.noInput = this.call.clock.setTimer(this.noInputMs, () => {
      this.noInput = undefined;
      if (this.on.listening()) this.on.silence();
    });
  }

  /** Stops listening: every timer, the wait declaration, keys and speech tracking. */
  stop(): void {
    this.quiet();
    this.keypad?.reset();
    this.detach?.();
    this.detach = undefined;
  }

  /** Interrupts what the task is saying (a key cuts off its prompt). */
  interrupt(): void {
    for (const handle of this.speeches) {
      if (!handle.done() && handle.allowInterruptions) handle.interrupt();
    }
  }

  private quiet(): void {
    this.cancelNoInput();
    this.keypad?.pause();
    const release = this.releaseWait;
    this.releaseWait = undefined;
    release?.();
  }

  private cancelNoInput(): void {
    this.waiting = false;
    this.noInput?.cancel();
    this.noInput = undefined;
  }
}
