// Over 500 lines on purpose: one upstream AgentTask whose overrides (llmNode, its tools, timers,
// keypad) share one state machine. What replies to a read-back mean lives in ./confirm.ts, how
// answers are read in ./parsers, and the run()/unwind shell in ./capture.ts.
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, voice } from '@livekit/agents';
import { z } from 'zod/v4';
import { callOf, type InputModality } from '../core/call.js';
import { systemClock, type TimerHandle } from '../core/clock.js';
import type { FailedOutcome, Outcome } from '../outcome.js';
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
import { refusal } from './parsers/refusal.js';
import type { ParseResult } from './parsers/result.js';
import {
  type ConfirmPolicy,
  pickReprompt,
  type RetryPolicy,
  resolveRetry,
  resolveWatchdog,
  type Watchdog,
} from './policy.js';

/** Names of the tools every typed task gives its model. */
export const TASK_TOOLS = {
  submit: 'submit',
  declined: 'report_declined',
  unclear: 'report_unclear',
  confirm: 'confirm_answer',
} as const;

// The fixed tools' parameters, built once: a zod schema costs more to build than the rest of
// a task, and every call builds several tasks.
const DECLINED_PARAMETERS = z.object({
  reason: z.string().describe('What the caller said, briefly'),
});
const UNCLEAR_PARAMETERS = z.object({ reason: z.string().describe('What was unclear, briefly') });
const CONFIRM_PARAMETERS = z.object({ correct: z.boolean() });
const wrappedSchemas = new WeakMap<z.ZodType, z.ZodObject>();

/** The submit tool's parameters: the schema itself, or `{ value }` around it (built once). */
function submitParameters(schema: z.ZodType, wraps: boolean): z.ZodObject {
  if (!wraps) return schema as z.ZodObject;
  let wrapped = wrappedSchemas.get(schema);
  if (!wrapped) {
    wrapped = z.object({ value: schema });
    wrappedSchemas.set(schema, wrapped);
  }
  return wrapped;
}

/** What a deterministic parser is told besides the utterance. */
export interface ParseContext {
  /** The call's clock time (resolve "tomorrow" against this, never the wall clock). */
  now: number;
  modality: InputModality;
}

/** Everything a typed task is built from; see {@link defineTask}. */
export interface TaskSpec<T> {
  /** Short id, used as the agent id ("email", "pin"): scripts and reports key on it. */
  name: string;
  /** What the model should know about the capture. */
  instructions: string;
  /** The value's schema; the model's submit tool takes exactly this. */
  schema: z.ZodType<T>;
  /** Spoken verbatim when the task starts (no model call). Without it the model opens. */
  prompt?: string;
  /** Extra rule on a schema-valid value; return the problem in words, or undefined. */
  validate?: (value: T) => string | undefined | Promise<string | undefined>;
  /**
   * Resolves answers without a model where it can (a digit string, "yes"). An approximate
   * match ("about six") is read back before it is taken, whatever `confirm` says; a nomatch
   * with `candidates` ("seven or eight") makes the task ask which.
   */
  parse?: (text: string, ctx: ParseContext) => ParseResult<T>;
  /**
   * Reads a partial correction of a value the caller just heard read back ("no, it's D O E",
   * "the last four are 1 2 3 4") and returns the patched value; nomatch when the words are not
   * a patch, invalid when they are but fit no single part (the caller is asked again).
   */
  correct?: (pending: T, text: string) => ParseResult<T>;
  /**
   * Canonicalises a submitted value (from the model or a parser), e.g. a phone number to
   * E.164; an `invalid` result goes back as the reason, `nomatch` as "not understood".
   */
  normalize?: (value: T) => ParseResult<T>;
  /**
   * Treat a refusal as `declined` without a model call. Default true. An explicit refusal
   * ("I'd rather not say", "no comment") declines at once; a soft one ("I'd rather not", "not
   * interested") only when the parser does not read it as an answer (a yes/no task reads it
   * as no).
   */
  detectRefusal?: boolean;
  /**
   * Also accept the answer on the keypad: keys are collected until `finishOnKey` (default
   * '#'), `maxDigits`, `isComplete(keys)` or `interDigitTimeoutMs` of quiet, then handled
   * exactly like a spoken answer (parsed without a model), with modality 'dtmf'.
   */
  keypad?: KeypadEntry;
  /** Send what `parse` cannot resolve to the model (default true). False: count a no-match. */
  modelFallback?: boolean;
  /** When to read the value back before accepting it. Default 'never'. */
  confirm?: ConfirmPolicy;
  /** Speakable form of a value; `spelled` after the caller rejected a read-back. */
  readBack?: (value: T, spelled: boolean) => string;
  retry?: Partial<RetryPolicy<T>>;
  watchdog?: Partial<Watchdog>;
  /** Extra tools for the task's model. */
  tools?: llm.ToolContextLike;
  /** A model for this task only (the session's otherwise). */
  llm?: llm.LLM;
  /** Chat history the task starts from. */
  chatCtx?: llm.ChatContext;
}

/** How keypad entry ends for a typed task (see {@link TaskSpec.keypad}). */
export interface KeypadEntry {
  /** Most keys one answer takes. */
  maxDigits: number;
  /** Ends the entry early (default '#'; '' for none). */
  finishOnKey?: string;
  /** Quiet after a key that ends the entry (default 3,000 ms on the call's clock). */
  interDigitTimeoutMs?: number;
  /** True when the keys so far are a whole answer (e.g. "7" on a 0-10 scale). */
  isComplete?: (keys: string) => boolean;
}

/** Asking the question, waiting on a read-back, or asking which of the caller's alternatives. */
type Phase = 'asking' | 'confirming' | 'choosing';

