// Over 500 lines on purpose: one upstream AgentTask whose overrides (llmNode, its tools, the
// read-back phases) share one state machine, which reads best in one place. What has a job of
// its own lives beside it: ./typed-task-spec.ts (the spec, tools, counters, default wording),
// ./caller-input.ts (keypad entry, no-input timer), ./confirm.ts (what replies to a read-back
// mean), ./parsers (how answers are read) and ./capture.ts (the run()/unwind shell).
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, voice } from '@livekit/agents';
import { z } from 'zod/v4';
import { callOf, type InputModality } from '../core/call.js';
import { systemClock, type TimerHandle } from '../core/clock.js';
import { countModelCallAvoided, traceReprompt } from '../observability/tasks.js';
import type { FailedOutcome, Outcome } from '../outcome.js';
import { KeypadCollector, NoInputTimer } from './caller-input.js';
import {
  CaptureTask,
  capReached,
  EXHAUSTED_STATUSES,
  joinSpeech,
  ToolGuard,
  totalFailures,
} from './capture.js';
import { emptyStream, textStream, toolCallStream } from './chunks.js';
import {
  chooseQuestion,
  confirmQuestion,
  type ReadBackReason,
  type ReadBackReply,
  readBackReply,
  watchReply,
} from './confirm.js';
import { guardedModelReply } from './model-reply.js';
import {
  defaultReadBack,
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
export { TASK_TOOLS } from './typed-task-spec.js';

import { refusal } from './parsers/refusal.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from './policy.js';

/** Asking the question, waiting on a read-back, or asking which of the caller's alternatives. */
type Phase = 'asking' | 'confirming' | 'choosing';

/**
 * An upstream AgentTask that captures one typed value and always resolves an
 * {@link Outcome}: parsers answer what they can without a model, the model gets a submit
 * tool shaped by the schema, and retries, confirmation, no-input timers, a watchdog and
 * the hang-up are handled here so callers only branch on `outcome.status`.
 */
export class TypedTask<T> extends CaptureTask<T> {
  readonly spec: TaskSpec<T>;
  private readonly retry: RetryPolicy<T>;
  private readonly watchdog: Watchdog;
  private readonly wrapsValue: boolean;
  private readonly counts = { noInput: 0, noMatch: 0, invalid: 0, rejected: 0 };
  private turns = 0;
  /** A failure was already counted for the caller's current utterance. */
  private failedThisTurn = false;
  /** Times the model reported the current utterance unclear. */
  private unclearThisTurn = 0;
  private phase: Phase = 'asking';
  private pending: { value: T; modality: InputModality; reason: ReadBackReason } | undefined;
  /** Alternatives the caller offered ("seven or eight"), while asking which. */
  private candidates: readonly T[] = [];
  /** The next submission is an estimate: read it back even when the policy says never. */
  private approximateNext = false;
  private spelled = false;
  private finished = false;
  private readonly seen = new Set<string>();
  private readonly localCalls = new Set<string>();
  private localCallCounter = 0;
  private noInput: NoInputTimer | undefined;
  private keypad: KeypadCollector | undefined;
  private watchdogTimer: TimerHandle | undefined;
  private readonly cleanups: Array<() => void> = [];

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
        tools: guard.wrap(
          taskTools(spec, parameters, {
            submit: (args) => this.onSubmit(args),
            declined: (reason) =>
              this.finish({ status: 'declined', attempts: this.failures() + 1, reason }),
            unclear: (reason) => this.onUnclear(reason),
            confirm: (correct) => this.onConfirm(correct),
          }),
        ),
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
    for (const item of this.chatCtx.items) this.seen.add(item.id);
    this.cleanups.push(
      call.on('hangup', (ev) =>
        this.finish({ status: 'hangup', attempts: this.failures(), reason: ev.reason }),
      ),
    );
    this.watchdogTimer = call.clock.setTimer(this.watchdog.maxDurationMs, () =>
      this.finish({
        status: 'timeout',
        attempts: this.failures(),
        reason: `no answer within ${this.watchdog.maxDurationMs} ms`,
      }),
    );
    if (this.spec.keypad) {
      // The keys go down the model path as the caller's answer (the parser resolves them).
      const keypad = new KeypadCollector(this.spec.keypad, call.clock, (keys) => {
        if (this.finished) return;
        call.noteInput('dtmf');
        this.session.generateReply({ userInput: keys });
      });
      this.keypad = keypad;
      this.cleanups.push(call.on('dtmf', ({ digit }) => this.onKey(digit, keypad)));
    }
    this.noInput = new NoInputTimer(call.clock, this.retry.noInputTimeoutMs, () =>
      this.onNoInput(),
    );
    const onSpeech = (ev: voice.SpeechCreatedEvent) => this.trackSpeech(ev.speechHandle);
    session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    this.cleanups.push(() => session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech));
    if (this.spec.prompt) session.say(this.spec.prompt);
    else session.generateReply();
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>> {
    if (this.finished) return emptyStream();
    let newUser: string | undefined;
    let lastOutput: llm.FunctionCallOutput | undefined;
    let failedAgain = false;
    for (const item of chatCtx.items) {
      if (this.seen.has(item.id)) continue;
      this.seen.add(item.id);
      if (item.type === 'message' && item.role === 'user') {
        newUser = item.textContent ?? '';
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

    if (newUser !== undefined) return this.onCallerTurn(newUser, chatCtx, toolCtx, modelSettings);

    // The model failed this utterance again on its own tool reply: re-prompt without asking
    // it a third time. One utterance costs one attempt and at most two model calls.
    if (lastOutput?.name === TASK_TOOLS.unclear && this.unclearThisTurn > 1) {
      return textStream(this.reprompt('noMatch'));
    }
    if (lastOutput && failedAgain) {
      return textStream(
        joinSpeech(stripToolErrorPrefix(lastOutput.output), this.reprompt('invalid')),
      );
    }

    if (lastOutput && this.localCalls.has(lastOutput.callId)) {
      // Our own parser produced the call: answer its result without a model.
      if (this.phase === 'confirming') return textStream(this.confirmQuestion());
      if (lastOutput.isError) {
        return textStream(
          joinSpeech(stripToolErrorPrefix(lastOutput.output), this.reprompt('invalid')),
        );
      }
      if (lastOutput.name === TASK_TOOLS.confirm) return textStream(this.reaskAfterRejection());
    }
    if (
      lastOutput?.name === TASK_TOOLS.submit &&
      !lastOutput.isError &&
      this.phase === 'confirming'
    ) {
      return textStream(this.confirmQuestion());
    }
    return this.model(chatCtx, toolCtx, modelSettings);
  }

  private async onCallerTurn(
    text: string,
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>> {
    this.cancelNoInput();
    this.turns += 1;
    if (this.turns > this.watchdog.maxTurns) {
      this.finish({
        status: 'timeout',
        attempts: this.failures(),
        reason: `no answer within ${this.watchdog.maxTurns} caller turns`,
      });
      return emptyStream();
    }
    const modality = this.call?.lastInputModality ?? 'text';
    if (this.phase !== 'asking') {
      return this.onReadBackReply(text, modality, chatCtx, toolCtx, modelSettings);
    }
    const declined = this.spec.detectRefusal === false ? undefined : refusal(text);
    if (declined === 'explicit') return this.decline(text);
    if (this.spec.parse) {
      const parsed = this.spec.parse(text, { now: this.call?.clock.now() ?? Date.now(), modality });
      if (parsed.kind === 'match') {
        this.approximateNext = parsed.approximate === true;
        return this.localCall(TASK_TOOLS.submit, this.toolArgs(parsed.value));
      }
      if (declined === 'soft') return this.decline(text);
      const offered = parsed.kind === 'nomatch' ? this.validCandidates(parsed.candidates) : [];
      if (offered.length === 1) {
        this.approximateNext = true;
        return this.localCall(TASK_TOOLS.submit, this.toolArgs(offered[0]!));
      }
      if (offered.length > 1) {
        this.phase = 'choosing';
        this.candidates = offered;
        return textStream(this.chooseQuestion());
      }
      if (parsed.kind === 'invalid') {
        this.counts.invalid += 1;
        return this.checkCaps()
          ? emptyStream()
          : textStream(joinSpeech(parsed.reason, this.reprompt('invalid')));
      }
      if (this.spec.modelFallback === false) {
        this.counts.noMatch += 1;
        return this.checkCaps() ? emptyStream() : textStream(this.reprompt('noMatch'));
      }
    } else if (declined === 'soft') {
      return this.decline(text);
    }
    return this.model(chatCtx, toolCtx, modelSettings);
  }

  /** A reply while a read-back or a "which one?" is pending (see ./confirm.ts). */
  private onReadBackReply(
    text: string,
    modality: InputModality,
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ):
    | Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>>
    | ReadableStream<llm.ChatChunk | string | FlushSentinel> {
    const ctx = { now: this.call?.clock.now() ?? Date.now(), modality };
    const parse = this.spec.parse;
    const correct = this.spec.correct;
    const state =
      this.phase === 'choosing'
        ? { kind: 'choose' as const, candidates: this.candidates }
        : this.pending
          ? { kind: 'confirm' as const, value: this.pending.value, reason: this.pending.reason }
          : undefined;
    const reply: ReadBackReply<T> = state
      ? readBackReply(text, state, {
          parse: parse && ((t) => parse(t, ctx)),
          correct,
        })
      : { kind: 'unclear' };
    switch (reply.kind) {
      case 'yes':
        return this.localCall(TASK_TOOLS.confirm, { correct: true });
      case 'no':
        return this.localCall(TASK_TOOLS.confirm, { correct: false });
      case 'replace':
      case 'pick': {
        if (reply.kind === 'replace' && reply.rejected) this.reject();
        this.clearReadBack();
        this.approximateNext = reply.kind === 'replace' && reply.approximate === true;
        return this.localCall(TASK_TOOLS.submit, this.toolArgs(reply.value));
      }
      case 'retry':
        this.reject();
        this.clearReadBack();
        if (this.checkCaps()) return emptyStream();
        return textStream(
          joinSpeech(reply.reason ?? 'Sorry about that.', this.reprompt('invalid')),
        );
      case 'rejectUnclear':
      case 'unclear':
        if (this.spec.modelFallback !== false && this.phase === 'confirming') {
          return this.model(chatCtx, toolCtx, modelSettings);
        }
        if (reply.kind === 'rejectUnclear') {
          this.reject();
          this.clearReadBack();
          return this.checkCaps() ? emptyStream() : textStream(this.reaskAfterRejection());
        }
        this.counts.noMatch += 1;
        if (this.checkCaps()) return emptyStream();
        return textStream(
          this.phase === 'choosing' ? this.chooseQuestion() : this.confirmQuestion(),
        );
    }
  }

  private decline(text: string): ReadableStream<llm.ChatChunk | string | FlushSentinel> {
    this.finish({
      status: 'declined',
      attempts: this.failures() + 1,
      reason: `caller declined: "${text.trim()}"`,
    });
    return emptyStream();
  }

  /** The submit tool's arguments for a value. */
  private toolArgs(value: T): Record<string, unknown> {
    return this.wrapsValue ? { value } : (value as Record<string, unknown>);
  }

  /** Offered alternatives that the schema accepts. */
  private validCandidates(candidates: readonly unknown[] | undefined): T[] {
    return (candidates ?? []).flatMap((c) => {
      const checked = this.spec.schema.safeParse(c);
      return checked.success ? [checked.data] : [];
    });
  }

  /** The caller said the read-back value is wrong. */
  private reject(): void {
    if (this.phase === 'confirming') this.counts.rejected += 1;
    this.spelled = true;
  }

  /** Nothing is pending any more: the next answer is a fresh one. */
  private clearReadBack(): void {
    this.phase = 'asking';
    this.pending = undefined;
    this.candidates = [];
  }

  private async onSubmit(args: Record<string, unknown>): Promise<string | undefined> {
    if (this.finished) return undefined;
    let value = (this.wrapsValue ? args.value : args) as T;
    if (this.spec.normalize) {
      const normal = this.spec.normalize(value);
      if (normal.kind === 'invalid') throw new llm.ToolError(normal.reason);
      if (normal.kind === 'nomatch')
        throw new llm.ToolError(`That is not a valid ${this.spec.name}.`);
      value = normal.value;
    }
    const problem = await this.spec.validate?.(value);
    if (problem) throw new llm.ToolError(problem);
    const modality = this.call?.lastInputModality ?? 'text';
    const policy = this.spec.confirm ?? 'never';
    const approximate = this.approximateNext;
    this.approximateNext = false;
    if (approximate || policy === 'always' || (policy === 'audio' && modality === 'speech')) {
      this.phase = 'confirming';
      this.candidates = [];
      this.pending = { value, modality, reason: approximate ? 'approximate' : 'policy' };
      return `Read the answer back and ask the caller to confirm: ${this.readBack(value)}`;
    }
    this.finish({ status: 'ok', value, attempts: this.failures() + 1, modality });
    return undefined;
  }

  private onConfirm(correct: boolean): string | undefined {
    if (this.phase !== 'confirming' || !this.pending) {
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

  /**
   * Counts a failed answer found on the model's path, at most once per caller utterance
   * (a model that reports "unclear" again on the tool reply does not use up more attempts).
   * Returns false when this utterance had already failed.
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

  private finish(outcome: Outcome<T>): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    this.conclude(outcome);
  }

  private conclude(outcome: Outcome<T>): void {
    const onExhausted = this.retry.onExhausted;
    if (
      outcome.status !== 'ok' &&
      EXHAUSTED_STATUSES.has(outcome.status) &&
      onExhausted !== 'return'
    ) {
      onExhausted(outcome as FailedOutcome).then(
        (escalated) => this.settle(escalated),
        (error: unknown) =>
          this.settle({
            status: 'cancelled',
            attempts: outcome.attempts,
            reason: `escalation failed: ${error instanceof Error ? error.message : String(error)}`,
          }),
      );
      return;
    }
    this.settle(outcome);
  }

  private settle(outcome: Outcome<T>): void {
    if (!this.done) this.complete(outcome);
  }

  protected override cleanup(): void {
    this.cancelNoInput();
    this.keypad?.cancel();
    this.watchdogTimer?.cancel();
    this.watchdogTimer = undefined;
    for (const off of this.cleanups.splice(0)) off();
  }

  private onKey(digit: string, keypad: KeypadCollector): void {
    if (this.finished || this.agentSession?.currentAgent !== this || !this.call) return;
    this.cancelNoInput();
    keypad.press(digit);
  }

  private trackSpeech(handle: voice.SpeechHandle): void {
    // `done` too: a task completed from outside (a flow's go_back, TaskGroup's out_of_scope)
    // has no activity left to ask about.
    if (this.finished || this.done || this.agentSession?.currentAgent !== this) return;
    this.noInput?.speech(handle, () => !this.finished);
  }

  private cancelNoInput(): void {
    this.noInput?.cancel();
  }

  private onNoInput(): void {
    if (this.finished) return;
    this.counts.noInput += 1;
    if (this.checkCaps()) return;
    const line = this.phase === 'confirming' ? this.confirmQuestion() : this.reprompt('noInput');
    this.session.say(line);
  }

  private localCall(
    name: string,
    args: Record<string, unknown>,
  ): ReadableStream<llm.ChatChunk | string | FlushSentinel> {
    this.localCallCounter += 1;
    countModelCallAvoided(this);
    const callId = `taskline_${this.spec.name}_${this.localCallCounter}`;
    this.localCalls.add(callId);
    return toolCallStream(callId, name, args);
  }

  private async model(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>> {
    // A model call that fails is a failed attempt with a re-prompt, never half an answer.
    const clock = this.call?.clock ?? systemClock;
    const guarded = guardedModelReply(this, chatCtx, toolCtx, modelSettings, clock, () => {
      this.countFailure('noMatch');
      return this.checkCaps() ? undefined : this.reprompt('noMatch');
    });
    const stream =
      guarded ?? (await super.llmNode(chatCtx, toolCtx, modelSettings)) ?? emptyStream();
    if (this.phase === 'asking') return stream;
    // The model asked something of its own while a read-back was pending (e.g. the question
    // again): that value may no longer be confirmed by the caller's next answer.
    return watchReply(stream, Object.values(TASK_TOOLS), () => {
      if (!this.finished) this.clearReadBack();
    });
  }

  private reprompt(kind: 'noInput' | 'noMatch' | 'invalid'): string {
    const n =
      kind === 'noInput'
        ? this.counts.noInput
        : kind === 'noMatch'
          ? this.counts.noMatch
          : this.counts.invalid;
    traceReprompt(this, kind, n);
    return repromptLine(kind, n, this.retry, this.spec.prompt ?? '');
  }

  private readBack(value: T): string {
    return this.spec.readBack
      ? this.spec.readBack(value, this.spelled)
      : defaultReadBack(value, this.spelled);
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

/** True when an utterance is a refusal to answer ("I'd rather not say", "not interested"). */
export function isRefusal(text: string): boolean {
  return refusal(text) !== undefined;
}
