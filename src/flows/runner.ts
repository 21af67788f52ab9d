/**
 * The flow runner: one AgentTask that runs a flow's steps in turn (run → execute → loop →
 * runStep).
 *
 * Over 500 lines: the step loop and its step records share the run state.
 */
import { EventEmitter } from 'node:events';
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, voice } from '@livekit/agents';
import { type CallContext, callOf } from '../core/call.js';
import { checkOptions, millis, type OptionTable, timeWindow } from '../core/options.js';
import { inFlowSpan, recordStep, traceFlow, traceStep } from '../observability/flows.js';
import type { FailedOutcome, Outcome } from '../outcome.js';
import { emptyStream } from '../tasks/chunks.js';
import { ReplacedRun } from '../tasks/replaced.js';
import { TypedTask } from '../tasks/typed-task.js';
import { agentChatContext, isSessionClosing } from '../upstream/internals.js';
import type { AnnounceText } from './announce.js';
import { type CheckpointInfo, FlowCheckpoints, freshState } from './checkpointing.js';
import type { CheckpointKey, FlowState } from './checkpoints/types.js';
import { answerSummary, stepContext } from './context.js';
import { type FlowDefinition, type StepDef, stepById } from './definition.js';
import { endFlowCall, type FlowEnding } from './ending.js';
import { PickFailure, type ResolveOptions, type StepEntry, valuesOf } from './graph.js';
import { advance, GO_BACK_TOOL, goBackTool } from './navigation.js';
import { type AfterRepair, afterRepair, correctedLine } from './repair/after.js';
import { stepNames } from './repair/config.js';
import { RepairDesk } from './repair/desk.js';
import {
  completedResult,
  incompleteResult,
  lostResult,
  nestedStepRun,
  pickFailureOutcome,
  refusedResult,
  type StepRun,
  stepRecord,
} from './report.js';
import { restoreCheckpoint } from './restore.js';
import {
  defaultResumeLine,
  type FlowEvents,
  type FlowRunOptions,
  type ResumeInfo,
  resumeInfo,
} from './run-options.js';
import { saySteps } from './say-step.js';
import { checkSealKeys, storedState } from './secrets.js';
import {
  type CheckpointRefusal,
  END,
  type FlowIncomplete,
  type FlowResult,
  type FlowStatus,
  type StepContext,
  type StepRecord,
  type StepResultKind,
} from './types.js';

export type { CheckpointInfo, FlowEvents, FlowRunOptions, ResumeInfo };
export { defaultResumeLine, GO_BACK_TOOL };

const ENDS_FLOW = new Set(['hangup', 'cancelled', 'transferred']);

/** A run's numeric options ({@link FlowRunOptions}), each with its accepted range. */
const RUN_OPTIONS = {
  checkpointTimeoutMs: { range: millis(100) },
  resumeWindowMs: { range: timeWindow(0) },
} as const satisfies OptionTable;

/**
 * Runs a flow as an upstream AgentTask (as TaskGroup does), so it can be awaited from a
 * tool or `onEnter` and nested in other flows. Each step's task runs inline in turn with
 * its own context; answers, position and counters are checkpointed after every step; a
 * `go_back` tool lets the caller return to revisitable steps.
 */
export class FlowTask<R> extends voice.AgentTask<FlowResult<R>> {
  /** The flow this task runs. */
  readonly definition: FlowDefinition;
  private readonly options: FlowRunOptions;
  private readonly emitter = new EventEmitter<FlowEvents>();
  private state: FlowState | undefined;
  private checkpoints: FlowCheckpoints | undefined;
  private current: voice.AgentTask<Outcome<unknown>> | undefined;
  private jump: { to: string } | undefined;
  private call: CallContext | undefined;
  /** Kept from `onEnter`: `this.session` throws once the flow's activity has closed. */
  private agentSession: voice.AgentSession | undefined;
  private ownError: unknown;
  private working: (() => void) | undefined;
  private runCalled = false;
  /** The error a step stopped the flow with (a failed pick), for the result. */
  private stepError: { code: string; message: string } | undefined;
  /** Another agent took the session over (`session.updateAgent`) while the flow ran. */
  private takenOver = false;
  private readonly replaced = new ReplacedRun<FlowResult<R>>();
  private readonly nested: boolean;
  private readonly sealKeys: Uint8Array[] | undefined;
  /** Ends picks still running when the call ends. */
  private readonly ending = new AbortController();
  /** A resumed call is asking again for the masked answers its checkpoint did not hold. */
  private refilling = false;
  /** Hears the flow's repair patterns in every step (when the flow declares them). */
  private desk: RepairDesk | undefined;
  /** What the next step run starts with after a repair: a line, a correction's new answer. */
  private afterRepair: Extract<AfterRepair, { kind: 'continue' }> | undefined;
  /** A correction under way: the step corrected and where the caller was. */
  private correcting: { step: string; returnTo: string } | undefined;

