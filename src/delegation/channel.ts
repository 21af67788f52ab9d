/**
 * Delivery of task completions into a call, built on upstream async tools: the `task` tool
 * runs on the executor of a session-scoped `llm.AsyncToolset` (owning activity: none), so
 * `ctx.update` releases the turn and a handoff or an inline task does not drain it. A
 * completion is held by the call's {@link Floor} until a safe moment (never between a
 * question and its answer, unless the host asks for that) and spoken then, synchronously,
 * by the agent current at that moment: its fixed line with `say`, or a reply its model
 * words from the result (several results in one reply).
 */
import { llm, voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { logLine } from '../core/log.js';
import { attachSessionToolset, type ToolsetExecutor } from '../upstream/internals.js';
import { type DeliverAt, Floor, type FloorMoment } from './floor.js';

/** One completion waiting to be spoken. */
export interface DeliveryEntry {
  taskId: string;
  /** What the model is told (also the function output recorded in the history). */
  text: string;
  /** Words to say as they are (no model call), when the host gave the task a result line. */
  line?: string;
  /** The model's call that started the task, if any (the recorded call is named after it). */
  origin?: voice.RunContext<unknown>;
  /** Called once, when the entry has been spoken (its reply generated). */
  onDelivered: () => void;
  /** Called when the entry will never be spoken (the call ended while it was held). */
  onDropped?: () => void;
}

/** Renders the instructions of a deferred reply from the entries it carries. */
export type ReplyInstructions = (entries: DeliveryEntry[], maybeCovered: boolean) => string;

/** The default instructions for speaking completed tasks. */
export const defaultReplyInstructions: ReplyInstructions = (entries, maybeCovered) =>
  [
    `Delegated task results are ready (${entries.map((e) => e.taskId).join(', ')}):`,
    ...entries.map((e) => `- ${e.text}`),
    'Tell the caller now, briefly and naturally: one or two sentences per task. Do not read',
    'file paths or task ids aloud unless asked.',
    maybeCovered
      ? 'If you already told the caller all of this, reply with nothing; never repeat yourself.'
      : 'Do not repeat anything you already told the caller.',
  ].join('\n');

type Executor = ToolsetExecutor;
type ExecuteArgs = Parameters<Executor['execute']>[0];

/**
 * A call's delivery channel: one per attached session. Never reaches another session:
 * everything it delivers goes to the session it was created for.
 */
export class DeliveryChannel {
  readonly session: voice.AgentSession;
  readonly #toolset: llm.AsyncToolset;
  readonly #executor: Executor;
  readonly #pending = new Map<string, DeliveryEntry>();
  readonly #instructions: ReplyInstructions;
  readonly #floor: Floor<DeliveryEntry>;
  #serial = 0;
  #closed = false;

  constructor(
    session: voice.AgentSession,
    instructions: ReplyInstructions = defaultReplyInstructions,
    deliverAt: DeliverAt = 'step',
  ) {
    this.session = session;
    this.#instructions = instructions;
    this.#floor = new Floor(session, callOf(session), deliverAt, {
      speak: (held, moment) => this.#speak(held, moment),
    });
    this.#toolset = llm.AsyncToolset.create({
      id: 'taskline_delegation',
      tools: [],
      toolHandling: {
        asyncOptions: {
          // Updates are rendered by the manager already.
          updateTemplate: '{message}',
          replyAtTailTemplate: ({ callIds }) => this.#render(callIds, false),
          replyMaybeCoveredTemplate: ({ callIds }) => this.#render(callIds, true),
        },
      },
    });
    // What the activity does for a session-level async toolset: no owning activity, so
    // results follow the session's current agent.
    this.#executor = attachSessionToolset(this.#toolset, session);
  }

  /** True once closed: nothing more is delivered. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Runs `tool` as the async continuation of the model's tool call `outer`: resolves with
   * the tool's value, or with the first `ctx.update` message when the tool releases the
   * turn (the tool then keeps running and its final value becomes a deferred reply).
   */
  run(tool: llm.FunctionTool, outer: llm.ToolOptions<unknown>): Promise<unknown> {
    const runCtx = new voice.RunContext(
      outer.ctx.session,
      outer.ctx.speechHandle,
      outer.ctx.functionCall,
    );
    return this.#executor.execute({
      tool,
      runCtx,
      rawArguments: {},
      abortSignal: outer.abortSignal,
    } as ExecuteArgs);
  }

  /** Completions held for a safe moment (see {@link Floor}). */
  get held(): readonly DeliveryEntry[] {
    return this.#floor.held;
  }

  /**
   * Delivers completions no running tool call will return (the manager claimed them): held
   * until a safe moment of the call, then spoken by the agent current then.
   */
  deliver(entries: readonly DeliveryEntry[]): void {
    if (this.#closed || entries.length === 0) return;
    this.#floor.hold(entries);
  }

  /** Speaks what it can of `held` at `moment`; returns the rest (to be held again). */
  #speak(held: DeliveryEntry[], moment: FloorMoment): DeliveryEntry[] {
    const lines = held.filter((e) => e.line !== undefined);
    const worded = held.filter((e) => e.line === undefined);
    const rest: DeliveryEntry[] = [];
    let spoke = false;
    for (const entry of lines) {
      if (this.#say(entry, moment.agent)) spoke = true;
      else rest.push(entry);
    }
    // Only a model that may speak now words a result: never a capture's (it would take the
    // reply for a question of its own) unless the host asked to interrupt, never a closing one.
    const agent = moment.agent;
    const canWord =
      agent !== undefined &&
      moment.kind !== 'boundary' &&
      (moment.kind === 'interrupt' || !(agent instanceof voice.AgentTask));
    if (worded.length > 0 && canWord && this.#generate(worded, agent)) spoke = true;
    else rest.push(...worded);
    if (spoke && moment.kind === 'interrupt' && moment.question) {
      // The question was open: ask it again, so its answer still has its question.
      this.#trySay(moment.question);
    }
    return rest;
  }

  /** Says an entry's fixed line now; false when the session cannot speak. */
  #say(entry: DeliveryEntry, agent: voice.Agent | undefined): boolean {
    const items = this.#items(entry);
    if (!this.#trySay(entry.line!)) return false;
    this.#record(items, agent);
    entry.onDelivered();
    return true;
  }

  #trySay(text: string): boolean {
    try {
      this.session.say(text);
      return true;
    } catch (error) {
      logLine('taskline.delegation', 'debug', 'could not speak a result now', {
        reason: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
  }

  /**
   * Asks the current agent's model to tell the caller about `entries` (one reply), the way
   * upstream delivers an async tool's result: the calls and outputs are added to the agent's
   * context, and the reply is generated with no tools; delivered once it is generated.
   */
  #generate(entries: DeliveryEntry[], agent: voice.Agent): boolean {
    const items = entries.flatMap((e) => this.#items(e));
    try {
      this.#record(items, agent);
      this.session.generateReply({
        instructions: this.#instructions(entries, false),
        toolChoice: 'none',
      });
    } catch (error) {
      logLine('taskline.delegation', 'debug', 'could not word a result now', {
        reason: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
    for (const entry of entries) entry.onDelivered();
    return true;
  }

  /** The function call and output that record an entry in the history. */
  #items(entry: DeliveryEntry): [llm.FunctionCall, llm.FunctionCallOutput] {
    this.#serial += 1;
    const origin = entry.origin?.functionCall;
    const callId = `${origin?.callId ?? `taskline_${entry.taskId}`}_result_${this.#serial}`;
    const name = origin?.name ?? 'task';
    const call = llm.FunctionCall.create({
      callId,
      name,
      args: origin?.args ?? JSON.stringify({ task_id: entry.taskId }),
    });
    const output = llm.FunctionCallOutput.create({
      callId,
      name,
      output: entry.text,
      isError: false,
    });
    return [call, output];
  }

  /** Adds `items` to the agent's context (synchronously for pipeline models) and the history. */
  #record(items: llm.ChatItem[], agent: voice.Agent | undefined): void {
    if (agent) {
      const ctx = agent.chatCtx.copy();
      ctx.insert(items);
      void agent.updateChatCtx(ctx).catch(() => undefined);
    }
    this.session.history.insert(items);
  }

  #render(callIds: readonly string[], maybeCovered: boolean): string {
    const entries: DeliveryEntry[] = [];
    for (const id of callIds) {
      const entry = this.#pending.get(id);
      if (!entry) continue;
      this.#pending.delete(id);
      entries.push(entry);
    }
    for (const entry of entries) entry.onDelivered();
    if (entries.length === 0) {
      return `New results arrived from background tool calls (call_ids: ${callIds.join(', ')}). Summarize them briefly.`;
    }
    return this.#instructions(entries, maybeCovered);
  }

  /**
   * Stops delivering and releases the executor (after the manager stopped its tasks).
   * Returns the completions that were still held (never spoken).
   */
  async close(): Promise<DeliveryEntry[]> {
    if (this.#closed) return [];
    this.#closed = true;
    this.#pending.clear();
    const unspoken = this.#floor.close();
    await this.#toolset.aclose();
    return unspoken;
  }
}
