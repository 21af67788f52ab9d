/**
 * The flow runner. Over 500 lines on purpose: one AgentTask whose loop, checkpoints, go-back
 * and ending share the same run state (position, answers, version), so they read best
 * together. What has a job of its own lives beside it: checkpoint-io.ts (bounded store
 * calls), ending.ts (how the call ends), context.ts (each step's context), graph.ts (next).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, llm, voice } from '@livekit/agents';
import { z } from 'zod/v4';
import { type CallContext, callOf } from '../core/call.js';
import { TasklineError } from '../core/errors.js';
import {
  inFlowSpan,
  recordStep,
  traceCheckpoint,
  traceFlow,
  traceStep,
} from '../observability/flows.js';
import type { FailedOutcome, Outcome } from '../outcome.js';
import { emptyStream } from '../tasks/chunks.js';
import { ReplacedRun } from '../tasks/replaced.js';
import { TypedTask } from '../tasks/typed-task.js';
import { CheckpointIO } from './checkpoint-io.js';
import type { CheckpointKey, CheckpointStore, FlowState } from './checkpoints/types.js';
import { answerSummary, stepContext } from './context.js';
import { type FlowDefinition, listens, type StepDef, stepById } from './definition.js';
import { endFlowCall, type FlowEnding } from './ending.js';
import { resolveNext, type StepEntry } from './graph.js';
import { buildReport } from './report.js';
import {
  END,
  type FlowIncomplete,
  type FlowResult,
  type FlowStatus,
  type StepRecord,
  type StepResultKind,
} from './types.js';

/** What the default resume line and a custom one are told. */
export interface ResumeInfo {
  flow: string;
  callId: string;
  /** The step the call continues at. */
  step: string;
  /** That step's label, if it has one. */
  label?: string;
  /** Steps already answered (or skipped). */
  answered: number;
}

/** Emitted after every checkpoint write. */
export interface CheckpointInfo {
  flow: string;
  callId: string;
  version: number;
  status: FlowStatus | 'running';
  /** The next step to run (`'end'` once finished). */
  position: string;
  /** The step whose result the write recorded, if any. */
  step?: string;
}

/** Events of a running flow; subscribe with {@link FlowTask.on} or the run options. */
export interface FlowEvents {
  step_started: [{ step: string; visit: number }];
  step_completed: [StepRecord];
  checkpoint: [CheckpointInfo];
  resumed: [ResumeInfo];
}

/** Options for one run of a flow (`flow.create(options)` / `flow.run(options)`). */
export interface FlowRunOptions {
  /** Where to checkpoint after every step; without one nothing survives the session. */
  checkpoints?: CheckpointStore;
  /** The call to checkpoint under. Default `callOf(session).callId`. */
  callId?: string;
  /** Checkpoint key of the flow run (default the flow's name). */
  checkpointKey?: string;
  /** Chat history the flow starts from (for `'full'` and `'model-summary'` contexts). */
  chatCtx?: llm.ChatContext;
  /** What to say when a call resumes (no model); `false` says nothing. */
  resumeLine?: false | ((info: ResumeInfo) => string);
  /** A checkpoint that already completed: return its result (default) or start over. */
  ifCompleted?: 'return' | 'restart';
  /** Called after each step, once its checkpoint is written. */
  onStepCompleted?: (record: StepRecord) => void;
  /** Called after each checkpoint write. */
  onCheckpoint?: (info: CheckpointInfo) => void;
  /**
   * How the call ends once the flow does: a goodbye chosen by the result, then the bot ends
   * the call (see {@link FlowEnding}). Without it the flow just returns and the agent decides,
   * except after losing a checkpoint race (`conflict`): this session no longer owns the call,
   * so it says so and ends the call.
   */
  onEnd?: FlowEnding;
  /**
   * Longest wait for one checkpoint read or write, on the call's clock (default 10,000 ms).
   * A store that fails or stays silent ends the flow as `failed` with the answers so far and
   * the store's `error`; nothing is retried behind the caller's back.
   */
  checkpointTimeoutMs?: number;
}

const ENDS_FLOW = new Set(['hangup', 'cancelled', 'transferred']);
const DEFAULT_MAX_BACK_STEPS = 3;

/** The go-back tool's name, as models (and scripts) call it. */
export const GO_BACK_TOOL = 'go_back';