  /** @param nested internal: a flow run as a step of another flow never ends the call. */
  constructor(definition: FlowDefinition, options: FlowRunOptions = {}, nested = false) {
    super({
      id: definition.name,
      instructions: `Runs the steps of the "${definition.name}" flow.`,
      chatCtx: options.chatCtx,
    });
    checkOptions(RUN_OPTIONS, options);
    this.sealKeys = checkSealKeys(options.sealKeys);
    this.definition = definition;
    this.options = options;
    this.nested = nested;
    this.emitter.on('step_completed', (record) => recordStep(definition.name, record));
  }

  /** Subscribes to a flow event; returns the function that unsubscribes. */
  on<K extends keyof FlowEvents>(event: K, listener: (...args: FlowEvents[K]) => void): () => void {
    this.emitter.on(event, listener as never);
    return () => this.emitter.off(event, listener as never);
  }

  /** A copy of the flow's state so far (undefined before it starts). */
  get snapshot(): FlowState | undefined {
    return this.state ? structuredClone(this.state) : undefined;
  }

  /**
   * Resolves the flow's result; a session torn down mid-flow resolves `hangup` / `cancelled`,
   * and the flow being replaced (`session.updateAgent`) `cancelled`. Then ends the call as
   * `onEnd` says. A second `run()` throws, as upstream's AgentTask does.
   */
  override async run(): Promise<FlowResult<R>> {
    if (this.runCalled) return super.run();
    this.runCalled = true;
    return traceFlow(
      this,
      () => this.checkpoints?.key.callId,
      () => this.runOnce(),
    );
  }

  private async runOnce(): Promise<FlowResult<R>> {
    let result: FlowResult<R>;
    try {
      result = await this.replaced.race(super.run());
    } catch (error) {
      if (error === this.ownError || !this.state) throw error;
      // The session closed under the flow (a hang-up): the checkpoint still points at the
      // step the caller was on, so a new session resumes there.
      const hungUp = this.call?.hungUp;
      const position = this.state.position;
      result = this.incomplete(
        hungUp ? 'hangup' : 'cancelled',
        hungUp?.reason ?? (error instanceof Error ? error.message : String(error)),
        position === END ? undefined : position,
      );
    }
    const ending =
      this.options.onEnd ?? (result.status === 'conflict' ? ({} satisfies FlowEnding) : undefined);
    if (ending && this.call && !this.nested && !this.takenOver) {
      await endFlowCall(this.call, ending, result);
    }
    return result;
  }

  /** True (while the flow runs) when another agent has taken the session over. */
  private wasReplaced(): boolean {
    const session = this.agentSession;
    return session !== undefined && !isSessionClosing(session) && session.currentAgent !== this;
  }

  /** The runner never speaks for itself: a stray caller turn between steps gets no reply. */
  override async llmNode(): Promise<ReadableStream<llm.ChatChunk | string | FlushSentinel>> {
    return emptyStream();
  }

  override async onEnter(): Promise<void> {
    this.agentSession = this.session;
    let result: FlowResult<R>;
    try {
      result = await inFlowSpan(this, () => this.execute());
    } catch (error) {
      this.ownError = error instanceof Error ? error : new Error(String(error));
      if (!this.done) this.complete(this.ownError as Error);
      return;
    } finally {
      this.idle();
    }
    if (!this.done) this.complete(result);
    // Upstream would not hand the result to our awaiter once another agent took over.
    if (this.wasReplaced()) {
      this.takenOver = true;
      this.replaced.settle(result);
    }
  }

  /**
   * Marks the call busy between steps (checkpoint I/O, building the next context): the
   * caller's turn is not over until the next question is asked.
   */
  private busy(): void {
    this.working ??= this.call?.beginWork();
  }

  /** Ends the busy mark: the flow now waits on the caller (or has ended). */
  private idle(): void {
    this.working?.();
    this.working = undefined;
  }

