// Over 500 lines on purpose: the one capture engine of taskline (typed tasks, digit collection
// and menus are all this class), whose overrides (onEnter, llmNode, its tools) share one state
// machine, which reads best in one place. What has a job of its own lives beside it:
// ./typed-task-spec.ts (the spec, tools, counters, default wording), ./caller-input.ts (keys,
// speech, no-input timer), ./confirm.ts (what replies to a read-back mean),
// ./task-expectation.ts (what the task publishes it listens for), ./parsers (how answers are
// read) and ./capture.ts (the run()/unwind shell).
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, voice } from '@livekit/agents';
import { z } from 'zod/v4';
import { callOf, type InputModality } from '../core/call.js';
import { systemClock, type TimerHandle } from '../core/clock.js';
import { logLine } from '../core/log.js';
import { maskPII, maskValue, registerSecret } from '../core/pii.js';
import { countModelCallAvoided, traceReprompt } from '../observability/tasks.js';
import type { FailedOutcome, Outcome } from '../outcome.js';
import { CallerInput } from './caller-input.js';
import {
  CaptureTask,
  capReached,
  EXHAUSTED_STATUSES,
  joinSpeech,
  ToolGuard,
  totalFailures,
} from './capture.js';
import { recordCapture } from './captures.js';
import { emptyStream, textStream, toolCallStream } from './chunks.js';
import {
  chooseQuestion,
  confirmQuestion,
  type ReadBackReason,
  type ReadBackState,
  readBackReply,
  watchReply,
} from './confirm.js';
import { guardedModelReply } from './model-reply.js';
import { refusal } from './parsers/refusal.js';
import type { ParseResult } from './parsers/result.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from './policy.js';
import { askingExpectation, type Reader, readBackExpectation } from './task-expectation.js';
import {
  defaultReadBack,
  ESCALATE_TOOL,
  isTaskTool,
  repromptLine,
  stripToolErrorPrefix,
  submitParameters,
  TASK_TOOLS,
  type TaskCounters,
  type TaskSpec,
  taskInstructions,
  taskTools,
} from './typed-task-spec.js';

export type { KeypadEntry, ParseContext, TaskCounters, TaskSpec } from './typed-task-spec.js';
export { ESCALATE_TOOL, TASK_TOOLS } from './typed-task-spec.js';

/** Asking the question, waiting on a read-back, or asking which of the caller's alternatives. */
type Phase = 'asking' | 'confirming' | 'choosing';
type Stream = ReadableStream<llm.ChatChunk | string | FlushSentinel>;
/**
 * What to do with an answer: say this, say nothing (the task ended), ask the model, or take a
 * value a parser read (submitted through the submit tool in a caller turn, as a model would).
 */
type Next<T> = string | undefined | typeof ASK_MODEL | Offer<T>;
interface Offer<T> {
  offer: T;
  approximate: boolean;
}
const ASK_MODEL = Symbol('ask the model');
const KEYPAD_ONLY = 'Please use the keypad on your phone.';

/**
 * taskline's capture engine: an upstream AgentTask that captures one typed value and always
 * resolves an {@link Outcome}. Spoken, typed and keyed answers go through one path — the
 * task's parser first, the model (a submit tool shaped by the schema) only for speech the
 * parser cannot read — and retries, read-backs, the keypad (the first key interrupts the
 * prompt), no-input timers, the watchdog, the hang-up and the escalation (`onExhausted`,
 * always inside a tool call) are handled here, so callers only branch on `outcome.status`.
 * Typed tasks, `collectDigits` and `menu` are all this class with a different spec.
 */
