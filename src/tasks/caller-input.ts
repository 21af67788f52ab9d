/**
 * Waiting on the caller in a typed task: keypad answers (keys collected until the finish key,
 * the most digits, a whole answer or quiet after a key) and the no-input timer (armed once
 * the task's speech has all played out, cancelled by any input).
 */
import type { voice } from '@livekit/agents';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { KeypadEntry } from './typed-task-spec.js';

/** Collects one keypad answer at a time and hands it to `onAnswer`. */
export class KeypadCollector {
  private keys = '';
  private timer: TimerHandle | undefined;

  constructor(
    private readonly entry: KeypadEntry,
    private readonly clock: Clock,
    private readonly onAnswer: (keys: string) => void,
  ) {}

  /** One key pressed. */
  press(digit: string): void {
    this.cancel();
    if (digit === (this.entry.finishOnKey ?? '#')) {
      this.flush();
      return;
    }
    this.keys += digit;
    if (this.keys.length >= this.entry.maxDigits || this.entry.isComplete?.(this.keys)) {
      this.flush();
      return;
    }
    this.timer = this.clock.setTimer(this.entry.interDigitTimeoutMs ?? 3_000, () => this.flush());
  }

  /** Stops waiting for more keys (the keys so far are kept). */
  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Hands the keys so far over as an answer (nothing when there are none). */
  private flush(): void {
    this.cancel();
    const keys = this.keys;
    this.keys = '';
    if (keys) this.onAnswer(keys);
  }
}

/** Fires `onSilence` when the caller says nothing for `timeoutMs` after the task stops speaking. */
export class NoInputTimer {
  private speaking = 0;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly onSilence: () => void,
  ) {}

  /** The task started speaking: wait for that speech to finish before arming. */
  speech(handle: voice.SpeechHandle, stillWaiting: () => boolean): void {
    this.speaking += 1;
    this.cancel();
    handle.addDoneCallback(() => {
      this.speaking -= 1;
      if (this.speaking === 0 && stillWaiting()) this.arm();
    });
  }

  /** Stops the timer (the caller said or pressed something, or the task ended). */
  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = this.clock.setTimer(this.timeoutMs, () => {
      this.timer = undefined;
      this.onSilence();
    });
  }
}
