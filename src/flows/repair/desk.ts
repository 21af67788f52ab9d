/**
 * Hearing a flow's repair patterns while a step is asked. The desk is the flow's turn
 * interceptor on the call: the step's capture offers it every caller turn (and every key the
 * question does not take) before its own parser, and the desk answers with what the capture
 * does — the question again, or the end of the step. What a request that ended a step means
 * for the flow (go back, end the call, transfer) is kept as pending for the runner. A step
 * whose task asks a model also gets the `repair_request` tool, for requests no phrase
 * matcher knows; it never overrides a parser's reading, because the model is only asked
 * for words no parser read.
 *
 * Precedence, so a wrong answer is never taken for a request nor a request for an answer:
 * 1. a key the question takes (a digit at a digits or number question, a menu's own keys)
 *    is its input: 0 at a PIN is a digit, not "a person";
 * 2. words the question's own parser reads as its answer are the answer ("no" at a yes/no
 *    question is not a cancel; "zero" at a digits question is a digit) — except a correction
 *    that names another, earlier answer and whose words that step's parser reads ("my zip
 *    code is 94110" asked for a date is about the zip code);
 * 3. then the requests, matched on the whole utterance (see parsers/repair.ts).
 */
import { llm, type voice } from '@livekit/agents';
import { z } from 'zod/v4';
import type { InputModality } from '../../core/call.js';
import type { InterceptedTurn, TurnAction, TurnInterceptor } from '../../core/interception.js';
import type { Outcome } from '../../outcome.js';
import { repair as readRepair } from '../../tasks/parsers/repair.js';
import { TypedTask } from '../../tasks/typed-task.js';
import type { TaskSpec } from '../../tasks/typed-task-spec.js';
import type { FlowState } from '../checkpoints/types.js';
import { type FlowDefinition, type StepDef, stepById } from '../definition.js';
import { DEFAULT_MAX_BACK_STEPS, isHeld } from '../navigation.js';
import type { FlowRepair } from '../types.js';
import { allows, correctable, type RepairKind, stepNames } from './config.js';

/** The model's tool for repair requests no phrase matcher heard. */
export const REPAIR_TOOL = 'repair_request';

/** A request that ended a step, for the runner to act on once the step's task has ended. */
export type PendingRepair =
  /** Go back to `target`; with `answer`, read it there first (a correction with its value). */
  | { kind: 'correct'; target: string; answer?: { text: string; modality: InputModality } }
  | { kind: 'cancel' }
  | { kind: 'human' };

/** What a step's run heard: every request, in order, and the one that ended it. */
export interface HeardRepairs {
  repairs: RepairKind[];
  pending?: PendingRepair;
}

/** What the desk asks of the running flow. */
export interface DeskHooks {
  /** The flow's state now. */
  state(): FlowState;
  /** The call's clock time (parsers resolve "tomorrow" against it). */
  now(): number;
  /** False while earlier answers cannot be changed (a resumed call asking masked ones again). */
  canGoBack(): boolean;
}

/** Why a step ended, as its outcome's reason says. */
export const REPAIR_REASONS = {
  correct: (step: string) => `the caller corrected "${step}"`,
  skip: 'the caller skipped the question',
  cancel: 'the caller asked to end the call',
  human: 'the caller asked for a person',
} as const;

type StepTask = voice.AgentTask<Outcome<unknown>>;

/** One flow run's ears for repair requests (see the module comment). */
export class RepairDesk implements TurnInterceptor {
  private step: StepDef | undefined;
  private task: StepTask | undefined;
  private heard: RepairKind[] = [];
  private pending: PendingRepair | undefined;
  /** Parsers of the steps asked in this run, for corrections of their answers. */
  private readonly specs = new Map<string, TaskSpec<unknown>>();
  private readonly toolSchemas = new Map<string, z.ZodObject>();
  /** Set once a transfer on request failed: asking again says no one is available. */
  humanUnavailable = false;

  constructor(
    private readonly def: FlowDefinition,
    private readonly repair: FlowRepair,
    private readonly hooks: DeskHooks,
  ) {}

  /** A step's task is about to run: the desk hears its caller from now on. */
  begin(step: StepDef, task: StepTask): void {
    this.step = step;
    this.task = task;
    this.heard = [];
    this.pending = undefined;
    if (task instanceof TypedTask) this.specs.set(step.id, task.spec as TaskSpec<unknown>);
  }