  private async execute(): Promise<FlowResult<R>> {
    const def = this.definition;
    const call = callOf(this.agentSession!);
    this.call = call;
    const abort = () => this.ending.abort(new Error('the call ended'));
    if (call.ended) abort();
    else call.on('ended', abort);
    this.busy();
    const key: CheckpointKey = {
      flow: this.options.checkpointKey ?? def.name,
      callId: this.options.callId ?? call.callId,
    };
    const sealKeys = this.sealKeys;
    const checkpoints = new FlowCheckpoints(
      this.options.checkpoints,
      key,
      call.clock,
      this.options.checkpointTimeoutMs,
      (info) => {
        this.emitter.emit('checkpoint', info);
        this.options.onCheckpoint?.(info);
      },
      (state) => storedState(def, state, key, sealKeys),
    );
    this.checkpoints = checkpoints;
    const now = call.clock.now();
    // Something to report from, should the store fail before anything is loaded.
    this.state = freshState(def, key, now);
    const claimed = await checkpoints.claim(this.state, {
      fresh: () => freshState(def, key, now),
      restore: (saved) =>
        restoreCheckpoint(def, saved, { key, sealKeys, resolve: this.resolveOptions() }),
      ifCompleted: this.options.ifCompleted,
      ifRefused: this.options.ifRefused,
      resumeWindowMs: this.options.resumeWindowMs,
      now,
    });
    const state = claimed.state;
    this.state = state;
    if (claimed.claim === 'lost') return this.lost();
    if (claimed.claim === 'refused') return this.refused(claimed.refusal!);
    if (claimed.claim === 'completed') return this.completed(claimed.reask);
    const release = this.listenForRepairs(call);
    try {
      return await this.greetAndLoop(claimed, def, key);
    } finally {
      release?.();
    }
  }

  /** Registers the flow's repair desk on the call while the flow runs (see ./repair/). */
  private listenForRepairs(call: CallContext): (() => void) | undefined {
    const repair = this.definition.repair;
    if (!repair) return undefined;
    this.desk = new RepairDesk(this.definition, repair, {
      state: () => this.state!,
      now: () => call.clock.now(),
      canGoBack: () => !this.refilling,
    });
    return call.interceptTurns(this.desk);
  }

  private async greetAndLoop(
    claimed: Awaited<ReturnType<FlowCheckpoints['claim']>>,
    def: FlowDefinition,
    key: CheckpointKey,
  ): Promise<FlowResult<R>> {
    let greet: (() => Promise<void>) | undefined;
    this.refilling = (claimed.reask ?? []).length > 0;
    const info = claimed.claim === 'resumed' ? resumeInfo(def, key, claimed) : undefined;
    if (info) {
      this.emitter.emit('resumed', info);
      const line = this.options.resumeLine;
      if (line !== false) {
        // Spoken once the first step is ready, right before it starts, so the caller hears
        // where they were and then the question with no gap.
        greet = async () => {
          await this.agentSession!.say((line ?? defaultResumeLine)(info)).waitForPlayout();
        };
      }
    }
    return this.loop(greet);
  }

