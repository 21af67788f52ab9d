// The one capture engine of taskline: typed tasks, digit collection and menus are all this
// class with a different spec. Its overrides (onEnter, llmNode, its tools) share one state
// machine, which reads best in one place; what has a job of its own lives beside it:
// ./typed-task-spec.ts (the spec, tools, default wording), ./caller-input.ts (keys, speech,
// no-input timer), ./attempts.ts (counters and caps), ./read-back.ts and ./confirm.ts
// (read-backs and what replies to them mean), ./escalation.ts (onExhausted in a tool call),
// ./task-expectation.ts (what the task listens for), ./parsers (how answers are read) and
// ./capture.ts (the run()/unwind shell).
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, type stt, type voice } from '@livekit/agents';
import { z } from 'zod/v4';
import { callOf, type InputModality } from '../core/call.js';
import { systemClock, type TimerHandle } from '../core/clock.js';
import type { TurnAction } from '../core/interception.js';
import { maskPII, maskValue, registerSecret } from '../core/pii.js';
import { countModelCallAvoided, traceReprompt } from '../observability/tasks.js';
import type { Outcome } from '../outcome.js';
import { Attempts, type FailureKind } from './attempts.js';
import { CallerInput } from './caller-input.js';
import { addCallerLine, replaceCallerText } from './caller-lines.js';
import { CaptureTask, joinSpeech, ToolGuard } from './capture.js';
import { noteEnd } from './captures.js';
import { emptyStream, textStream, toolCallStream } from './chunks.js';
import { readBackReply, watchReply } from './confirm.js';
import { Escalation } from './escalation.js';
import { DEFAULT_MIN_CONFIDENCE, heardUnsure, noteConfidences } from './heard-confidence.js';
import { guardedModelReply } from './model-reply.js';
import { refusal } from './parsers/refusal.js';
import type { ParseResult } from './parsers/result.js';
import { type RetryPolicy, resolveRetry, resolveWatchdog, type Watchdog } from './policy.js';
import { ReadBack } from './read-back.js';
import { type Reader, taskExpectation } from './task-expectation.js';
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

export type {
  ExpectationSpec,
  KeypadEntry,
  ParseContext,
  SubmitTool,
  TaskCounters,
  TaskSpec,
} from './typed-task-spec.js';
export { ESCALATE_TOOL, TASK_TOOLS } from './typed-task-spec.js';

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
/** A value that passed normalisation and validation, or why it did not. */
type Checked<T> = { kind: 'match'; value: T } | { kind: 'invalid'; reason: string };
const KEYPAD_ONLY = 'Please use the keypad on your phone.';
const KEYPAD_OFFER = 'You can also key it in on your keypad.';

/**
 * taskline's capture engine: an upstream AgentTask that captures one typed value and always
 * resolves an {@link Outcome}. Spoken, typed and keyed answers go through one path — the
 * task's parser first, the model (a submit tool shaped by the schema) only for speech the
 * parser cannot read — and retries, read-backs, the keypad (a key interrupts the prompt),
 * no-input timers, the watchdog, the hang-up and the escalation (`onExhausted`, always inside
 * a tool call) are handled here, so callers only branch on `outcome.status`. Typed tasks,
 * `collectDigits` and `menu` are all this class with a different spec.
 */