/** What a typed task has counted so far; flows and reports read it. */
export interface TaskCounters {
  noInput: number;
  noMatch: number;
  invalid: number;
  /** Read-backs the caller rejected. */
  rejected: number;
  /** Caller turns inside the task. */
  turns: number;
}

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
  private activeSpeech = 0;
  private noInputTimer: TimerHandle | undefined;
  private keys = '';
  private keyTimer: TimerHandle | undefined;
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
        tools: guard.wrap([
          ...(llm.toToolContext(spec.tools)?.tools ?? []),
          llm.tool({
            name: TASK_TOOLS.submit,
            description: `Submit the caller's answer (${spec.name}) once you have it.`,
            parameters,
            execute: async (args: Record<string, unknown>) => this.onSubmit(args),
          }),
          llm.tool({
            name: TASK_TOOLS.declined,
            description: 'The caller refuses to give this answer.',
            parameters: DECLINED_PARAMETERS,
            execute: async ({ reason }) => {
              this.finish({ status: 'declined', attempts: this.failures() + 1, reason });
            },
          }),
          llm.tool({
            name: TASK_TOOLS.unclear,
            description: "The caller's answer could not be understood.",
            parameters: UNCLEAR_PARAMETERS,
            execute: async ({ reason }) => this.onUnclear(reason),
          }),
          llm.tool({
            name: TASK_TOOLS.confirm,
            description: 'After reading the answer back: did the caller say it is correct?',
            parameters: CONFIRM_PARAMETERS,
            execute: async ({ correct }) => this.onConfirm(correct),
          }),
        ]),
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
      const keypad = this.spec.keypad;
      this.cleanups.push(call.on('dtmf', ({ digit }) => this.onKey(digit, keypad)));
    }
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
    this.keyTimer?.cancel();
    this.keyTimer = undefined;
    this.watchdogTimer?.cancel();
    this.watchdogTimer = undefined;
    for (const off of this.cleanups.splice(0)) off();
  }

  private onKey(digit: string, keypad: KeypadEntry): void {
    if (this.finished || this.agentSession?.currentAgent !== this || !this.call) return;
    this.cancelNoInput();
    this.keyTimer?.cancel();
    this.keyTimer = undefined;
    if (digit === (keypad.finishOnKey ?? '#')) {
      this.flushKeys();
      return;
    }
    this.keys += digit;
    if (this.keys.length >= keypad.maxDigits || keypad.isComplete?.(this.keys)) {
      this.flushKeys();
      return;
    }
    this.keyTimer = this.call.clock.setTimer(keypad.interDigitTimeoutMs ?? 3_000, () =>
      this.flushKeys(),
    );
  }

  /** Hands the keys to the model path as the caller's answer (the parser resolves them). */
  private flushKeys(): void {
    this.keyTimer?.cancel();
    this.keyTimer = undefined;
    const keys = this.keys;
    this.keys = '';
    if (keys && !this.finished) {
      this.call?.noteInput('dtmf');
      this.session.generateReply({ userInput: keys });
    }
  }

  private trackSpeech(handle: voice.SpeechHandle): void {
    // `done` too: a task completed from outside (a flow's go_back, TaskGroup's out_of_scope)
    // has no activity left to ask about.
    if (this.finished || this.done || this.agentSession?.currentAgent !== this) return;
    this.activeSpeech += 1;
    this.cancelNoInput();
    handle.addDoneCallback(() => {
      this.activeSpeech -= 1;
      if (this.activeSpeech === 0) this.armNoInput();
    });
  }

  private armNoInput(): void {
    if (this.finished || this.noInputTimer || !this.call) return;
    this.noInputTimer = this.call.clock.setTimer(this.retry.noInputTimeoutMs, () => {
      this.noInputTimer = undefined;
      this.onNoInput();
    });
  }

  private cancelNoInput(): void {
    this.noInputTimer?.cancel();
    this.noInputTimer = undefined;
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
    const custom = pickReprompt(this.retry.prompts?.[kind], Math.max(1, n));
    if (custom) return custom;
    const prompt = this.spec.prompt ?? '';
    if (kind === 'noInput')
      return joinSpeech(n > 1 ? 'Are you still there?' : "Sorry, I didn't hear anything.", prompt);
    if (kind === 'noMatch') return joinSpeech("Sorry, I didn't understand.", prompt);
    return prompt || 'Please try again.';
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

function isTaskTool(name: string): boolean {
  return Object.values(TASK_TOOLS).includes(name as (typeof TASK_TOOLS)[keyof typeof TASK_TOOLS]);
}

function taskInstructions<T>(spec: TaskSpec<T>): string {
  return [
    spec.instructions,
    '',
    `You are collecting one answer from the caller (${spec.name}). This is a phone call: keep every reply short.`,
    `- When you have the answer, call ${TASK_TOOLS.submit}. If it is rejected, tell the caller what was wrong and ask again.`,
    `- If the caller refuses to answer, call ${TASK_TOOLS.declined}.`,
    `- If you cannot understand the answer, call ${TASK_TOOLS.unclear}.`,
    `- After reading an answer back, call ${TASK_TOOLS.confirm} with whether the caller agreed.`,
  ].join('\n');
}

function stripToolErrorPrefix(text: string): string {
  return text.replace(/^(Error:|Invalid arguments for \w+:)\s*/i, '');
}

function defaultReadBack(value: unknown, spelled: boolean): string {
  const text =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : Object.values(value as Record<string, unknown>)
          .filter((v) => v !== undefined && v !== null && v !== '')
          .join(', ');
  return spelled ? [...text].join(' ') : text;
}
