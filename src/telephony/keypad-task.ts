import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, voice } from '@livekit/agents';
import { z } from 'zod/v4';
import { callOf, type DtmfEvent, type InputModality } from '../core/call.js';
import { systemClock, type TimerHandle } from '../core/clock.js';
import { traceReprompt } from '../observability/tasks.js';
import type { FailedOutcome, Outcome } from '../outcome.js';
import {
  CaptureTask,
  capReached,
  EXHAUSTED_STATUSES,
  joinSpeech,
  ToolGuard,
  totalFailures,
} from '../tasks/capture.js';
import { emptyStream, textStream, toolCallStream } from '../tasks/chunks.js';
import { guardedModelReply } from '../tasks/model-reply.js';
import { pickReprompt, type RetryPolicy, type Watchdog } from '../tasks/policy.js';
import { logCall } from './log.js';

/** Name of the internal tool that runs `retry.onExhausted` inside a tool context. */
export const ESCALATE_TOOL = 'taskline_escalate';

/** What every keypad task is built from (already validated and defaulted). */
export interface KeypadTaskConfig<T> {
  /** Task id: scripts, captures and logs key on it. */
  name: string;
  /** What a model (if any) is told about the task. */
  instructions: string;
  /** Spoken with `session.say` when the task starts (no model call). */
  prompt: string;
  /** Shorter prompt repeated after a failure (default: the prompt). */
  reprompt?: string;
  retry: RetryPolicy<T>;
  watchdog: Watchdog;
  /** Silence after a prompt before it counts as no input. */
  firstKeyTimeoutMs: number;
  /** The caller's input is a secret (a PIN): echoes of it are masked while the task runs. */
  secret?: boolean;
  /** Tools for the model fallback. */
  tools?: llm.ToolContextEntry[];
  llm?: llm.LLM;
  chatCtx?: llm.ChatContext;
}

/** The kinds of failed answer a retry policy caps. */
export type FailureKind = 'noInput' | 'noMatch' | 'invalid';

type Stream = ReadableStream<llm.ChatChunk | string | FlushSentinel>;

/**
 * The shared engine of keypad tasks (collectDigits, menu): an upstream AgentTask that
 * speaks its prompt with `session.say`, listens to the call's DTMF (the first key
 * interrupts the prompt), declares `call.waitForCaller()` while it waits, runs its
 * timers on the call's clock, counts failures against the same RetryPolicy as typed
 * tasks, and always resolves an {@link Outcome} — `hangup` when the caller leaves.
 */
export abstract class KeypadTask<T> extends CaptureTask<T> {
  protected readonly config: KeypadTaskConfig<T>;
  protected readonly counts: Record<FailureKind, number> = { noInput: 0, noMatch: 0, invalid: 0 };
  /** True once an outcome is decided (escalation may still be running). */
  protected finished = false;
  private turns = 0;
  /** A noMatch/invalid was already counted for the caller's current utterance or key. */
  private failedThisTurn = false;
  private readonly seen = new Set<string>();
  private readonly speeches = new Set<voice.SpeechHandle>();
  private keyTimer: TimerHandle | undefined;
  private watchdogTimer: TimerHandle | undefined;
  private releaseWait: (() => void) | undefined;
  private readonly cleanups: Array<() => void> = [];
  private escalation: FailedOutcome | undefined;
  private escalationStarted = false;
  private escalationCalls = 0;

  constructor(config: KeypadTaskConfig<T>) {
    const guard = new ToolGuard();
    super(
      {
        id: config.name,
        instructions: config.instructions,
        llm: config.llm,
        chatCtx: config.chatCtx,
        tools: [
          ...guard.wrap(config.tools ?? []),
          // Not guarded: the escalation runs after the outcome is decided, before completion.
          llm.tool({
            name: ESCALATE_TOOL,
            description: 'Internal to taskline; never call it.',
            parameters: z.object({}),
            execute: async () => this.runEscalation(),
          }),
        ],
      },
      guard,
    );
    this.config = config;
  }

  /** Called for each key the caller presses (after the prompt was interrupted). */
  protected abstract onKey(key: string): void;

  /** Called when nothing is being said and the task waits on the caller: arm timers here. */
  protected abstract onListen(): void;