export class TypedTask<T> extends CaptureTask<T> {
  readonly spec: TaskSpec<T>;
  private readonly retry: RetryPolicy<T>;
  private readonly watchdog: Watchdog;
  private readonly wrapsValue: boolean;
  private readonly attempts = new Attempts();
  private readonly readBack: ReadBack<T>;
  private readonly escalation: Escalation<T>;
  /** How the caller gave the answer now being handled. */
  private modality: InputModality = 'text';
  /** The next submission is an estimate: read it back even when the policy says never. */
  private approximateNext = false;
  /** The caller was told, after a misheard answer, that the keypad works too. */
  private keypadOffered = false;
  /** The model reported the current answer unclear more than once. */
  private unclearAgain = false;
  private finished = false;
  private readonly seen = new Set<string>();
  /** Submit calls the task made itself for values its parser read. */
  private readonly localCalls = new Set<string>();
  private input: CallerInput | undefined;
  private watchdogTimer: TimerHandle | undefined;
  private releaseExpectation: (() => void) | undefined;
  private readonly cleanups: Array<() => void> = [];
  /** An answer to read first instead of asking the question (see {@link answerFirst}). */
  private firstAnswer: { text: string; modality: InputModality } | undefined;
  /** A line said with the first question (see {@link prefaceWith}). */
  private preface: string | undefined;

  constructor(spec: TaskSpec<T>) {
    const retry = resolveRetry(spec.retry);
    const wrapsValue = !(spec.schema instanceof z.ZodObject);
    const guard = new ToolGuard();
    const escalation = new Escalation<T>(spec.name, retry.onExhausted, (o) => this.settle(o));
    super(
      {
        id: spec.name,
        instructions: taskInstructions(spec),
        llm: spec.llm,
        chatCtx: spec.chatCtx,
        tools: [
          ...guard.wrap(
            taskTools(spec, submitParameters(spec.schema, wrapsValue), {
              submit: (args) => this.onSubmit(args),
              declined: (reason) => this.decline('', reason),
              unclear: (reason) => this.onUnclear(reason),
              confirm: (correct) => this.onConfirm(correct),
            }),
          ),
          // Not guarded: the escalation runs after the outcome is decided, before completion.
          escalation.tool,
        ],
      },
      guard,
    );
    this.spec = spec;
    this.retry = retry;
    this.watchdog = resolveWatchdog(spec.watchdog);
    this.wrapsValue = wrapsValue;
    this.escalation = escalation;
    const speakable = (value: T, spelled: boolean) =>
      spec.readBack ? spec.readBack(value, spelled) : defaultReadBack(value, spelled);
    this.readBack = new ReadBack(speakable, spec.prompt, () => this.publish());
  }

  /** A snapshot of the task's counters (no-input, no-match, invalid, rejected, turns). */
  get counters(): Readonly<TaskCounters> {
    return this.attempts.snapshot();
  }

  /**
   * Starts the task with this answer instead of its question, read as if the caller had just
   * given it (a flow taking a correction of an earlier answer: "actually my zip code is
   * 94110"): taken, read back or refused by the task's own rules. When the task cannot read
   * it, the question is asked as usual. Call before the task starts.
   */
  answerFirst(answer: { text: string; modality: InputModality }): void {
    if (this.entered) throw new Error('answerFirst() must be called before the task starts');
    this.firstAnswer = answer;
  }

  /**
   * A line said in the same utterance as the question, before it (a flow's "Okay, I've
   * changed your score to 5."): the caller hears one turn, with no gap to talk into. Call
   * before the task starts.
   */
  prefaceWith(line: string): void {
    if (this.entered) throw new Error('prefaceWith() must be called before the task starts');
    this.preface = line;
  }

