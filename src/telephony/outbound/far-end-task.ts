/**
 * The shell of the tasks that listen to the far end of an outbound call (answer detection,
 * voicemail, IVR navigation): an upstream AgentTask that takes each far-end utterance
 * without a model (`hear`), says only what it decides to say, declares
 * `call.waitForCaller()` while it listens, runs its timers on the call's clock, and always
 * resolves a typed result — the subclass's `unwound` one when the line drops or the session
 * is torn down or the task replaced. The model is asked only when a subclass wants it
 * (`askModel`), with the subclass's tools.
 */
import { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, type llm, voice } from '@livekit/agents';
import { type CallContext, callOf } from '../../core/call.js';
import type { TimerHandle } from '../../core/clock.js';
import { emptyStream } from '../../tasks/chunks.js';
import { guardedModelReply } from '../../tasks/model-reply.js';
import { ReplacedRun } from '../../tasks/replaced.js';
import { logCall } from '../log.js';
import { farEndOf } from './far-end.js';

type Stream = ReadableStream<llm.ChatChunk | string | FlushSentinel>;

/** Options every far-end task takes. */
export interface FarEndTaskOptions {
  id: string;
  instructions: string;
  tools?: llm.ToolContextEntry[];
}

/** A task listening to the far end of an outbound call; resolves `R`, never throws for the line. */
export abstract class FarEndTask<R> extends voice.AgentTask<R> {
  /** The call (set in `onEnter`). */
  protected call: CallContext | undefined;
  /** The session (set in `onEnter`; `this.session` throws once the activity closed). */
  protected agentSession: voice.AgentSession | undefined;
  /** True once a result is decided. */
  protected finished = false;
  private entered = false;
  private runCalled = false;
  private inLlmNode = false;
  private modelWanted = false;
  private readonly seen = new Set<string>();
  private readonly cleanups: Array<() => void> = [];
  private readonly timers = new Set<TimerHandle>();
  private readonly speeches = new Set<voice.SpeechHandle>();
  private releaseWait: (() => void) | undefined;
  private readonly replaced = new ReplacedRun<R>();

  constructor(options: FarEndTaskOptions) {
    super({ id: options.id, instructions: options.instructions, tools: options.tools ?? [] });
  }

  /** The result when the line drops (`hangup`) or the task is torn down (`cancelled`). */
  protected abstract unwound(status: 'hangup' | 'cancelled', reason: string): R;

  /** Starts the task's work once it is active (timers, listeners, a first decision). */
  protected abstract begin(): void;

  /** One far-end utterance (a final transcript, or a text-mode line). */
  protected abstract hear(text: string): void;

  override async onEnter(): Promise<void> {
    this.entered = true;
    const session = this.session;
    this.agentSession = session;
    const call = callOf(session);
    this.call = call;
    if (call.hungUp) {
      this.finish(this.unwound('hangup', call.hungUp.reason));
      return;
    }
    for (const item of this.chatCtx.items) this.seen.add(item.id);
    // Read this task's audio from its first frame (a beep may come as it starts).
    farEndOf(session).follow();
    this.cleanups.push(call.on('hangup', (ev) => this.finish(this.unwound('hangup', ev.reason))));
    const onSpeech = (ev: voice.SpeechCreatedEvent) => this.track(ev.speechHandle);
    session.on(voice.AgentSessionEventTypes.SpeechCreated, onSpeech);
    this.cleanups.push(() => session.off(voice.AgentSessionEventTypes.SpeechCreated, onSpeech));
    this.begin();
    this.listen();
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ): Promise<Stream> {
    this.inLlmNode = true;
    try {
      for (const item of chatCtx.items) {
        if (this.seen.has(item.id)) continue;
        this.seen.add(item.id);
        if (item.type !== 'message' || item.role !== 'user') continue;
        const text = item.textContent?.trim();
        if (text && !this.finished) this.hear(text);
      }
    } finally {
      this.inLlmNode = false;
    }
    if (this.finished || !this.modelWanted) return emptyStream();
    this.modelWanted = false;
    const clock = this.call!.clock;
    const settings: voice.ModelSettings = { ...modelSettings, toolChoice: 'required' };
    let failed = false;
    const guarded = guardedModelReply(this, chatCtx, toolCtx, settings, clock, (error) => {
      failed = true;
      this.modelFailed(error);
      return undefined;
    });
    const reply = guarded ?? (await super.llmNode(chatCtx, toolCtx, settings));
    if (!reply) {
      this.modelDidNothing();
      return emptyStream();
    }
    return this.toolCallsOnly(reply, () => {
      if (!failed) this.modelDidNothing();
    });
  }