  /** Called with what the caller said or typed; returns the reply to speak. */
  protected abstract onSpeech(
    message: llm.ChatMessage,
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream>;

  /** The full prompt (what `repeat` replays). */
  protected get fullPrompt(): string {
    return this.config.prompt;
  }

  override async onEnter(): Promise<void> {
    this.entered = true;
    const session = this.session;
    this.agentSession = session;
    const call = callOf(session);
    this.call = call;
    if (call.hungUp) {
      this.finish({ status: 'hangup', attempts: 0, reason: call.hungUp.reason });
      return;
    }
    for (const item of this.chatCtx.items) this.seen.add(item.id);
    this.cleanups.push(
      call.on('hangup', (ev) =>
        this.finish({ status: 'hangup', attempts: this.failures(), reason: ev.reason }),
      ),
      call.on('dtmf', (ev) => this.keyPressed(ev)),
    );
    if (this.config.secret) this.cleanups.push(call.expectSecret());
    this.watchdogTimer = call.clock.setTimer(this.config.watchdog.maxDurationMs, () =>
      this.finish({
        status: 'timeout',
        attempts: this.failures(),
        reason: `no answer within ${this.config.watchdog.maxDurationMs} ms`,
      }),
    );
    const onSpeech = (ev: voice.SpeechCreatedEvent) => this.track(ev.speechHandle);
    session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    this.cleanups.push(() => session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech));
    this.speak(this.fullPrompt);
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    if (this.escalation && !this.escalationStarted) {
      this.escalationStarted = true;
      this.escalationCalls += 1;
      return toolCallStream(
        `${ESCALATE_TOOL}_${this.config.name}_${this.escalationCalls}`,
        ESCALATE_TOOL,
        {},
      );
    }
    let message: llm.ChatMessage | undefined;
    for (const item of chatCtx.items) {
      if (this.seen.has(item.id)) continue;
      this.seen.add(item.id);
      if (item.type === 'message' && item.role === 'user') message = item;
    }
    if (this.finished) return emptyStream();
    if (message) {
      this.failedThisTurn = false;
      this.cancelKeyTimer();
      this.turns += 1;
      if (this.turns > this.config.watchdog.maxTurns) {
        this.finish({
          status: 'timeout',
          attempts: this.failures(),
          reason: `no answer within ${this.config.watchdog.maxTurns} caller turns`,
        });
        return emptyStream();
      }
      return this.onSpeech(message, chatCtx, toolCtx, modelSettings);
    }
    // A tool reply: once the utterance has failed (and its re-prompt was spoken), the model
    // is not asked again, so one utterance is one attempt and one model call.
    if (this.failedThisTurn || !this.config.tools?.length) return emptyStream();
    return this.model(chatCtx, toolCtx, modelSettings);
  }

  /** Asks the model (the fallback for free speech), without taskline's internal tool. */
  protected async model(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    const visible = new llm.ToolContext([
      ...Object.values(toolCtx.functionTools).filter((t) => t.name !== ESCALATE_TOOL),
      ...toolCtx.providerTools,
    ]);
    // A model call that fails is a failed attempt with a re-prompt, never half an answer.
    const clock = this.call?.clock ?? systemClock;
    const guarded = guardedModelReply(this, chatCtx, visible, modelSettings, clock, () =>
      this.fail('noMatch'),
    );
    return guarded ?? (await super.llmNode(chatCtx, visible, modelSettings)) ?? emptyStream();
  }

  /** Speaks `text` with `session.say` (no model) and tracks it as this task's speech. */
  protected speak(text: string): void {
    if (this.finished || !text) return;
    this.track(this.session.say(text));
  }

  /** A model-free reply for `llmNode`: `text`, or nothing. */
  protected reply(text: string | undefined): Stream {
    return text ? textStream(text) : emptyStream();
  }

  /**
   * Counts one failed answer. Returns what to say next (the reason and a tapered
   * re-prompt), or undefined when a cap was reached and the task is ending, or when this
   * utterance had already failed (its re-prompt is said already).
   */
  protected fail(kind: FailureKind, reason?: string): string | undefined {
    // One caller utterance (or key) is one attempt, however often the model says it failed.
    if (kind !== 'noInput') {
      if (this.failedThisTurn) return undefined;
      this.failedThisTurn = true;
    }
    this.counts[kind] += 1;
    if (this.checkCaps()) return undefined;
    const n = this.counts[kind];
    traceReprompt(this, kind, n);
    const again = this.config.reprompt ?? this.fullPrompt;
    const custom = pickReprompt(this.config.retry.prompts?.[kind], n);
    if (custom) return joinSpeech(reason ?? '', custom);
    if (kind === 'noInput') {
      return joinSpeech(n > 1 ? 'Are you still there?' : "Sorry, I didn't hear anything.", again);
    }
    if (kind === 'noMatch') return joinSpeech(reason ?? "Sorry, I didn't understand.", again);
    return joinSpeech(reason ?? 'That is not valid.', again);
  }

