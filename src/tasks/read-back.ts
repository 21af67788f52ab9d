/**
 * A capture's read-back state: whether it is asking its question, waiting for a yes to a value
 * it read back ("I have X. Is that right?"), or asking which of the caller's alternatives was
 * meant ("Was that 7 or 8?"), and the words it says for each.
 */
import type { InputModality } from '../core/call.js';
import { joinSpeech } from './capture.js';
import {
  chooseQuestion,
  confirmQuestion,
  type ReadBackReason,
  type ReadBackState,
} from './confirm.js';

/** A value waiting for the caller's yes. */
export interface PendingValue<T> {
  value: T;
  modality: InputModality;
  reason: ReadBackReason;
}

/** The read-back phase of one capture. */
export class ReadBack<T> {
  private pendingValue: PendingValue<T> | undefined;
  private offered: readonly T[] = [];
  /** The caller rejected a read-back: values are spelled from now on. */
  private spelled = false;

  constructor(
    /** A value in words; `spelled` after a rejection. */
    private readonly speakable: (value: T, spelled: boolean) => string,
    /** The task's question, asked again after a rejection. */
    private readonly prompt: string | undefined,
    /** Called whenever the phase changes (the task publishes what it listens for). */
    private readonly onChange: () => void,
  ) {}

  /** A value is read back and waits for a yes. */
  get confirming(): boolean {
    return this.pendingValue !== undefined;
  }

  /** Nothing is pending: the next answer is a fresh one. */
  get asking(): boolean {
    return this.pendingValue === undefined && this.offered.length === 0;
  }

  /** The value waiting for a yes. */
  get pending(): PendingValue<T> | undefined {
    return this.pendingValue;
  }

  /** What a reply is judged against, while something is pending. */
  get state(): ReadBackState<T> | undefined {
    if (this.offered.length > 0) return { kind: 'choose', candidates: this.offered };
    const p = this.pendingValue;
    return p ? { kind: 'confirm', value: p.value, reason: p.reason } : undefined;
  }

  /** Reads `pending` back; returns the question. */
  confirm(pending: PendingValue<T>): string {
    this.set(pending, []);
    return this.question()!;
  }

  /** Asks which of `candidates` was meant; returns the question. */
  choose(candidates: readonly T[]): string {
    this.set(undefined, candidates);
    return this.question()!;
  }

  /** Drops what was pending. */
  clear(): void {
    if (!this.asking) this.set(undefined, []);
  }

  /** The caller said the value is wrong: true when a read-back (not a choice) was rejected. */
  reject(): boolean {
    this.spelled = true;
    return this.confirming;
  }

  /** The question pending, asked again (undefined when nothing is pending). */
  question(): string | undefined {
    if (this.offered.length > 0) return chooseQuestion(this.spokenCandidates());
    const p = this.pendingValue;
    return p ? confirmQuestion(this.speak(p.value), p.reason) : undefined;
  }

  /** The alternatives on offer, in words. */
  spokenCandidates(): string[] {
    return this.offered.map((c) => this.speak(c));
  }

  /** A value in words, spelled once the caller rejected a read-back. */
  speak(value: T, spelled = this.spelled): string {
    return this.speakable(value, spelled);
  }

  /** What the task says after a rejection with no new value. */
  reask(): string {
    return joinSpeech('Sorry about that.', this.prompt ?? 'Please say it again.');
  }

  private set(pending: PendingValue<T> | undefined, candidates: readonly T[]): void {
    this.pendingValue = pending;
    this.offered = candidates;
    this.onChange();
  }
}