  private async loop(greet?: () => Promise<void>): Promise<FlowResult<R>> {
    const def = this.definition;
    const state = this.state!;
    const clock = this.call!.clock;
    const maxRuns = def.options.maxStepRuns ?? Math.max(50, def.steps.length * 10);
    let runs = 0;
    while (state.position !== END) {
      const step = stepById(def, state.position)!;
      runs += 1;
      const visit = (state.visits[step.id] ?? 0) + 1;
      state.visits[step.id] = visit;
      const startedAt = clock.now();
      let run: StepRun;
      if (runs > maxRuns || (step.maxVisits !== undefined && visit > step.maxVisits)) {
        const reason =
          runs > maxRuns
            ? `the flow ran ${maxRuns} steps, its maxStepRuns`
            : `step ran ${step.maxVisits} times, its maxVisits`;
        run = { outcome: { status: 'maxRetries', attempts: 0, reason }, counters: ZERO };
      } else {
        this.emitter.emit('step_started', { step: step.id, visit });
        run = await traceStep(def.name, step.id, visit, () => this.runStep(step, greet));
        greet = undefined;
      }
      let { outcome } = run;
      const record = stepRecord(step.id, visit, startedAt, clock.now(), run);

      const pending = run.heard?.pending;
      if (pending && outcome.status !== 'ok' && outcome.status !== 'hangup') {
        const after = await afterRepair(this.repairRun(), step, pending, outcome, record);
        if (after.kind === 'continue') {
          this.afterRepair = after;
          if (pending.kind === 'correct') {
            this.correcting = { step: pending.target, returnTo: state.revisit!.returnTo };
          }
          if (!(await this.commit(record))) return this.lost();
          continue;
        }
        if (after.kind === 'stop') {
          const result = await this.stop(after.status, step.id, after.outcome, record);
          if (after.by && result.status !== 'completed') result.repair = after.by;
          return result;
        }
        outcome = { status: 'ok', value: after.value, attempts: outcome.attempts };
      }

      if (run.jump) {
        record.outcome = 'back';
        record.next = run.jump;
        record.reason = `caller went back to "${run.jump}"`;
        state.backSteps += 1;
        // Remember where the caller was (the first step they left), across sessions too.
        state.revisit = { step: run.jump, returnTo: state.revisit?.returnTo ?? step.id };
        state.position = run.jump;
        if (!(await this.commit(record))) return this.lost();
        continue;
      }

      let entry: StepEntry;
      let kind: StepResultKind;
      if (outcome.status === 'ok') {
        entry =
          pending?.kind === 'human'
            ? { value: outcome.value, escalated: true }
            : { value: outcome.value };
        kind = pending?.kind === 'human' ? 'escalated' : 'ok';
      } else if (ENDS_FLOW.has(outcome.status)) {
        record.reason = outcome.reason;
        return this.stop(
          outcome.status as 'hangup' | 'cancelled' | 'transferred',
          step.id,
          outcome,
          record,
        );
      } else if (state.revisit?.step === step.id && state.entries[step.id]) {
        entry = state.entries[step.id]!;
        kind = 'kept';
        record.reason = `kept the earlier answer (${outcome.status})`;
      } else if ((step.skippable && outcome.status === 'declined') || step.onFailure === 'skip') {
        entry = { skipped: true };
        kind = 'skipped';
        record.reason = outcome.reason ?? outcome.status;
      } else if (typeof step.onFailure === 'function') {
        // An escalation may itself wait on the caller (a transfer, a keypad fallback).
        this.idle();
        const escalated = await step.onFailure(outcome, {
          step: step.id,
          callId: state.callId,
          answers: this.answers(),
          session: this.agentSession!,
        });
        this.busy();
        if (escalated.status !== 'ok') {
          record.reason = escalated.reason ?? escalated.status;
          return this.stop('escalated', step.id, escalated, record);
        }
        entry = { value: escalated.value, escalated: true };
        kind = 'escalated';
        record.reason = outcome.reason ?? outcome.status;
      } else {
        record.reason = outcome.reason;
        return this.stop('failed', step.id, outcome, record);
      }
      record.outcome = kind;
      state.entries[step.id] = entry;
      let next: string;
      try {
        const advanced = await advance(def, state, step, entry, {
          resolve: this.resolveOptions(),
          refilling: this.refilling,
          answers: this.answers(),
        });
        next = advanced.next;
        this.refilling = advanced.refilling;
        if (advanced.pickError) {
          record.outcome = 'error';
          record.reason = advanced.pickError.message;
        }
      } catch (error) {
        if (!(error instanceof PickFailure)) throw error;
        // A pick that failed with no onError: the flow stops on this step, its answer
        // not taken (a later session asks it again).
        delete state.entries[step.id];
        state.path = state.path.filter((id) => id !== step.id);
        this.stepError = { code: error.kind, message: error.message };
        const failed = pickFailureOutcome(error, outcome.attempts, record);
        return this.stop('failed', step.id, failed, record);
      }
      record.next = next;
      state.position = next;
      this.acknowledgeCorrection(step, record, run, next);
      if (!(await this.commit(record))) return this.lost();
    }
    state.status = 'completed';
    state.endedAt = clock.now();
    if (!(await this.persist())) return this.lost();
    return this.completed();
  }

  /** What the repairs need of the running flow (see ./repair/after.ts). */
  private repairRun() {
    return {
      repair: this.definition.repair!,
      state: this.state!,
      desk: this.desk!,
      session: this.agentSession!,
      callId: this.state!.callId,
      answers: () => this.answers(),
      idle: () => this.idle(),
      busy: () => this.busy(),
    };
  }