  /** Failed answers so far. */
  protected override failures(): number {
    return totalFailures(this.counts);
  }

  protected override markFinished(): void {
    this.finished = true;
  }

  /** How the caller's latest input arrived. */
  protected modality(): InputModality {
    return this.call?.lastInputModality ?? 'text';
  }

  /** Adds a caller line to the task's chat context (merged into the parent's when it ends). */
  protected addCallerLine(text: string): void {
    const ctx = this.chatCtx.copy();
    this.seen.add(ctx.addMessage({ role: 'user', content: text }).id);
    // The copy is assigned synchronously; only a realtime model update is awaited.
    this.updateChatCtx(ctx).catch(() => undefined);
  }

  /** Starts the key timer (first key or between keys), replacing any running one. */
  protected armKeyTimer(ms: number, onTimeout: () => void): void {
    this.cancelKeyTimer();
    if (this.finished || !this.call) return;
    this.keyTimer = this.call.clock.setTimer(ms, () => {
      this.keyTimer = undefined;
      if (!this.finished) onTimeout();
    });
  }

  /** Stops the key timer. */
  protected cancelKeyTimer(): void {
    this.keyTimer?.cancel();
    this.keyTimer = undefined;
  }

  /** Ends the task with `outcome` (running `retry.onExhausted` when a cap was reached). */
  protected finish(outcome: Outcome<T>): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    logCall(this.call, 'info', `${this.config.name} ended: ${outcome.status}`, {
      task: this.config.name,
      status: outcome.status,
      attempts: outcome.attempts,
      reason: outcome.status === 'ok' ? undefined : outcome.reason,
      modality: outcome.status === 'ok' ? outcome.modality : undefined,
    });
    const onExhausted = this.config.retry.onExhausted;
    if (
      outcome.status !== 'ok' &&
      EXHAUSTED_STATUSES.has(outcome.status) &&
      onExhausted !== 'return'
    ) {
      this.escalate(outcome);
      return;
    }
    this.settle(outcome);
  }

  /**
   * Runs the escalation through a synthetic tool call, so it executes inside a tool
   * context (where an inline AgentTask such as upstream's WarmTransferTask may run).
   */
  private escalate(outcome: FailedOutcome): void {
    this.escalation = outcome;
    try {
      this.session.generateReply();
    } catch {
      void this.runEscalation();
    }
  }

  private async runEscalation(): Promise<undefined> {
    const outcome = this.escalation;
    const onExhausted = this.config.retry.onExhausted;
    if (!outcome || onExhausted === 'return' || this.done) return undefined;
    this.escalation = undefined;
    let result: Outcome<T>;
    try {
      result = await onExhausted(outcome);
    } catch (error) {
      result = {
        status: 'cancelled',
        attempts: outcome.attempts,
        reason: `escalation failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    this.settle(result);
    return undefined;
  }

  private settle(outcome: Outcome<T>): void {
    if (!this.done) this.complete(outcome);
  }

  private checkCaps(): boolean {
    if (this.finished) return true;
    const reached = capReached(this.counts, this.config.retry);
    if (reached) this.finish(reached);
    return reached !== undefined;
  }

  private keyPressed(ev: DtmfEvent): void {
    if (this.finished) return;
    this.failedThisTurn = false;
    for (const handle of this.speeches) {
      if (!handle.done() && handle.allowInterruptions) handle.interrupt();
    }
    this.onKey(ev.digit);
  }

  private track(handle: voice.SpeechHandle): void {
    if (this.finished || this.speeches.has(handle)) return;
    if (this.agentSession?.currentAgent !== this) return;
    this.speeches.add(handle);
    this.cancelKeyTimer();
    this.stopWaiting();
    handle.addDoneCallback(() => {
      this.speeches.delete(handle);
      if (this.speeches.size === 0) this.listen();
    });
  }

  private listen(): void {
    if (this.finished || this.escalation || this.speeches.size > 0 || !this.call) return;
    if (!this.releaseWait) this.releaseWait = this.call.waitForCaller();
    this.onListen();
  }

  private stopWaiting(): void {
    const release = this.releaseWait;
    this.releaseWait = undefined;
    release?.();
  }

  protected override cleanup(): void {
    this.cancelKeyTimer();
    this.watchdogTimer?.cancel();
    this.watchdogTimer = undefined;
    this.stopWaiting();
    for (const off of this.cleanups.splice(0)) off();
  }
}
