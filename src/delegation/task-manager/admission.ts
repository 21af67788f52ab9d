/**
 * Admission: whether a task may start, and when. Checks a request (known sub-agent, depth,
 * who may start a voice specialist, model choice, the conversation it continues) and holds
 * the caps: top-level tasks running at once and the queue of those waiting for a slot.
 */
import type { llm } from '@livekit/agents';
import { TasklineError } from '../../core/errors.js';
import { type AnySubAgent, isVoiceSpecialist, type SubAgentSpec } from '../subagent.js';
import type { TaskManagerOptions } from './options.js';
import type { Conversation, CreateRequest, TaskState } from './state.js';

/** What a checked request resolves to. */
export interface AdmittedRequest {
  description: string;
  spec: AnySubAgent;
  voiceTask: boolean;
  /** The model chosen by name, if any. */
  model: llm.LLM | undefined;
  /** The earlier conversation this task continues, if any. */
  conversation: Conversation | undefined;
  resumedFrom: string | undefined;
}

/** What {@link checkRequest} consults. */
export interface RequestContext {
  types: ReadonlyMap<string, AnySubAgent>;
  tasks: ReadonlyMap<string, TaskState>;
  maxDepth: number;
  /** The default model, model override and models to choose from. */
  options: Pick<TaskManagerOptions, 'llm' | 'allowModelOverride' | 'models'>;
}

/**
 * Checks a request before anything is created; throws a TasklineError the model (or host)
 * can act on. `fromCall` is true when the voice agent's own `task` call asks.
 */
export function checkRequest(
  req: CreateRequest,
  fromCall: boolean,
  ctx: RequestContext,
): AdmittedRequest {
  const description = req.description?.trim();
  if (!description) {
    throw new TasklineError(
      'invalid_argument',
      'description is required: a short title of the task, e.g. "Check the refund policy".',
    );
  }
  const spec = ctx.types.get(req.subagentType);
  if (!spec) {
    throw new TasklineError(
      'not_found',
      `There is no sub-agent "${req.subagentType}". Choose one of: ${[...ctx.types.keys()].join(', ')}.`,
    );
  }
  if (req.depth > ctx.maxDepth) {
    throw new TasklineError(
      'limit_exceeded',
      `Delegation is limited to ${ctx.maxDepth} level(s) (maxDepth); do this part yourself.`,
      { maxDepth: ctx.maxDepth },
    );
  }
  const voiceTask = isVoiceSpecialist(spec);
  if (voiceTask && (req.origin !== 'tool' || !fromCall)) {
    throw new TasklineError(
      'invalid_argument',
      `"${spec.name}" is a voice specialist: it talks to the caller, so only the voice agent can start it, with the task tool during the call.`,
    );
  }
  const headless = voiceTask ? undefined : (spec as SubAgentSpec<unknown>);
  if (headless && !headless.run && !headless.llm && !ctx.options.llm && !req.model) {
    throw new TasklineError(
      'invalid_state',
      `No model for sub-agent "${spec.name}": pass llm to the TaskManager or to the sub-agent.`,
    );
  }
  const model = req.model ? chooseModel(req.model, ctx) : undefined;
  const earlier = req.taskId ? continuedConversation(req, spec, ctx) : undefined;
  return {
    description,
    spec,
    voiceTask,
    model,
    conversation: earlier?.conversation,
    resumedFrom: earlier?.id,
  };
}

function chooseModel(name: string, ctx: RequestContext): llm.LLM {
  if (ctx.options.allowModelOverride !== true) {
    throw new TasklineError(
      'invalid_argument',
      'Choosing a model is turned off for this assistant (allowModelOverride is false); leave model out.',
    );
  }
  const model = ctx.options.models?.[name];
  if (!model) {
    throw new TasklineError(
      'not_found',
      `There is no model "${name}". Choose one of: ${Object.keys(ctx.options.models ?? {}).join(', ')}.`,
    );
  }
  return model;
}

/** The conversation of the earlier task `req.taskId`, when it may be continued. */
function continuedConversation(
  req: CreateRequest,
  spec: AnySubAgent,
  ctx: RequestContext,
): { id: string; conversation: Conversation } {
  const earlier = ctx.tasks.get(req.taskId ?? '');
  if (!earlier || earlier.snap.parentId !== req.parentId) {
    throw new TasklineError(
      'not_found',
      `There is no task "${req.taskId}" to continue; call task_status to list them.`,
    );
  }
  if (!earlier.conversation) {
    throw new TasklineError(
      'invalid_argument',
      `Task ${req.taskId} was a voice specialist; start a new task instead.`,
    );
  }
  if (earlier.snap.subagentType !== spec.name) {
    throw new TasklineError(
      'invalid_argument',
      `Task ${req.taskId} was run by "${earlier.snap.subagentType}", not "${spec.name}"; use the same subagent_type to continue it.`,
    );
  }
  if (earlier.conversation.busy) {
    throw new TasklineError(
      'invalid_state',
      `Task ${req.taskId}'s sub-agent is still working; wait for its result or cancel it first.`,
    );
  }
  return { id: earlier.snap.id, conversation: earlier.conversation };
}

/**
 * The slots of top-level tasks (those the voice agent or host started; nested tasks run in
 * their parent's slot) and the queue of tasks waiting for one, in arrival order.
 */
export class Slots {
  readonly #queue: TaskState[] = [];
  #running = 0;

  constructor(
    readonly maxParallel: number,
    readonly queueLimit: number,
  ) {}

  /**
   * True when a new task at `depth` must wait for a slot; throws `limit_exceeded` when the
   * queue is full as well.
   */
  mustQueue(depth: number): boolean {
    if (depth !== 1 || this.#running < this.maxParallel) return false;
    if (this.#queue.length >= this.queueLimit) {
      throw new TasklineError(
        'limit_exceeded',
        this.queueLimit === 0
          ? `${this.maxParallel} task(s) are already running (maxParallel ${this.maxParallel}). Wait for one to finish, or cancel one with task_cancel.`
          : `${this.maxParallel} task(s) are running and ${this.#queue.length} are waiting (maxParallel ${this.maxParallel}, queueLimit ${this.queueLimit}). Wait for one to finish, or cancel one with task_cancel.`,
        { maxParallel: this.maxParallel, queueLimit: this.queueLimit },
      );
    }
    return true;
  }

  /** Puts a task at the end of the queue. */
  enqueue(task: TaskState): void {
    this.#queue.push(task);
  }

  /** Takes a task out of the queue (cancelled or timed out while waiting). */
  drop(task: TaskState): void {
    const at = this.#queue.indexOf(task);
    if (at >= 0) this.#queue.splice(at, 1);
  }

  /** Marks a task running, taking a slot when it is top level. */
  begin(task: TaskState, now: number): void {
    if (task.snap.depth === 1) this.#running += 1;
    task.snap.status = 'running';
    task.snap.startedAt = now;
  }

  /** Gives back the slot of a task that is ending (call before its status changes). */
  end(task: TaskState): void {
    if (task.snap.status === 'running' && task.snap.depth === 1) this.#running -= 1;
  }

  /** Starts queued tasks, oldest first, while slots are free. */
  pump(run: (task: TaskState) => void): void {
    while (this.#queue.length > 0 && this.#running < this.maxParallel) {
      const next = this.#queue.shift();
      if (next && !next.finishing) run(next);
    }
  }
}