  /** How a value of this task is spoken (its capture log form): for flows' acknowledgements. */
  spoken(value: T): string {
    return this.spec.display ? this.spec.display(value) : this.readBack.speak(value, false);
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
      foreignKey: (digit) => this.onForeignKey(digit),
    });
    this.input.attach(session, () => session.currentAgent === this);
    this.publish();
    const first = this.firstAnswer;
    if (first) void this.onFirstAnswer(first.text, first.modality);
    else this.ask();
  }

  /** Asks the task's question: its prompt, or the model's opening. */
  private ask(): void {
    const preface = this.preface;
    this.preface = undefined;
    if (this.spec.prompt) this.session.say(joinSpeech(preface ?? '', this.spec.prompt));
    else {
      if (preface) this.session.say(preface);
      this.session.generateReply();
    }
  }

  /** An answer the task was started with (see {@link answerFirst}): read like a keyed one. */
  private async onFirstAnswer(text: string, modality: InputModality): Promise<void> {
    if (!this.countTurn(modality)) return;
    this.attempts.newAnswer();
    let next = await this.answer(text, modality, false);
    if (this.finished) return;
    if (next === ASK_MODEL) {
      this.ask();
      return;
    }
    if (isOffer(next)) next = await this.offer(next.offer, next.approximate);
    if (typeof next === 'string' && next) this.speak(next);
    else this.input?.listen();
  }

  /**
   * A key the task does not take as input, offered to the call's turn interceptor: what to do
   * once it has interrupted the task's speech, or undefined to treat it as usual.
   */
  private onForeignKey(digit: string): (() => void) | undefined {
    if (this.finished || digit === this.spec.repeat?.key) return undefined;
    const action = this.call?.interceptTurn({
      task: this,
      text: digit,
      modality: 'dtmf',
      answers: false,
    });
    if (!action) return undefined;
    return () => {
      this.seen.add(addCallerLine(this, `(keypad) ${this.spec.mask ? maskValue(digit) : digit}`));
      if (!this.countTurn('dtmf')) return;
      const next = this.act(action);
      if (next === ASK_MODEL) this.session.generateReply();
      else if (typeof next === 'string' && next) this.speak(next);
      else this.input?.listen();
    };
  }

  /** Upstream's STT node, with each final transcript's confidence noted on the call. */
  override async sttNode(
    audio: Parameters<voice.Agent['sttNode']>[0],
    modelSettings: voice.ModelSettings,
  ): Promise<ReadableStream<stt.SpeechEvent | string> | null> {
    const events = await super.sttNode(audio, modelSettings);
    return events && this.call ? noteConfidences(events, this.call) : events;
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    if (this.escalation.waiting) return this.escalation.reply();
    if (this.finished) return emptyStream();
    let caller: llm.ChatMessage | undefined;
    let lastOutput: llm.FunctionCallOutput | undefined;
    let failedAgain = false;
    for (const item of chatCtx.items) {
      if (this.seen.has(item.id)) continue;
      this.seen.add(item.id);
      if (item.type === 'message' && item.role === 'user') {
        caller = item;
        this.attempts.newAnswer();
      }
      if (item.type === 'function_call_output' && isTaskTool(item.name)) {
        lastOutput = item;
        if (item.name === TASK_TOOLS.submit && item.isError) {
          failedAgain = !this.attempts.countOnce('invalid');
        }
      }
    }
    if (this.checkCaps()) return emptyStream();
    if (caller) return this.onCallerTurn(caller, chatCtx, toolCtx, modelSettings);
    const error = lastOutput?.isError ? stripToolErrorPrefix(lastOutput.output) : undefined;
    if (lastOutput && this.localCalls.has(lastOutput.callId)) {
      // The task's own submission: answer its result without a model.
      if (this.readBack.confirming) return textStream(this.question());
      return this.say(error !== undefined ? this.reprompt('invalid', error) : undefined);
    }
    // The model failed this answer again on its own tool reply (or the task words its own
    // re-prompts): re-prompt without asking it again. One answer costs one attempt and at
    // most two model calls.
    const byTask = this.spec.repromptBy === 'task';
    if (lastOutput?.name === TASK_TOOLS.unclear && (byTask || this.unclearAgain)) {
      return textStream(this.reprompt('noMatch'));
    }
    if (lastOutput?.name === TASK_TOOLS.submit && error !== undefined && (byTask || failedAgain)) {
      return textStream(this.reprompt('invalid', error));
    }
    if (lastOutput?.name === TASK_TOOLS.submit && !error && this.readBack.confirming) {
      return textStream(this.question());
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
    this.unclearAgain = false;
    const text = message.textContent ?? '';
    if (this.spec.mask) this.scrub(message, text);
    if (!this.countTurn(this.call?.modalityOf(message) ?? 'text')) return emptyStream();
    let next =
      this.spec.allowSpeech === false
        ? this.fail('noMatch', KEYPAD_ONLY)
        : await this.answer(text, this.modality);
    if (next === ASK_MODEL) return this.model(chatCtx, toolCtx, modelSettings);
    if (!isOffer(next)) return this.say(next);
    // A value from words the recogniser was unsure of is read back before it is taken.
    const min = this.spec.minConfidence ?? DEFAULT_MIN_CONFIDENCE;
    if (heardUnsure(this.call?.confidenceOf(message), min)) next = { ...next, approximate: true };
    // A secret is never written into the conversation as tool arguments: taken directly.
    if (this.spec.mask) return this.say(await this.offer(next.offer, next.approximate));
    return this.submitCall(next.offer, next.approximate);
  }

  /** A whole keypad entry: answered like speech, by the parser (never the model). */
  private async onEntry(keys: string): Promise<void> {
    if (this.finished) return;
    if (keys === '') {
      this.onNoInput();
      return;
    }
    if (this.spec.mask) registerSecret(keys);
    this.seen.add(addCallerLine(this, `(keypad) ${this.spec.mask ? maskValue(keys) : keys}`));
    if (!this.countTurn('dtmf')) return;
    this.attempts.newAnswer();
    let next = await this.answer(keys, 'dtmf');
    if (isOffer(next)) next = await this.offer(next.offer, next.approximate);
    if (typeof next === 'string' && next) this.speak(next);
    else this.input?.listen();
  }

  /** Counts a caller turn; false when the turn cap ended the task. */
  private countTurn(modality: InputModality): boolean {
    this.modality = modality;
    if (this.attempts.turn(this.watchdog.maxTurns)) return true;
    this.finish({
      status: 'timeout',
      attempts: this.failures(),
      reason: `no answer within ${this.watchdog.maxTurns} caller turns`,
    });
    return false;
  }

  /**
   * What an answer (spoken, typed or keyed) means, and what to say next. Words are offered to
   * the call's turn interceptor (a flow's repairs) before the task's own reading decides,
   * unless `intercept` is false.
   */
  private async answer(text: string, modality: InputModality, intercept = true): Promise<Next<T>> {
    const repeat = this.spec.repeat;
    if (modality === 'dtmf' ? text === repeat?.key : repeat?.phrases?.test(text)) {
      return this.spec.prompt ?? '';
    }
    if (!this.readBack.asking) return this.onReadBackReply(text, modality, intercept);
    const parsed = this.read(text, modality);
    if (intercept && modality !== 'dtmf') {
      const open = this.spec.expects?.kind === 'freeText';
      const answers = parsed?.kind === 'match' && !open;
      const action = this.intercepted(text, modality, answers, open);
      if (action) return this.act(action);
    }
    const refused =
      this.spec.detectRefusal === false || modality === 'dtmf' ? undefined : refusal(text);
    if (refused === 'explicit') return this.decline(text);
    if (parsed === undefined) return refused === 'soft' ? this.decline(text) : this.unread();
    if (parsed.kind === 'match') {
      countModelCallAvoided(this);
      return { offer: parsed.value, approximate: parsed.approximate === true };
    }
    if (parsed.kind === 'declined') return this.decline(text, parsed.reason);
    if (refused === 'soft') return this.decline(text);
    const offered = parsed.kind === 'nomatch' ? this.validCandidates(parsed.candidates) : [];
    if (offered.length === 1) return { offer: offered[0]!, approximate: true };
    if (offered.length > 1) {
      countModelCallAvoided(this);
      return this.readBack.choose(offered);
    }
    if (parsed.kind === 'invalid') return this.fail('invalid', this.masked(parsed.reason));
    return this.unread();
  }

  /**
   * `line`, plus — once per task, when the task also takes keys — that the caller can key
   * the answer in: after a spoken answer was misheard, the keypad cannot be misheard.
   */
  private offerKeypad(line: string): string {
    if (!this.spec.keypad || this.keypadOffered) return line;
    this.keypadOffered = true;
    return joinSpeech(line, KEYPAD_OFFER);
  }

  /** What the call's turn interceptor makes of the caller's words, if anything. */
  private intercepted(text: string, modality: InputModality, answers: boolean, open = false) {
    return this.call?.interceptTurn({ task: this, text, modality, answers, open });
  }

  /**
   * Carries out what an interceptor decided: the pending question again (after its preface),
   * or the end of the task with the outcome it names. Counts no failure.
   */
  private act(action: TurnAction): Next<T> {
    if (action.kind === 'end') {
      this.finish({
        status: action.status,
        attempts: this.failures() + 1,
        reason: action.reason,
      });
      return undefined;
    }
    const again = this.readBack.question() ?? this.spec.prompt;
    if (again === undefined && action.preface === undefined) return ASK_MODEL;
    return joinSpeech(action.preface ?? '', again ?? '');
  }

  /** An answer no parser read: the model's turn for speech, a no-match otherwise. */
  private unread(): Next<T> {
    if (this.spec.modelFallback === false || this.modality === 'dtmf') return this.fail('noMatch');
    return ASK_MODEL;
  }

  /** The task's parser for an answer given this way (undefined without one). */
  private read(text: string, modality: InputModality): ParseResult<T> | undefined {
    return this.spec.parse?.(text, { now: this.call?.clock.now() ?? Date.now(), modality });
  }

  /** A reply while a read-back or a "which one?" is pending (see ./confirm.ts). */
  private onReadBackReply(text: string, modality: InputModality, intercept: boolean): Next<T> {
    const state = this.readBack.state!;
    const parse = this.spec.parse && ((t: string) => this.read(t, modality)!);
    const reply = readBackReply(text, state, { parse, correct: this.spec.correct });
    // Words that are no reply to the read-back may still be a request for the whole call.
    if (reply.kind === 'unclear' && intercept && modality !== 'dtmf') {
      const action = this.intercepted(text, modality, false);
      if (action) return this.act(action);
    }
    switch (reply.kind) {
      case 'yes':
      case 'no':
        countModelCallAvoided(this);
        this.onConfirm(reply.kind === 'yes');
        if (this.finished) return undefined;
        return reply.kind === 'no' && modality === 'speech'
          ? this.offerKeypad(this.readBack.reask())
          : this.readBack.reask();
      case 'replace':
      case 'pick':
        countModelCallAvoided(this);
        if (reply.kind === 'replace' && reply.rejected) this.reject();
        this.readBack.clear();
        return { offer: reply.value, approximate: reply.kind === 'replace' && !!reply.approximate };
      case 'retry':
        this.reject();
        this.readBack.clear();
        return this.checkCaps()
          ? undefined
          : this.reprompt('invalid', reply.reason ?? 'Sorry about that.');
      default:
        if (this.spec.modelFallback !== false && this.readBack.confirming && modality !== 'dtmf') {
          return ASK_MODEL;
        }
        if (reply.kind === 'rejectUnclear') {
          this.reject();
          this.readBack.clear();
          return this.checkCaps() ? undefined : this.readBack.reask();
        }
        this.attempts.count('noMatch');
        return this.checkCaps() ? undefined : this.question();
    }
  }

  /** A value the caller gave: taken, read back first, or refused with the reason. */
  private async offer(value: T, approximate: boolean): Promise<string | undefined> {
    const checked = await this.check(value);
    if (checked.kind !== 'match') return this.fail('invalid', checked.reason);
    return this.take(checked.value, approximate);
  }

  /** The value normalised and validated, or the reason it cannot be taken. */
  private async check(value: T): Promise<Checked<T>> {
    const normal = this.spec.normalize?.(value) ?? { kind: 'match', value };
    if (normal.kind !== 'match') {
      const reason =
        normal.kind === 'invalid' ? normal.reason : `That is not a valid ${this.spec.name}.`;
      return { kind: 'invalid', reason: this.masked(reason) };
    }
    const problem = await this.spec.validate?.(normal.value);
    return problem
      ? { kind: 'invalid', reason: this.masked(problem) }
      : { kind: 'match', value: normal.value };
  }

  /** Takes a checked value now, or reads it back first (returns the read-back question). */
  private take(value: T, approximate: boolean): string | undefined {
    const policy = this.spec.confirm ?? 'never';
    const modality = this.modality;
    if (approximate || policy === 'always' || (policy === 'audio' && modality === 'speech')) {
      return this.readBack.confirm({
        value,
        modality,
        reason: approximate ? 'approximate' : 'policy',
      });
    }
    this.finish({ status: 'ok', value, attempts: this.failures() + 1, modality });
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

  /** Submits a value the parser read through the submit tool, so the chat records it. */
  private submitCall(value: T, approximate: boolean): Stream {
    this.approximateNext = approximate;
    const callId = `taskline_${this.spec.name}_${this.localCalls.size + 1}`;
    this.localCalls.add(callId);
    return toolCallStream(callId, TASK_TOOLS.submit, this.submitArgs(value));
  }

  /** The submit tool's arguments for a value (the schema's shape, or the spec's own). */
  private submitArgs(value: T): Record<string, unknown> {
    if (this.spec.submit) return this.spec.submit.args(value);
    return this.wrapsValue ? { value } : (value as Record<string, unknown>);
  }

  /** The value the submit tool's arguments name. */
  private submitted(args: Record<string, unknown>): ParseResult<T> {
    if (this.spec.submit) return this.spec.submit.read(args);
    return { kind: 'match', value: (this.wrapsValue ? args.value : args) as T };
  }

  /** The submit tool (the model's, or the task's own for a parsed value). */
  private async onSubmit(args: Record<string, unknown>): Promise<string | undefined> {
    if (this.finished) return undefined;
    const approximate = this.approximateNext;
    this.approximateNext = false;
    const raw = this.submitted(args);
    if (raw.kind !== 'match') {
      const why = raw.kind === 'invalid' ? raw.reason : `That is not a valid ${this.spec.name}.`;
      throw new llm.ToolError(why);
    }
    const checked = await this.check(raw.value);
    if (checked.kind !== 'match') throw new llm.ToolError(checked.reason);
    if (this.take(checked.value, approximate) === undefined) return undefined;
    return `Read the answer back and ask the caller to confirm: ${this.readBack.speak(checked.value)}`;
  }

  private onConfirm(correct: boolean): string | undefined {
    const pending = this.readBack.pending;
    if (!pending) {
      throw new llm.ToolError('Nothing to confirm yet: call submit with the answer first.');
    }
    if (correct) {
      const { value, modality } = pending;
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
    this.readBack.clear();
    if (this.checkCaps()) return undefined;
    return 'The caller said that is wrong. Ask for the answer again.';
  }

  private onUnclear(reason: string): string | undefined {
    this.unclearAgain = this.attempts.unclear() > 1;
    if (this.checkCaps()) return undefined;
    return `Not understood (${reason}). Ask again, more simply.`;
  }

  /** The caller said the value read back is wrong. */
  private reject(): void {
    if (this.readBack.reject()) this.attempts.count('rejected');
  }

  /** Counts one failed answer of a kind and says what to say next (undefined at a cap). */
  private fail(kind: 'noMatch' | 'invalid', reason?: string): string | undefined {
    this.attempts.count(kind);
    return this.checkCaps() ? undefined : this.reprompt(kind, reason);
  }

  /** Ends the task when a cap is reached; true if it did. */
  private checkCaps(): boolean {
    if (this.finished) return true;
    const reached = this.attempts.reached(this.retry);
    if (reached) this.finish(reached);
    return reached !== undefined;
  }

  protected override failures(): number {
    return this.attempts.failures;
  }

  protected override markFinished(): void {
    this.finished = true;
  }

  /**
   * Ends the task with `outcome`: an accepted value is recorded in the call's capture log; a
   * reached cap runs `retry.onExhausted` first (see ./escalation.ts).
   */
  private finish(outcome: Outcome<T>): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    const { name, mask, logComponent } = this.spec;
    noteEnd(this.agentSession, this.call, { name, masked: mask, logComponent }, outcome, (v) =>
      this.spec.display ? this.spec.display(v) : this.readBack.speak(v, false),
    );
    if (this.escalation.handles(outcome)) this.escalation.start(outcome, () => this.session);
    else this.settle(outcome);
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

  private onNoInput(): void {
    if (this.finished) return;
    this.attempts.count('noInput');
    if (this.checkCaps()) return;
    this.speak(this.readBack.confirming ? this.question() : this.reprompt('noInput'));
  }

  /** Says `text` with `session.say` (no model). */
  private speak(text: string): void {
    if (!this.finished && text) this.session.say(text);
  }

  /** A model-free reply: `text`, or nothing. */
  private say(text: string | undefined): Stream {
    return text ? textStream(text) : emptyStream();
  }

  /** Replaces a secret spoken answer by its masked form wherever the session keeps it. */
  private scrub(message: llm.ChatMessage, text: string): void {
    const parsed = this.read(text, 'speech');
    const value = parsed?.kind === 'match' ? parsed.value : undefined;
    const secret = typeof value === 'string' || typeof value === 'number' ? String(value) : text;
    if (parsed?.kind === 'match') registerSecret(secret);
    replaceCallerText(this.session, this, message, `(spoken) ${maskValue(secret)}`);
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
      this.attempts.countOnce('noMatch');
      return this.checkCaps() ? undefined : this.reprompt('noMatch');
    });
    const stream =
      guarded ?? (await super.llmNode(chatCtx, visible, modelSettings)) ?? emptyStream();
    if (this.readBack.asking) return stream;
    // The model asked something of its own while a read-back was pending (e.g. the question
    // again): that value may no longer be confirmed by the caller's next answer.
    return watchReply(stream, Object.values(TASK_TOOLS), () => {
      if (!this.finished) this.readBack.clear();
    });
  }

  /** Offered alternatives that the schema accepts. */
  private validCandidates(candidates: readonly unknown[] | undefined): T[] {
    return (candidates ?? []).flatMap((c) => {
      const checked = this.spec.schema.safeParse(c);
      return checked.success ? [checked.data] : [];
    });
  }

  /** Publishes what the task listens for now (replacing what it published before). */
  private publish(): void {
    if (!this.call || this.finished) return;
    const read: Reader<T> | undefined = this.spec.parse && ((t) => this.read(t, 'speech')!);
    const release = this.releaseExpectation;
    this.releaseExpectation = this.call.expect(taskExpectation(this.spec, this.readBack, read));
    release?.();
  }

  /** The pending question again, or a no-match re-prompt when nothing is pending. */
  private question(): string {
    return this.readBack.question() ?? this.reprompt('noMatch');
  }

  private reprompt(kind: FailureKind, reason?: string): string {
    const n = this.attempts.of(kind);
    traceReprompt(this, kind, n);
    const again = this.spec.reprompt ?? this.spec.prompt ?? '';
    return repromptLine(kind, n, this.retry, again, reason);
  }
}

function isOffer<T>(next: Next<T>): next is Offer<T> {
  return typeof next === 'object' && next !== null && 'offer' in next;
}

/** True when an utterance is a refusal to answer ("I'd rather not say", "not interested"). */
export function isRefusal(text: string): boolean {
  return refusal(text) !== undefined;
}