/** The default resume line: where the caller was, in words. */
export function defaultResumeLine(info: ResumeInfo): string {
  return info.label
    ? `Welcome back. We'll pick up where we left off: ${info.label}.`
    : `Welcome back. We'll pick up where we left off, at question ${info.answered + 1}.`;
}

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
  private key: CheckpointKey | undefined;
  private version = 0;
  private current: voice.AgentTask<Outcome<unknown>> | undefined;
  private jump: { to: string } | undefined;
  private call: CallContext | undefined;
  /** Kept from `onEnter`: `this.session` throws once the flow's activity has closed. */
  private agentSession: voice.AgentSession | undefined;
  private ownError: unknown;
  private io: CheckpointIO | undefined;
  private working: (() => void) | undefined;
  private runCalled = false;
  /** Another agent took the session over (`session.updateAgent`) while the flow ran. */
  private takenOver = false;
  private readonly replaced = new ReplacedRun<FlowResult<R>>();
  private readonly nested: boolean;

  /** @param nested internal: a flow run as a step of another flow never ends the call. */
  constructor(definition: FlowDefinition, options: FlowRunOptions = {}, nested = false) {
    super({
      id: definition.name,
      instructions: `Runs the steps of the "${definition.name}" flow.`,
      chatCtx: options.chatCtx,
    });
    if (
      options.checkpointTimeoutMs !== undefined &&
      !(Number.isFinite(options.checkpointTimeoutMs) && options.checkpointTimeoutMs >= 100)
    ) {
      throw new TasklineError(
        'invalid_argument',
        `checkpointTimeoutMs must be a number of at least 100 ms (got ${String(options.checkpointTimeoutMs)}).`,
      );
    }
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
      () => this.key?.callId,
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
    return session !== undefined && !session._closing && session.currentAgent !== this;
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
    this.busy();
    const key: CheckpointKey = {
      flow: this.options.checkpointKey ?? def.name,
      callId: this.options.callId ?? call.callId,
    };
    this.key = key;
    this.io = new CheckpointIO(
      this.options.checkpoints,
      key,
      call.clock,
      this.options.checkpointTimeoutMs,
    );
    const claimed = await this.claim(key, call.clock.now());
    if (claimed === 'lost') return this.lost();
    if (claimed === 'completed') return this.completed();
    const state = this.state!;
    let greet: (() => Promise<void>) | undefined;
    if (claimed === 'resumed' && state.position !== END) {
      const step = stepById(def, state.position);
      const info: ResumeInfo = {
        flow: def.name,
        callId: key.callId,
        step: state.position,
        label: step?.label,
        answered: state.path.length,
      };
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

  /**
   * Loads the call's checkpoint and claims it for this session with one versioned write.
   * A claim that loses to a session which has since stopped (its final write landed
   * between our read and our write) is retried; one that loses to a live session is lost.
   */
  private async claim(
    key: CheckpointKey,
    now: number,
  ): Promise<'fresh' | 'resumed' | 'completed' | 'lost'> {
    const io = this.io!;
    // Something to report from, should the store fail before anything is loaded.
    this.state = this.fresh(key, now);
    for (let attempt = 0; ; attempt++) {
      const loaded = await io.load();
      if (io.failure) return 'lost';
      if (loaded?.state.status === 'completed' && this.options.ifCompleted !== 'restart') {
        this.state = loaded.state;
        this.version = loaded.version;
        return 'completed';
      }
      const resumed = loaded !== undefined && loaded.state.status !== 'completed';
      this.version = loaded?.version ?? 0;
      const state = resumed ? this.restore(loaded.state) : this.fresh(key, now);
      state.owner = `${process.pid}:${randomUUID()}`;
      state.status = 'running';
      delete state.reason;
      delete state.step;
      delete state.endedAt;
      if (resumed) state.resumes += 1;
      this.state = state;
      if (await this.persist()) return resumed ? 'resumed' : 'fresh';
      if (io.failure) return 'lost';
      const current = await io.load();
      if (io.failure || attempt >= 2 || !current || current.state.status === 'running') {
        return 'lost';
      }
    }
  }

  private fresh(key: CheckpointKey, now: number): FlowState {
    return {
      flow: key.flow,
      callId: key.callId,
      status: 'running',
      position: this.definition.steps[0]!.id,
      entries: {},
      path: [],
      visits: {},
      records: [],
      backSteps: 0,
      resumes: 0,
      owner: '',
      startedAt: now,
    };
  }

  /** Re-checks restored answers against their schemas; a bad one is asked again. */
  private restore(saved: FlowState): FlowState {
    const state = structuredClone(saved);
    for (const [id, entry] of Object.entries(state.entries)) {
      const step = stepById(this.definition, id);
      const schema = step?.runner.kind === 'task' ? step.runner.schema : undefined;
      if (!step || (schema && !entry.skipped && !schema.safeParse(entry.value).success)) {
        delete state.entries[id];
      }
    }
    const kept = state.path.filter((id) => state.entries[id]);
    if (kept.length !== state.path.length) {
      // An answer no longer fits its step: continue at the first one that is missing.
      const walk = this.walk(state.entries);
      state.path = walk.path;
      state.position = walk.position;
    }
    if (state.position !== END && !stepById(this.definition, state.position)) {
      throw new TasklineError(
        'invalid_state',
        `Call "${state.callId}" was checkpointed at step "${state.position}", which flow "${this.definition.name}" no longer has: delete the checkpoint or restore the step.`,
      );
    }
    return state;
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
      const endedAt = clock.now();
      const { outcome, counters } = run;
      const record: StepRecord = {
        step: step.id,
        visit,
        startedAt,
        endedAt,
        durationMs: endedAt - startedAt,
        attempts: outcome.attempts,
        noInput: counters.noInput,
        noMatch: counters.noMatch,
        invalid: counters.invalid,
        outcome: outcome.status,
      };
      if (outcome.status === 'ok' && outcome.modality) record.modality = outcome.modality;

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
        entry = { value: outcome.value };
        kind = 'ok';
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
      let next = resolveNext(def, step, entry, this.answers());
      if (state.revisit?.step === step.id) {
        next = this.fastForward(next, state.revisit.returnTo);
        delete state.revisit;
        this.prune(next);
      } else if (!state.path.includes(step.id)) {
        state.path.push(step.id);
      }
      record.next = next;
      state.position = next;
      if (!(await this.commit(record))) return this.lost();
    }
    state.status = 'completed';
    state.endedAt = clock.now();
    if (!(await this.persist())) return this.lost();
    return this.completed();
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
    const task = step.runner.create();
    const state = this.state!;
    await task.updateChatCtx(
      await stepContext(step.context ?? this.definition.options.context ?? 'summary', {
        answers: this.answers(),
        history: this.chatCtx.copy(),
        summary: answerSummary(this.definition, state.path, state.entries),
        model: () => {
          const model = this.agentSession?.llm;
          return model instanceof llm.LLM ? model : undefined;
        },
      }),
    );
    const goBack = this.goBackTool(step, task);
    if (goBack) await task.updateTools([...task.toolCtx.tools, goBack]);
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
    const counters = task instanceof TypedTask ? task.counters : ZERO;
    if (!this.agentSession?._closing && !this.wasReplaced()) {
      await this.updateChatCtx(
        this.chatCtx.copy().merge(task.chatCtx.copy(), { excludeInstructions: true }),
      );
    }
    return { outcome, counters, jump: this.takeJump() };
  }

  private async runNested(step: StepDef, flow: FlowDefinition): Promise<StepRun> {
    const inner = new FlowTask<unknown>(
      flow,
      {
        checkpoints: this.options.checkpoints,
        callId: this.key!.callId,
        checkpointKey: `${this.key!.flow}/${step.id}`,
        ifCompleted: 'restart',
        resumeLine: false,
        chatCtx: this.chatCtx.copy(),
        checkpointTimeoutMs: this.options.checkpointTimeoutMs,
      },
      true,
    );
    const result = await inner.run();
    const t = result.report.totals;
    const counters = { noInput: t.noInput, noMatch: t.noMatch, invalid: t.invalid };
    if (result.status === 'completed') {
      return { outcome: { status: 'ok', value: result.value, attempts: 1 }, counters };
    }
    const status =
      result.status === 'hangup' || result.status === 'transferred'
        ? result.status
        : result.status === 'cancelled' || result.status === 'conflict'
          ? 'cancelled'
          : (result.outcome?.status ?? 'maxRetries');
    return {
      outcome: { status, attempts: t.attempts, reason: `${flow.name}: ${result.reason}` },
      counters,
    };
  }

  /** The `go_back` tool for a step, when the caller has somewhere to go back to. */
  private goBackTool(
    step: StepDef,
    task: voice.AgentTask<Outcome<unknown>>,
  ): llm.ToolContextEntry | undefined {
    const state = this.state!;
    const max = this.definition.options.maxBackSteps ?? DEFAULT_MAX_BACK_STEPS;
    if (!listens(step) || state.backSteps >= max) return undefined;
    const targets = state.path.filter(
      (id) => id !== step.id && stepById(this.definition, id)?.canRevisit,
    );
    if (targets.length === 0) return undefined;
    const described = Object.fromEntries(
      targets.map((id) => [id, stepById(this.definition, id)?.label ?? id]),
    );
    return llm.tool({
      name: GO_BACK_TOOL,
      description:
        'Call this when the caller wants to change an answer they gave earlier. ' +
        `Pass the id of the step to return to. Steps they can return to: ${JSON.stringify(described)}`,
      flags: llm.ToolFlag.IGNORE_ON_ENTER,
      parameters: z.object({
        step: z.enum(targets as [string, ...string[]]).describe('The step to return to'),
      }),
      execute: async ({ step: target }: { step: string }) => {
        if (this.current !== task || task.done) {
          throw new llm.ToolError('This question is already finished; nothing to go back from.');
        }
        this.jump = { to: target };
        // An outcome, not an Error: the caller's turn then ends normally (an Error would
        // become the run's final output and reject it).
        task.complete({ status: 'cancelled', attempts: 0, reason: `went back to ${target}` });
      },
    });
  }

  private takeJump(): string | undefined {
    const to = this.jump?.to;
    this.jump = undefined;
    return to;
  }

  /** After a revisit: skip ahead over answers that still apply, up to where the caller was. */
  private fastForward(from: string, stopAt: string | undefined): string {
    const state = this.state!;
    let cur = from;
    const seen = new Set<string>();
    while (cur !== END && cur !== stopAt && state.entries[cur] && !seen.has(cur)) {
      seen.add(cur);
      cur = resolveNext(
        this.definition,
        stepById(this.definition, cur)!,
        state.entries[cur]!,
        this.answers(),
      );
    }
    return cur;
  }

  /** Drops answers the new path no longer passes through. */
  private prune(position: string): void {
    const state = this.state!;
    const walk = this.walk(state.entries, position);
    for (const id of Object.keys(state.entries)) {
      if (!walk.path.includes(id)) delete state.entries[id];
    }
    state.path = walk.path;
  }

  /** The path the answers take from the first step, up to `until` or the first gap. */
  private walk(
    entries: Record<string, StepEntry>,
    until?: string,
  ): { path: string[]; position: string } {
    const path: string[] = [];
    let cur = this.definition.steps[0]!.id;
    const answers = valuesOf(entries);
    while (cur !== END && cur !== until && entries[cur] && !path.includes(cur)) {
      path.push(cur);
      cur = resolveNext(this.definition, stepById(this.definition, cur)!, entries[cur]!, answers);
    }
    return { path, position: cur };
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

  /**
   * One versioned write; false when another session advanced the call first, or when the
   * store failed (see {@link CheckpointIO}).
   */
  private async persist(step?: string): Promise<boolean> {
    const io = this.io!;
    const state = this.state!;
    if (!io.enabled) return true;
    const written = await traceCheckpoint(this.key!.flow, step, () => io.save(state, this.version));
    if (written === undefined) return false;
    this.version = written;
    const info: CheckpointInfo = {
      flow: this.key!.flow,
      callId: this.key!.callId,
      version: this.version,
      status: state.status,
      position: state.position,
      ...(step ? { step } : {}),
    };
    this.emitter.emit('checkpoint', info);
    this.options.onCheckpoint?.(info);
    return true;
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
    const error = this.io?.errorInfo();
    if (error) {
      const position = this.state!.position;
      return {
        ...this.incomplete(
          'failed',
          `the checkpoint store failed: ${error.message}`,
          position === END ? undefined : position,
        ),
        error,
      };
    }
    return this.incomplete(
      'conflict',
      this.io?.conflict?.message ?? 'another session advanced this call',
    );
  }

  private completed(): FlowResult<R> {
    const state = this.state!;
    const value = this.answers() as R;
    return { status: 'completed', value, answers: { ...value }, report: buildReport(state) };
  }

  private incomplete(
    status: Exclude<FlowStatus, 'completed'>,
    reason: string,
    step?: string,
    outcome?: FailedOutcome,
  ): FlowIncomplete<R> {
    const state = this.state!;
    const report = buildReport({ ...state, status });
    return {
      status,
      answers: this.answers() as Partial<R>,
      reason,
      report,
      ...(step ? { step } : {}),
      ...(outcome ? { outcome } : {}),
    };
  }
}

interface StepRun {
  outcome: Outcome<unknown>;
  counters: { noInput: number; noMatch: number; invalid: number };
  /** Set when the caller went back to another step. */
  jump?: string;
}

const ZERO = { noInput: 0, noMatch: 0, invalid: 0 } as const;

function valuesOf(entries: Record<string, StepEntry>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [id, entry] of Object.entries(entries)) {
    if (!entry.skipped && entry.value !== undefined) out[id] = entry.value;
  }
  return out;
}