  /**
   * The model's reply with its words dropped: what a far-end task says is decided by the
   * task, never spoken from a model's text. `onNone` runs when it made no tool call.
   */
  private toolCallsOnly(reply: Stream, onNone: () => void): Stream {
    const reader = reply.getReader();
    let calls = 0;
    return new ReadableStream<llm.ChatChunk | string | FlushSentinel>({
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            if (calls === 0) onNone();
            controller.close();
            return;
          }
          if (typeof value !== 'object' || value === null || !('delta' in value)) continue;
          const toolCalls = value.delta?.toolCalls;
          if (!toolCalls?.length) continue;
          calls += toolCalls.length;
          controller.enqueue({ ...value, delta: { role: 'assistant', toolCalls } });
          return;
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
  }

  /** The model answered without choosing an action; default: nothing more. */
  protected modelDidNothing(): void {}

  /**
   * Asks the model what to do next (with this task's tools): within the current far-end
   * turn when called from `hear`, else as a new reply.
   */
  protected askModel(): void {
    if (this.finished) return;
    this.modelWanted = true;
    if (this.inLlmNode) return;
    try {
      this.agentSession?.generateReply();
    } catch (error) {
      this.modelWanted = false;
      this.modelFailed(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** The model call failed (nothing it said was used); default: nothing more. */
  protected modelFailed(error: Error): void {
    logCall(this.call, 'warn', `${this.id}: model call failed`, { error: error.message });
  }

  /** Speaks `text` (no model) and tracks it as this task's speech. */
  protected say(text: string, options: { allowInterruptions?: boolean } = {}): voice.SpeechHandle {
    const handle = this.session.say(text, options);
    this.track(handle);
    return handle;
  }

  /** A timer on the call's clock, cancelled when the task ends. */
  protected timer(ms: number, fn: () => void): TimerHandle {
    const call = this.call!;
    const handle = call.clock.setTimer(ms, () => {
      this.timers.delete(handle);
      if (!this.finished) fn();
    });
    this.timers.add(handle);
    return {
      cancel: () => {
        handle.cancel();
        this.timers.delete(handle);
      },
    };
  }

  /** Registers a clean-up to run when the task ends. */
  protected onEnd(cleanup: () => void): void {
    this.cleanups.push(cleanup);
  }

  /** Ends the task with `result` (once). */
  protected finish(result: R): void {
    if (this.finished) return;
    this.finished = true;
    this.cleanup();
    if (!this.done) this.complete(result);
  }

  override async onExit(): Promise<void> {
    if (this.done || !this.entered) return;
    const hungUp = this.call?.hungUp;
    const result = hungUp
      ? this.unwound('hangup', hungUp.reason)
      : this.unwound('cancelled', 'the task was replaced by another agent (session.updateAgent)');
    this.finished = true;
    this.cleanup();
    this.complete(result);
    this.replaced.settle(result);
  }

  /** Runs the task inline; resolves its result, never throws for the line or a teardown. */
  override async run(): Promise<R> {
    if (this.runCalled) return super.run();
    this.runCalled = true;
    try {
      return await this.replaced.race(super.run());
    } catch (error) {
      if (!this.entered) throw error;
      const hungUp = this.call?.hungUp;
      return hungUp
        ? this.unwound('hangup', hungUp.reason)
        : this.unwound('cancelled', error instanceof Error ? error.message : String(error));
    } finally {
      this.finished = true;
      this.cleanup();
    }
  }

  private track(handle: voice.SpeechHandle): void {
    if (this.finished || this.speeches.has(handle)) return;
    if (this.agentSession?.currentAgent !== this) return;
    this.speeches.add(handle);
    this.stopWaiting();
    handle.addDoneCallback(() => {
      this.speeches.delete(handle);
      if (this.speeches.size === 0) this.listen();
    });
  }

  private listen(): void {
    if (this.finished || this.speeches.size > 0 || !this.call || this.releaseWait) return;
    this.releaseWait = this.call.waitForCaller();
  }

  private stopWaiting(): void {
    const release = this.releaseWait;
    this.releaseWait = undefined;
    release?.();
  }

  private cleanup(): void {
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    this.stopWaiting();
    for (const off of this.cleanups.splice(0)) off();
  }
}