  /**
   * Once a corrected step has its new answer: it is recorded as `corrected`, and the caller
   * hears it was changed (and that the questions change, when it leads elsewhere than where
   * they were) before the next question.
   */
  private acknowledgeCorrection(step: StepDef, record: StepRecord, run: StepRun, next: string) {
    const correcting = this.correcting;
    if (correcting?.step !== step.id) return;
    this.correcting = undefined;
    if (record.outcome !== 'ok') return;
    record.outcome = 'corrected';
    const name = stepNames(step)[0]!;
    const line = correctedLine(
      this.definition.repair!,
      { name, value: run.spoken ?? '' },
      next !== correcting.returnTo,
    );
    this.afterRepair = { kind: 'continue', line };
  }

  /** How picks run: bounded on the call's clock, stopped when the call ends. */
  private resolveOptions(): ResolveOptions {
    return { clock: this.call!.clock, signal: this.ending.signal };
  }

  private async runStep(step: StepDef, before?: () => Promise<void>): Promise<StepRun> {
    if (step.runner.kind === 'flow') {
      await before?.();
      this.idle();
      try {
        return await this.runNested(step, step.runner.flow);
      } finally {
        this.busy();
      }
    }
    if (step.runner.say) return this.sayStep(step, step.runner.say, before);
    const state = this.state!;
    const task = step.runner.create({ answers: this.answers() });
    await task.updateChatCtx(
      await stepContext(step.context ?? this.definition.options.context ?? 'summary', {
        answers: this.answers(),
        history: () => this.chatCtx.copy(),
        summary: answerSummary(this.definition, state.path, state.entries),
        model: () => {
          const model = this.agentSession?.llm;
          return model instanceof llm.LLM ? model : undefined;
        },
      }),
    );
    // No going back while a resumed call is asked again for its masked answers.
    const goBack = this.refilling
      ? undefined
      : goBackTool(this.definition, state, step, task, {
          isCurrent: (t) => this.current === t,
          jump: (to) => {
            this.jump = { to };
          },
        });
    const repairTool = this.desk?.tool(step, task);
    const extra = [goBack, repairTool].filter((t) => t !== undefined);
    if (extra.length > 0) await task.updateTools([...task.toolCtx.tools, ...extra]);
    const repaired = this.afterRepair;
    this.afterRepair = undefined;
    if (repaired?.prefill?.step === step.id && task instanceof TypedTask) {
      task.answerFirst({ text: repaired.prefill.text, modality: repaired.prefill.modality });
    }
    let line = repaired?.line;
    // Said with the question, as one turn (no gap for the caller to talk into).
    if (line !== undefined && task instanceof TypedTask && !repaired?.prefill) {
      task.prefaceWith(line);
      line = undefined;
    }
    if (line !== undefined) {
      const said = line;
      const greetFirst = before;
      before = async () => {
        await greetFirst?.();
        await this.agentSession!.say(said).waitForPlayout();
      };
    }
    this.desk?.begin(step, task);
    this.current = task;
    this.jump = undefined;
    const timer =
      step.timeoutMs === undefined
        ? undefined
        : this.call!.clock.setTimer(step.timeoutMs, () => {
            if (!task.done) {
              task.complete({
                status: 'timeout',
                attempts: 0,
                reason: `no result within ${step.timeoutMs} ms`,
              });
            }
          });
    let outcome: Outcome<unknown>;
    try {
      await before?.();
      this.idle();
      outcome = await task.run();
    } catch (error) {
      const hungUp = this.call!.hungUp;
      outcome = {
        status: hungUp ? 'hangup' : 'cancelled',
        attempts: 0,
        reason: hungUp?.reason ?? (error instanceof Error ? error.message : String(error)),
      };
    } finally {
      this.busy();
      timer?.cancel();
      this.current = undefined;
    }
    const heard = this.desk?.end();
    const counters = task instanceof TypedTask ? task.counters : ZERO;
    const spoken =
      outcome.status === 'ok' && task instanceof TypedTask && !step.masked
        ? task.spoken(outcome.value)
        : undefined;
    if (!isSessionClosing(this.agentSession) && !this.wasReplaced()) {
      // In place, as upstream's TaskGroup does (the runner never speaks, so its activity
      // needs no fresh copy after every step); calls of the step's own tools are left out,
      // as the runner's activity would leave them out.
      agentChatContext(this).merge(task.chatCtx.copy({ toolCtx: this.toolCtx }), {
        excludeInstructions: true,
      });
    }
    return {
      outcome,
      counters,
      jump: this.takeJump(),
      ...(heard ? { heard } : {}),
      ...(spoken !== undefined ? { spoken } : {}),
    };
  }

