/**
 * Delivery of task completions into a call, built on upstream async tools: the `task` tool
 * runs on the executor of a session-scoped `llm.AsyncToolset` (owning activity: none), so
 * `ctx.update` releases the turn, a handoff or an inline task does not drain it, and every
 * final value — or a completion with no waiting tool call — goes through upstream's
 * deferred reply: inserted into the agent current at that moment and spoken once the line
 * is idle, several results coalesced into one reply.
 */
import { llm, voice } from '@livekit/agents';
import { attachSessionToolset, type ToolsetExecutor } from '../upstream/internals.js';

/** One completion waiting to be spoken. */
export interface DeliveryEntry {
  taskId: string;
  /** What the model is told (also the function output recorded in the history). */
  text: string;
  /** Called once, when the deferred reply carrying this entry is generated. */
  onDelivered: () => void;
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
  #serial = 0;
  #closed = false;

  constructor(
    session: voice.AgentSession,
    instructions: ReplyInstructions = defaultReplyInstructions,
  ) {
    this.session = session;
    this.#instructions = instructions;
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

  /** Announces that the final value of the running call `callId` carries `entry`. */
  expectFinal(callId: string, entry: DeliveryEntry): void {
    this.#pending.set(`${callId}_final`, entry);
  }

  /**
   * Delivers a completion that no running tool call will return: a task whose call was
   * interrupted, or one the host started. `origin` is the model's original call, if any.
   */
  async announce(entry: DeliveryEntry, origin?: voice.RunContext<unknown>): Promise<void> {
    if (this.#closed) return;
    this.#serial += 1;
    const ctx =
      origin ??
      new voice.RunContext(
        this.session,
        voice.SpeechHandle.create(),
        llm.FunctionCall.create({
          callId: `taskline_${entry.taskId}`,
          name: 'task',
          args: JSON.stringify({ task_id: entry.taskId }),
        }),
      );
    const callId = `${ctx.functionCall.callId}_result_${this.#serial}`;
    const call = llm.FunctionCall.create({
      callId,
      name: ctx.functionCall.name,
      args: ctx.functionCall.args,
    });
    const output = llm.FunctionCallOutput.create({
      callId,
      name: call.name,
      output: entry.text,
      isError: false,
    });
    this.#pending.set(callId, entry);
    try {
      await this.#executor.enqueueReply(ctx, [call, output]);
    } catch {
      // The session is closing: there is no agent left to tell.
      this.#pending.delete(callId);
    }
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

  /** Stops delivering and releases the executor (after the manager stopped its tasks). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending.clear();
    await this.#toolset.aclose();
  }
}