  /** The step's task ended: what it heard, and the request (if any) that ended it. */
  end(): HeardRepairs {
    const out: HeardRepairs = { repairs: this.heard };
    if (this.pending) out.pending = this.pending;
    this.step = undefined;
    this.task = undefined;
    this.heard = [];
    this.pending = undefined;
    return out;
  }

  intercept(turn: InterceptedTurn): TurnAction | undefined {
    const step = this.step;
    if (!step || turn.task !== this.task) return undefined;
    if (turn.modality === 'dtmf') return this.key(step, turn.text);
    const targets = allows(this.repair, step, 'correct') ? this.targets(step) : [];
    const read = readRepair(turn.text, {
      humanWords: this.repair.human ? this.repair.human.words : [],
      openAnswer: turn.open === true,
      // The step's own names too: "my zip code is …" asked for the zip code is its answer.
      steps: [...targets, step].map((s) => ({ id: s.id, names: stepNames(s) })),
    });
    if (read.kind !== 'match') return undefined;
    const request = read.value;
    if (request.kind === 'correct') {
      if (request.step === step.id) return undefined;
      const target = targets.find((t) => t.id === request.step);
      if (!target) return undefined;
      if (request.answer !== undefined) {
        if (!this.reads(target, request.answer, turn.modality)) return undefined;
        return this.correct(target, { text: request.answer, modality: turn.modality });
      }
      return turn.answers ? undefined : this.correct(target);
    }
    if (turn.answers || !allows(this.repair, step, request.kind)) return undefined;
    return this.act(step, request.kind);
  }

  /**
   * The `repair_request` tool for a step's model, when the step hears any repair: for
   * requests the phrase matchers missed ("could I have a word with someone who works
   * there?"). A capture asks its model only for words no parser read, so the tool never
   * overrides a parser's reading.
   */
  tool(step: StepDef, task: StepTask): llm.ToolContextEntry | undefined {
    const kinds = (['repeat', 'skip', 'cancel', 'human'] as const).filter((k) =>
      allows(this.repair, step, k),
    );
    const targets = allows(this.repair, step, 'correct') ? this.targets(step).map((s) => s.id) : [];
    const requests: string[] = [...kinds, ...(targets.length > 0 ? ['correct'] : [])];
    if (requests.length === 0) return undefined;
    return llm.tool({
      name: REPAIR_TOOL,
      description:
        'Call this only when the caller asks for something other than answering the question: ' +
        'to hear it again (repeat), to skip it (skip), to end the call (cancel), to talk to a ' +
        'person (human), or to change an earlier answer (correct: name its step, and pass their ' +
        `new answer in their own words if they gave it). Earlier answers: ${JSON.stringify(
          Object.fromEntries(targets.map((id) => [id, stepById(this.def, id)?.label ?? id])),
        )}`,
      flags: llm.ToolFlag.IGNORE_ON_ENTER,
      parameters: this.toolParameters(requests, targets),
      execute: async (args: Record<string, unknown>) =>
        this.onTool(step, task, args as { request: string; step?: string; answer?: string }),
    });
  }

  private onTool(
    step: StepDef,
    task: StepTask,
    args: { request: string; step?: string; answer?: string },
  ): string | undefined {
    if (this.task !== task || task.done) {
      throw new llm.ToolError('This question is already finished.');
    }
    if (args.request === 'correct') {
      const target = this.targets(step).find((t) => t.id === args.step);
      if (!target) {
        throw new llm.ToolError('Name the step of the earlier answer the caller wants to change.');
      }
      const answer = args.answer?.trim();
      const given =
        answer && this.reads(target, answer, 'speech')
          ? { text: answer, modality: 'speech' as const }
          : undefined;
      return this.finishBy(task, this.correct(target, given));
    }
    const kind = args.request as Exclude<RepairKind, 'correct'>;
    const action = this.act(step, kind);
    if (action.kind === 'end') return this.finishBy(task, action);
    // Said by the model itself, in its words.
    return action.preface
      ? `Tell the caller: "${action.preface}" Then ask your question again.`
      : 'Ask your last question again, word for word.';
  }