  /**
   * A speak-only step: the flow says its line itself (see ./say-step.ts), after the greeting
   * and any line a repair left to say. A line that could not be made fails the step unsaid.
   */
  private async sayStep(
    step: StepDef,
    say: (context: StepContext) => AnnounceText,
    before?: () => Promise<void>,
  ): Promise<StepRun> {
    const repairLine = this.afterRepair?.line;
    this.afterRepair = undefined;
    const made = say({ answers: this.answers() });
    this.idle();
    try {
      const lines = [repairLine, 'text' in made ? made.text : undefined];
      const said = await saySteps(
        { session: this.agentSession!, call: this.call!, timeoutMs: step.timeoutMs },
        lines.filter((l): l is string => l !== undefined),
        before,
      );
      const outcome: Outcome<unknown> =
        'reason' in made && said.status === 'ok'
          ? { status: 'invalid', attempts: 0, reason: made.reason }
          : said;
      return { outcome, counters: ZERO };
    } finally {
      this.busy();
    }
  }

  private async runNested(step: StepDef, flow: FlowDefinition): Promise<StepRun> {
    const inner = new FlowTask<unknown>(
      flow,
      {
        checkpoints: this.options.checkpoints,
        callId: this.checkpoints!.key.callId,
        checkpointKey: `${this.checkpoints!.key.flow}/${step.id}`,
        ifCompleted: 'restart',
        resumeLine: false,
        resumeWindowMs: this.options.resumeWindowMs,
        sealKeys: this.options.sealKeys,
        chatCtx: this.chatCtx.copy(),
        checkpointTimeoutMs: this.options.checkpointTimeoutMs,
      },
      true,
    );
    return nestedStepRun(flow.name, await inner.run());
  }

  private takeJump(): string | undefined {
    const to = this.jump?.to;
    this.jump = undefined;
    return to;
  }

  private answers(): Record<string, unknown> {
    return valuesOf(this.state!.entries);
  }

  /** Records a step and writes the checkpoint before the flow moves on. */
  private async commit(record: StepRecord): Promise<boolean> {
    this.state!.records.push(record);
    if (!(await this.persist(record.step))) return false;
    this.emitter.emit('step_completed', record);
    this.options.onStepCompleted?.(record);
    return true;
  }

  /** One versioned write of the state (see {@link FlowCheckpoints.persist}). */
  private persist(step?: string): Promise<boolean> {
    return this.checkpoints!.persist(this.state!, step);
  }

  private async stop(
    status: Exclude<FlowStatus, 'completed' | 'conflict'>,
    step: string,
    outcome: FailedOutcome,
    record: StepRecord,
  ): Promise<FlowResult<R>> {
    const state = this.state!;
    state.status = status;
    state.step = step;
    state.reason = outcome.reason ?? outcome.status;
    state.endedAt = this.call!.clock.now();
    state.records.push(record);
    // The position stays on this step, so a later session can resume here.
    if (!(await this.persist(step))) return this.lost();
    this.emitter.emit('step_completed', record);
    this.options.onStepCompleted?.(record);
    return this.incomplete(status, state.reason, step, outcome);
  }

  /** The flow cannot go on: the store failed, or another session advanced the call. */
  private lost(): FlowResult<R> {
    return lostResult<R>(this.state!, this.checkpoints?.io);
  }

  /** The call's checkpoint was not trusted: nothing is asked and nothing written. */
  private refused(refusal: CheckpointRefusal): FlowResult<R> {
    return refusedResult<R>(this.state!, refusal);
  }

  private completed(withheld?: string[]): FlowResult<R> {
    return completedResult<R>(this.state!, withheld);
  }

  private incomplete(
    status: Exclude<FlowStatus, 'completed'>,
    reason: string,
    step?: string,
    outcome?: FailedOutcome,
  ): FlowIncomplete<R> {
    const result = incompleteResult<R>(this.state!, status, reason, step, outcome);
    if (this.stepError) result.error = this.stepError;
    return result;
  }
}

const ZERO = { noInput: 0, noMatch: 0, invalid: 0 } as const;