export class TypedTask<T> extends CaptureTask<T> {
  readonly spec: TaskSpec<T>;
  private readonly retry: RetryPolicy<T>;
  private readonly watchdog: Watchdog;
  private readonly wrapsValue: boolean;
  private readonly counts = { noInput: 0, noMatch: 0, invalid: 0, rejected: 0 };
  private turns = 0;
  /** A failure was already counted for the caller's current answer. */
  private failedThisTurn = false;
  /** Times the model reported the current answer unclear. */
  private unclearThisTurn = 0;
  /** How the caller gave the answer now being handled. */
  private modality: InputModality = 'text';
  private phase: Phase = 'asking';
  private pending: { value: T; modality: InputModality; reason: ReadBackReason } | undefined;
  /** Alternatives the caller offered ("seven or eight"), while asking which. */
  private candidates: readonly T[] = [];
  private spelled = false;
  /** The next submission is an estimate: read it back even when the policy says never. */
  private approximateNext = false;
  private finished = false;
  private readonly seen = new Set<string>();
  /** Submit calls the task made itself for values its parser read. */
  private readonly localCalls = new Set<string>();
  private input: CallerInput | undefined;
  private watchdogTimer: TimerHandle | undefined;
  private releaseExpectation: (() => void) | undefined;
  private readonly cleanups: Array<() => void> = [];
  private escalation: FailedOutcome | undefined;
  private escalationCalls = 0;