  /** Ends the step's task as an interceptor's `end` would (the tool runs inside it). */
  private finishBy(task: StepTask, action: TurnAction): undefined {
    if (action.kind === 'end')
      task.complete({ status: action.status, attempts: 0, reason: action.reason });
    return undefined;
  }

  /** A key the question does not take: a person, or the question again. */
  private key(step: StepDef, key: string): TurnAction | undefined {
    const { human, repeat } = this.repair;
    if (human && human.key === key && allows(this.repair, step, 'human')) {
      return this.act(step, 'human');
    }
    if (repeat && repeat.key === key && allows(this.repair, step, 'repeat')) {
      return this.act(step, 'repeat');
    }
    return undefined;
  }

  /** What the capture does for a request (and what the runner does once it ends). */
  private act(step: StepDef, kind: Exclude<RepairKind, 'correct'>): TurnAction {
    this.heard.push(kind);
    const lines = this.repair.lines;
    switch (kind) {
      case 'repeat':
        return { kind: 'repeat' };
      case 'skip':
        return step.skippable
          ? { kind: 'end', status: 'declined', reason: REPAIR_REASONS.skip }
          : { kind: 'repeat', preface: lines.cannotSkip };
      case 'cancel':
        this.pending = { kind: 'cancel' };
        return { kind: 'end', status: 'cancelled', reason: REPAIR_REASONS.cancel };
      case 'human':
        if (this.humanUnavailable) return { kind: 'repeat', preface: lines.humanUnavailable };
        this.pending = { kind: 'human' };
        return { kind: 'end', status: 'cancelled', reason: REPAIR_REASONS.human };
    }
  }

  private correct(target: StepDef, answer?: { text: string; modality: InputModality }): TurnAction {
    this.heard.push('correct');
    this.pending = { kind: 'correct', target: target.id, ...(answer ? { answer } : {}) };
    return { kind: 'end', status: 'cancelled', reason: REPAIR_REASONS.correct(target.id) };
  }

  /** True when the target step's own parser reads `text` as an answer. */
  private reads(target: StepDef, text: string, modality: InputModality): boolean {
    const spec = this.specOf(target);
    try {
      return spec?.parse?.(text, { now: this.hooks.now(), modality }).kind === 'match';
    } catch {
      return false;
    }
  }

  private specOf(step: StepDef): TaskSpec<unknown> | undefined {
    const seen = this.specs.get(step.id);
    if (seen) return seen;
    const spec = (step.source as { spec?: unknown } | undefined)?.spec;
    return typeof spec === 'object' && spec !== null && 'schema' in spec
      ? (spec as TaskSpec<unknown>)
      : undefined;
  }

  /**
   * The earlier answers a caller may correct from `step`: on the path before it, held, on
   * steps that allow it, while go-backs remain (`maxBackSteps`).
   */
  private targets(step: StepDef): StepDef[] {
    if (!this.hooks.canGoBack()) return [];
    const state = this.hooks.state();
    const max = this.def.options.maxBackSteps ?? DEFAULT_MAX_BACK_STEPS;
    if (state.backSteps >= max) return [];
    const at = state.path.indexOf(step.id);
    const before = at >= 0 ? state.path.slice(0, at) : state.path;
    return before
      .map((id) => stepById(this.def, id))
      .filter(
        (s): s is StepDef =>
          s !== undefined &&
          s.id !== step.id &&
          correctable(this.def, s) &&
          isHeld(state.entries[s.id]),
      );
  }

  /** The tool's parameters for these requests and targets (built once per set). */
  private toolParameters(requests: string[], targets: string[]): z.ZodObject {
    const key = `${requests.join(',')}|${targets.join(',')}`;
    let schema = this.toolSchemas.get(key);
    if (!schema) {
      schema = z.object({
        request: z.enum(requests as [string, ...string[]]).describe('What the caller asks for'),
        ...(targets.length > 0
          ? {
              step: z
                .enum(targets as [string, ...string[]])
                .optional()
                .describe('For correct: the step of the earlier answer'),
              answer: z
                .string()
                .max(500)
                .optional()
                .describe("For correct: the caller's new answer, in their words"),
            }
          : {}),
      });
      this.toolSchemas.set(key, schema);
    }
    return schema;
  }
}