  constructor(spec: TaskSpec<T>) {
    const retry = resolveRetry(spec.retry);
    const watchdog = resolveWatchdog(spec.watchdog);
    const wrapsValue = !(spec.schema instanceof z.ZodObject);
    const parameters = submitParameters(spec.schema, wrapsValue);
    const guard = new ToolGuard();
    super(
      {
        id: spec.name,
        instructions: taskInstructions(spec),
        llm: spec.llm,
        chatCtx: spec.chatCtx,
        tools: [
          ...guard.wrap(
            taskTools(spec, parameters, {
              submit: (args) => this.onSubmit(args),
              declined: (reason) =>
                this.finish({ status: 'declined', attempts: this.failures() + 1, reason }),
              unclear: (reason) => this.onUnclear(reason),
              confirm: (correct) => this.onConfirm(correct),
            }),
          ),
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
    this.spec = spec;
    this.retry = retry;
    this.watchdog = watchdog;
    this.wrapsValue = wrapsValue;
  }

  /** A snapshot of the task's counters (no-input, no-match, invalid, rejected, turns). */
  get counters(): Readonly<TaskCounters> {
    return { ...this.counts, turns: this.turns };
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
      call.on('dtmf', ({ digit }) => this.onKey(digit)),
    );
    if (this.spec.mask) this.cleanups.push(call.expectSecret());
    this.watchdogTimer = call.clock.setTimer(this.watchdog.maxDurationMs, () =>
      this.finish({
        status: 'timeout',
        attempts: this.failures(),
        reason: `no answer within ${this.watchdog.maxDurationMs} ms`,
      }),
    );
    this.input = new CallerInput(call, this.retry.noInputTimeoutMs, this.spec.keypad, {
      entry: (keys) => void this.onEntry(keys),
      silence: () => this.onNoInput(),
      listening: () => !this.finished && !this.done,
    });
    const onSpeech = (ev: voice.SpeechCreatedEvent) => this.trackSpeech(ev.speechHandle);
    session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    this.cleanups.push(() => session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech));
    this.publish();
    if (this.spec.prompt) session.say(this.spec.prompt);
    else session.generateReply();
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    if (this.escalation) return this.escalationCall();
    if (this.finished) return emptyStream();
    let caller: llm.ChatMessage | undefined;
    let lastOutput: llm.FunctionCallOutput | undefined;
    let failedAgain = false;
    for (const item of chatCtx.items) {
      if (this.seen.has(item.id)) continue;
      this.seen.add(item.id);
      if (item.type === 'message' && item.role === 'user') {
        caller = item;
        this.failedThisTurn = false;
        this.unclearThisTurn = 0;
      }
      if (item.type === 'function_call_output' && isTaskTool(item.name)) {
        lastOutput = item;
        if (item.name === TASK_TOOLS.submit && item.isError) {
          failedAgain = !this.countFailure('invalid');
        }
      }
    }
    if (this.checkCaps()) return emptyStream();
    if (caller) return this.onCallerTurn(caller, chatCtx, toolCtx, modelSettings);

    // The model failed this answer again on its own tool reply (or the task words its own
    // re-prompts): re-prompt without asking it again. One answer costs one attempt and at
    // most two model calls.
    if (lastOutput && this.localCalls.has(lastOutput.callId)) {
      // The task's own submission: answer its result without a model.
      if (this.confirming) return textStream(this.confirmQuestion());
      if (lastOutput.isError) {
        return textStream(this.reprompt('invalid', stripToolErrorPrefix(lastOutput.output)));
      }
      return emptyStream();
    }
    const byTask = this.spec.repromptBy === 'task';
    if (lastOutput?.name === TASK_TOOLS.unclear && (byTask || this.unclearThisTurn > 1)) {
      return textStream(this.reprompt('noMatch'));
    }
    if (lastOutput?.name === TASK_TOOLS.submit && lastOutput.isError && (byTask || failedAgain)) {
      return textStream(this.reprompt('invalid', stripToolErrorPrefix(lastOutput.output)));
    }
    if (lastOutput?.name === TASK_TOOLS.submit && !lastOutput.isError && this.confirming) {
      return textStream(this.confirmQuestion());
    }
    return this.model(chatCtx, toolCtx, modelSettings);
  }

  private async onCallerTurn(
    message: llm.ChatMessage,
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    this.input?.turn();
    const modality = this.call?.modalityOf(message) ?? 'text';
    const text = message.textContent ?? '';
    if (this.spec.mask) this.scrub(message, text);
    if (!this.countTurn(modality)) return emptyStream();
    const next =
      this.spec.allowSpeech === false
        ? this.fail('noMatch', KEYPAD_ONLY)
        : await this.answer(text, modality);
    if (next === ASK_MODEL) return this.model(chatCtx, toolCtx, modelSettings);
    if (isOffer(next)) {
      // A secret is never written into the conversation as tool arguments: taken directly.
      if (this.spec.mask) return this.say(await this.offer(next.offer, next.approximate));
      return this.submitCall(next.offer, next.approximate);
    }
    return this.say(next);
  }

  /** A model-free reply: `text`, or nothing. */
  private say(text: string | undefined): Stream {
    return text ? textStream(text) : emptyStream();
  }

  /** Submits a value the parser read through the submit tool, so the chat records it. */
  private submitCall(value: T, approximate: boolean): Stream {
    this.approximateNext = approximate;
    const callId = `taskline_${this.spec.name}_${this.localCalls.size + 1}`;
    this.localCalls.add(callId);
    const args = this.spec.submit
      ? this.spec.submit.args(value)
      : this.wrapsValue
        ? { value }
        : (value as Record<string, unknown>);
    return toolCallStream(callId, TASK_TOOLS.submit, args);
  }

  /** A whole keypad entry: answered like speech, by the parser (never the model). */
  private async onEntry(keys: string): Promise<void> {
    if (this.finished) return;
    if (keys === '') {
      this.onNoInput();
      return;
    }
    if (this.spec.mask) registerSecret(keys);
    this.addCallerLine(`(keypad) ${this.spec.mask ? maskValue(keys) : keys}`);
    if (!this.countTurn('dtmf')) return;
    this.failedThisTurn = false;
    let next = await this.answer(keys, 'dtmf');
    if (isOffer(next)) next = await this.offer(next.offer, next.approximate);
    if (typeof next === 'string' && next) this.speak(next);
    else this.input?.listen();
  }

  /** Counts a caller turn; false when the turn cap ended the task. */
  private countTurn(modality: InputModality): boolean {
    this.modality = modality;
    this.turns += 1;
    if (this.turns <= this.watchdog.maxTurns) return true;
    this.finish({
      status: 'timeout',
      attempts: this.failures(),
      reason: `no answer within ${this.watchdog.maxTurns} caller turns`,
    });
    return false;
  }

  /** What an answer (spoken, typed or keyed) means, and what to say next. */
  private async answer(text: string, modality: InputModality): Promise<Next<T>> {
    const repeat = this.spec.repeat;
    if (modality === 'dtmf' ? text === repeat?.key : repeat?.phrases?.test(text)) {
      return this.spec.prompt ?? '';
    }
    if (this.phase !== 'asking') return this.onReadBackReply(text, modality);
    const declined =
      this.spec.detectRefusal === false || modality === 'dtmf' ? undefined : refusal(text);
    if (declined === 'explicit') return this.decline(text);
    const parsed = this.read(text, modality);
    if (parsed === undefined) {
      return declined === 'soft' ? this.decline(text) : this.unread(modality);
    }
    if (parsed.kind === 'match') {
      countModelCallAvoided(this);
      return { offer: parsed.value, approximate: parsed.approximate === true };
    }
    if (parsed.kind === 'declined') return this.decline(text, parsed.reason);
    if (declined === 'soft') return this.decline(text);
    const offered = parsed.kind === 'nomatch' ? this.validCandidates(parsed.candidates) : [];
    if (offered.length === 1) return { offer: offered[0]!, approximate: true };
    if (offered.length > 1) {
      countModelCallAvoided(this);
      this.setPhase('choosing', undefined, offered);
      return this.chooseQuestion();
    }
    if (parsed.kind === 'invalid') return this.fail('invalid', this.masked(parsed.reason));
    return this.unread(modality);
  }

  /** An answer no parser read: the model's turn for speech, a no-match otherwise. */
  private unread(modality: InputModality): Next<T> {
    if (this.spec.modelFallback === false || modality === 'dtmf') return this.fail('noMatch');
    return ASK_MODEL;
  }

  /** The task's parser for an answer given this way (undefined without one). */
  private read(text: string, modality: InputModality): ParseResult<T> | undefined {
    return this.spec.parse?.(text, { now: this.call?.clock.now() ?? Date.now(), modality });
  }

  /** A reply while a read-back or a "which one?" is pending (see ./confirm.ts). */
  private async onReadBackReply(text: string, modality: InputModality): Promise<Next<T>> {
    const state = this.readBackState();
    const reply = state
      ? readBackReply(text, state, {
          parse: this.spec.parse && ((t) => this.read(t, modality)!),
          correct: this.spec.correct,
        })
      : ({ kind: 'unclear' } as const);
    switch (reply.kind) {
      case 'yes':
        countModelCallAvoided(this);
        this.onConfirm(true);
        return undefined;
      case 'no':
        countModelCallAvoided(this);
        this.onConfirm(false);
        return this.finished ? undefined : this.reaskAfterRejection();
      case 'replace':
      case 'pick':
        countModelCallAvoided(this);
        if (reply.kind === 'replace' && reply.rejected) this.reject();
        this.clearReadBack();
        return {
          offer: reply.value,
          approximate: reply.kind === 'replace' && reply.approximate === true,
        };
      case 'retry':
        this.reject();
        this.clearReadBack();
        if (this.checkCaps()) return undefined;
        return joinSpeech(reply.reason ?? 'Sorry about that.', this.reprompt('invalid'));
      case 'rejectUnclear':
      case 'unclear':
        if (this.spec.modelFallback !== false && this.confirming && modality !== 'dtmf') {
          return ASK_MODEL;
        }
        if (reply.kind === 'rejectUnclear') {
          this.reject();
          this.clearReadBack();
          return this.checkCaps() ? undefined : this.reaskAfterRejection();
        }
        this.counts.noMatch += 1;
        if (this.checkCaps()) return undefined;
        return this.phase === 'choosing' ? this.chooseQuestion() : this.confirmQuestion();
    }
  }

  /**
   * A value the caller gave (read by a parser, picked, or corrected): accepted, read back
   * first, or refused with the reason. Returns what to say next.
   */
  private async offer(value: T, approximate: boolean): Promise<string | undefined> {
    const checked = await this.check(value);
    if (checked.kind !== 'match') return this.fail('invalid', checked.reason);
    return this.take(checked.value, approximate);
  }

  /** The value normalised and validated, or the reason it cannot be taken. */
  private async check(
    value: T,
  ): Promise<{ kind: 'match'; value: T } | { kind: 'invalid'; reason: string }> {
    let checked = value;
    const normal = this.spec.normalize?.(checked);
    if (normal && normal.kind !== 'match') {
      const reason =
        normal.kind === 'invalid' ? normal.reason : `That is not a valid ${this.spec.name}.`;
      return { kind: 'invalid', reason: this.masked(reason) };
    }
    if (normal) checked = normal.value;
    const problem = await this.spec.validate?.(checked);
    if (problem) return { kind: 'invalid', reason: this.masked(problem) };
    return { kind: 'match', value: checked };
  }

  /** Takes a checked value now, or reads it back first; returns the read-back question. */
  private take(value: T, approximate: boolean): string | undefined {
    const policy = this.spec.confirm ?? 'never';
    if (approximate || policy === 'always' || (policy === 'audio' && this.modality === 'speech')) {
      this.setPhase('confirming', {
        value,
        modality: this.modality,
        reason: approximate ? 'approximate' : 'policy',
      });
      return this.confirmQuestion();
    }
    this.finish({ status: 'ok', value, attempts: this.failures() + 1, modality: this.modality });
    return undefined;
  }

  private decline(text: string, reason?: string): undefined {
    this.finish({
      status: 'declined',
      attempts: this.failures() + 1,
      reason: reason ?? `caller declined: "${text.trim()}"`,
    });
    return undefined;
  }

  /** The submit tool (the model's, or the task's own for a parsed value): take the value or say why not. */
  private async onSubmit(args: Record<string, unknown>): Promise<string | undefined> {
    if (this.finished) return undefined;
    const approximate = this.approximateNext;
    this.approximateNext = false;
    const raw: ParseResult<T> = this.spec.submit
      ? this.spec.submit.read(args)
      : { kind: 'match', value: (this.wrapsValue ? args.value : args) as T };
    if (raw.kind !== 'match') {
      throw new llm.ToolError(
        raw.kind === 'invalid' ? raw.reason : `That is not a valid ${this.spec.name}.`,
      );
    }
    const checked = await this.check(raw.value);
    if (checked.kind !== 'match') throw new llm.ToolError(checked.reason);
    if (this.take(checked.value, approximate) === undefined) return undefined;
    return `Read the answer back and ask the caller to confirm: ${this.readBack(checked.value)}`;
  }

  private onConfirm(correct: boolean): string | undefined {
    if (!this.confirming || !this.pending) {
      throw new llm.ToolError('Nothing to confirm yet: call submit with the answer first.');
    }
    const { value, modality } = this.pending;
    if (correct) {
      this.finish({
        status: 'ok',
        value,
        attempts: this.failures() + 1,
        confirmed: true,
        modality,
      });
      return undefined;
    }
    this.reject();
    this.clearReadBack();
    if (this.checkCaps()) return undefined;
    return 'The caller said that is wrong. Ask for the answer again.';
  }

  private onUnclear(reason: string): string | undefined {
    this.unclearThisTurn += 1;
    this.countFailure('noMatch');
    if (this.checkCaps()) return undefined;
    return `Not understood (${reason}). Ask again, more simply.`;
  }

  /** Counts one failed answer of a kind and says what to say next (undefined at a cap). */
  private fail(kind: 'noMatch' | 'invalid', reason?: string): string | undefined {
    this.counts[kind] += 1;
    this.failedThisTurn = true;
    return this.checkCaps() ? undefined : this.reprompt(kind, reason);
  }

  /**
   * Counts a failed answer found on the model's path, at most once per caller answer (a model
   * that reports "unclear" again on the tool reply does not use up more attempts). Returns
   * false when this answer had already failed.
   */
  private countFailure(kind: 'noMatch' | 'invalid'): boolean {
    if (this.failedThisTurn) return false;
    this.failedThisTurn = true;
    this.counts[kind] += 1;
    return true;
  }

  /** Ends the task when a cap is reached; true if it did. */
  private checkCaps(): boolean {
    if (this.finished) return true;
    const reached = capReached(this.counts, this.retry);
    if (reached) this.finish(reached);
    return reached !== undefined;
  }

  protected override failures(): number {
    return totalFailures(this.counts);
  }

  protected override markFinished(): void {
    this.finished = true;
  }

  /**
   * Ends the task with `outcome`: an accepted value is recorded in the call's capture log; a
   * reached cap runs `retry.onExhausted` first, inside a tool call of its own (where upstream
   * lets an inline AgentTask, such as a warm transfer, run) whatever reached the cap.
   */
  private finish(outcome: Outcome<T>): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    logLine(
      this.spec.logComponent ?? 'taskline.tasks',
      'info',
      `${this.spec.name} ended: ${outcome.status}`,
      {
        task: this.spec.name,
        status: outcome.status,
        attempts: outcome.attempts,
        reason: outcome.status === 'ok' ? undefined : outcome.reason,
        modality: outcome.status === 'ok' ? outcome.modality : undefined,
        callId: this.call?.callId,
      },
    );
    if (outcome.status === 'ok' && this.agentSession) {
      const display = this.spec.display?.(outcome.value) ?? this.readBack(outcome.value, false);
      recordCapture(this.agentSession, this.spec.name, display, { masked: this.spec.mask });
    }
    if (
      outcome.status !== 'ok' &&
      EXHAUSTED_STATUSES.has(outcome.status) &&
      this.retry.onExhausted !== 'return'
    ) {
      this.escalation = outcome;
      try {
        this.session.generateReply();
      } catch {
        void this.runEscalation();
      }
      return;
    }
    this.settle(outcome);
  }

  /** The synthetic tool call that runs the escalation (see {@link finish}). */
  private escalationCall(): Stream {
    this.escalationCalls += 1;
    if (this.escalationCalls > 1) return emptyStream();
    return toolCallStream(`${ESCALATE_TOOL}_${this.spec.name}`, ESCALATE_TOOL, {});
  }

  private async runEscalation(): Promise<undefined> {
    const outcome = this.escalation;
    const onExhausted = this.retry.onExhausted;
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

  protected override cleanup(): void {
    this.input?.stop();
    this.watchdogTimer?.cancel();
    this.watchdogTimer = undefined;
    this.releaseExpectation?.();
    this.releaseExpectation = undefined;
    for (const off of this.cleanups.splice(0)) off();
  }

  private onKey(digit: string): void {
    if (this.finished || this.agentSession?.currentAgent !== this) return;
    this.input?.key(digit);
  }

  private trackSpeech(handle: voice.SpeechHandle): void {
    // `done` too: a task completed from outside (a flow's go_back, TaskGroup's out_of_scope)
    // has no activity left to ask about.
    if (this.finished || this.done || this.agentSession?.currentAgent !== this) return;
    this.input?.speaking(handle);
  }

  private onNoInput(): void {
    if (this.finished) return;
    this.counts.noInput += 1;
    if (this.checkCaps()) return;
    this.speak(this.confirming ? this.confirmQuestion() : this.reprompt('noInput'));
  }

  /** Says `text` with `session.say` (no model). */
  private speak(text: string): void {
    if (!this.finished && text) this.session.say(text);
  }

  /** Adds a caller line to the task's chat context (merged into the parent's when it ends). */
  private addCallerLine(text: string): void {
    const ctx = this.chatCtx.copy();
    this.seen.add(ctx.addMessage({ role: 'user', content: text }).id);
    // The copy is assigned synchronously; only a realtime model update is awaited.
    this.updateChatCtx(ctx).catch(() => undefined);
  }

  /** Replaces a secret spoken answer everywhere the session keeps it by its masked form. */
  private scrub(message: llm.ChatMessage, text: string): void {
    const parsed = this.read(text, 'speech');
    const value = parsed?.kind === 'match' ? parsed.value : undefined;
    const secret = typeof value === 'string' || typeof value === 'number' ? String(value) : text;
    if (parsed?.kind === 'match') registerSecret(secret);
    const masked = [`(spoken) ${maskValue(secret)}`];
    message.content = masked;
    for (const ctx of [this.session.history, this.chatCtx]) {
      const item = ctx.items.find((i) => i.id === message.id);
      if (item && item.type === 'message') item.content = masked;
    }
  }

  /** A reason said to the caller, with any secret in it masked. */
  private masked(reason: string): string {
    return this.spec.mask ? maskPII(reason) : reason;
  }

  private async model(
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
    const guarded = guardedModelReply(this, chatCtx, visible, modelSettings, clock, () => {
      this.countFailure('noMatch');
      return this.checkCaps() ? undefined : this.reprompt('noMatch');
    });
    const stream =
      guarded ?? (await super.llmNode(chatCtx, visible, modelSettings)) ?? emptyStream();
    if (this.phase === 'asking') return stream;
    // The model asked something of its own while a read-back was pending (e.g. the question
    // again): that value may no longer be confirmed by the caller's next answer.
    return watchReply(stream, Object.values(TASK_TOOLS), () => {
      if (!this.finished) this.clearReadBack();
    });
  }

  /** Offered alternatives that the schema accepts. */
  private validCandidates(candidates: readonly unknown[] | undefined): T[] {
    return (candidates ?? []).flatMap((c) => {
      const checked = this.spec.schema.safeParse(c);
      return checked.success ? [checked.data] : [];
    });
  }

  private get confirming(): boolean {
    return this.phase === 'confirming';
  }

  /** The caller said the read-back value is wrong. */
  private reject(): void {
    if (this.confirming) this.counts.rejected += 1;
    this.spelled = true;
  }

  /** Nothing is pending any more: the next answer is a fresh one. */
  private clearReadBack(): void {
    this.setPhase('asking');
  }

  private setPhase(
    phase: Phase,
    pending?: { value: T; modality: InputModality; reason: ReadBackReason },
    candidates: readonly T[] = [],
  ): void {
    this.phase = phase;
    this.pending = pending;
    this.candidates = candidates;
    this.publish();
  }

  private readBackState(): ReadBackState<T> | undefined {
    if (this.phase === 'choosing') return { kind: 'choose', candidates: this.candidates };
    if (this.pending)
      return { kind: 'confirm', value: this.pending.value, reason: this.pending.reason };
    return undefined;
  }

  /** Publishes what the task listens for now (replacing what it published before). */
  private publish(): void {
    const call = this.call;
    if (!call || this.finished) return;
    const read: Reader<T> | undefined = this.spec.parse && ((t) => this.read(t, 'speech')!);
    const state = this.readBackState();
    const expectation = state
      ? readBackExpectation(
          this.spec,
          state,
          read,
          this.candidates.map((c) => this.readBack(c)),
        )
      : askingExpectation(this.spec, read);
    const release = this.releaseExpectation;
    this.releaseExpectation = call.expect(expectation);
    release?.();
  }

  private reprompt(kind: 'noInput' | 'noMatch' | 'invalid', reason?: string): string {
    const n = this.counts[kind];
    traceReprompt(this, kind, n);
    const again = this.spec.reprompt ?? this.spec.prompt ?? '';
    return repromptLine(kind, n, this.retry, again, reason);
  }

  private readBack(value: T, spelled = this.spelled): string {
    return this.spec.readBack
      ? this.spec.readBack(value, spelled)
      : defaultReadBack(value, spelled);
  }

  private confirmQuestion(): string {
    if (!this.pending) return this.reprompt('noMatch');
    return confirmQuestion(this.readBack(this.pending.value), this.pending.reason);
  }

  private chooseQuestion(): string {
    return chooseQuestion(this.candidates.map((c) => this.readBack(c)));
  }

  private reaskAfterRejection(): string {
    return joinSpeech('Sorry about that.', this.spec.prompt ?? 'Please say it again.');
  }
}

function isOffer<T>(next: Next<T>): next is Offer<T> {
  return typeof next === 'object' && next !== null && 'offer' in next;
}

/** True when an utterance is a refusal to answer ("I'd rather not say", "not interested"). */
export function isRefusal(text: string): boolean {
  return refusal(text) !== undefined;
}
