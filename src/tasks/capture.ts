import { llm, voice } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import { TasklineError } from '../core/errors.js';
import { traceCapture } from '../observability/tasks.js';
import type { FailedOutcome, FailureStatus, Outcome } from '../outcome.js';
import { isOwnerFinishedError, isSessionClosing } from '../upstream/internals.js';
import type { RetryPolicy } from './policy.js';
import { ReplacedRun } from './replaced.js';

/**
 * What every capture (typed task, digits, menu) shares besides its way of listening:
 * which statuses a cap produces, how counters become an outcome, and how a session torn
 * down mid-capture becomes one.
 */

/** Statuses that mean "a retry cap was reached" (and so may run `retry.onExhausted`). */
export const EXHAUSTED_STATUSES: ReadonlySet<FailureStatus> = new Set([
  'noinput',
  'nomatch',
  'invalid',
  'maxRetries',
]);

/** Failure counters a capture keeps. `rejected` counts read-backs the caller said no to. */
export interface FailureCounts {
  noInput: number;
  noMatch: number;
  invalid: number;
  rejected?: number;
}

/** All failed answers so far. */
export function totalFailures(counts: FailureCounts): number {
  return counts.noInput + counts.noMatch + counts.invalid + (counts.rejected ?? 0);
}

/** The outcome a reached cap ends the capture with, or undefined while all are within bounds. */
export function capReached(
  counts: FailureCounts,
  retry: RetryPolicy<unknown>,
): FailedOutcome | undefined {
  const attempts = totalFailures(counts);
  if (counts.noInput >= retry.maxNoInput) {
    return { status: 'noinput', attempts, reason: `no answer after ${counts.noInput} prompts` };
  }
  if (counts.noMatch >= retry.maxNoMatch) {
    return { status: 'nomatch', attempts, reason: `not understood ${counts.noMatch} times` };
  }
  if (counts.invalid >= retry.maxInvalid) {
    return { status: 'invalid', attempts, reason: `invalid answer ${counts.invalid} times` };
  }
  if (attempts >= retry.maxAttempts) {
    return { status: 'maxRetries', attempts, reason: `${attempts} failed attempts` };
  }
  return undefined;
}

/**
 * The outcome of a capture whose session was torn down under it (upstream completes the
 * task with an error): `hangup` when the caller left, `cancelled` otherwise. Never throws.
 */
export function unwoundOutcome(
  error: unknown,
  call: CallContext | undefined,
  attempts: number,
): FailedOutcome {
  const hungUp = call?.hungUp;
  return {
    status: hungUp ? 'hangup' : 'cancelled',
    attempts,
    reason: hungUp?.reason ?? (error instanceof Error ? error.message : String(error)),
  };
}

/** Joins sentences for speech, ending each with punctuation and dropping empty parts. */
export function joinSpeech(...parts: string[]): string {
  return parts
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => (/[.?!]$/.test(p) ? p : `${p}.`))
    .join(' ');
}

/**
 * Guards a task's tools: each call also sees the task's end on its `abortSignal`, and a call
 * still running when the task ends is answered at once with a ToolError, so a tool that never
 * settles cannot keep the task's activity (and the call) from moving on.
 */
export class ToolGuard {
  private readonly controller = new AbortController();

  /** Aborted when the task ends. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The given tools with every function tool guarded (tool sets and provider tools as they are). */
  wrap(tools: llm.ToolContextLike | undefined): llm.ToolContextEntry[] {
    if (tools === undefined) return [];
    return llm.toToolContext(tools).tools.map((entry) => this.guard(entry));
  }

  /** One guarded tool (other entries pass through). */
  guard<E extends llm.ToolContextEntry>(entry: E): E {
    if (!llm.isFunctionTool(entry)) return entry;
    const tool = entry as llm.FunctionTool;
    const ending = this.controller.signal;
    const execute: llm.FunctionTool['execute'] = (args, options) => {
      if (ending.aborted) return Promise.reject(ended(ending));
      const own = options?.abortSignal;
      const abortSignal = own ? AbortSignal.any([own, ending]) : ending;
      const running = Promise.resolve().then(() => tool.execute(args, { ...options, abortSignal }));
      return raceEnd(running, ending);
    };
    return { ...tool, execute } as E;
  }

  /** Ends the task's tool calls: aborts their signals and answers any still running. */
  end(reason: string): void {
    if (!this.controller.signal.aborted) {
      this.controller.abort(new TasklineError('cancelled', reason));
    }
  }
}

function ended(signal: AbortSignal): llm.ToolError {
  const why = signal.reason instanceof Error ? signal.reason.message : 'the task has ended';
  return new llm.ToolError(`This task has ended (${why}); the tool call was cancelled.`);
}

function raceEnd<R>(running: Promise<R>, ending: AbortSignal): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    // A tool that itself ends the task (submit, a tool calling complete()) settles within
    // the same turn of the event loop: let it answer before it is cut off.
    const onEnd = () => setImmediate(() => reject(ended(ending)));
    ending.addEventListener('abort', onEnd, { once: true });
    running.then(
      (value) => {
        ending.removeEventListener('abort', onEnd);
        resolve(value);
      },
      (error: unknown) => {
        ending.removeEventListener('abort', onEnd);
        reject(error);
      },
    );
  });
}

/**
 * Whether an error given to `complete()` is upstream tearing the task down (the session is
 * closing, or the tool awaiting the task was cancelled) rather than the program's own error.
 * Upstream (@livekit/agents 1.9 `AgentSession.closeImplInner`, `AgentTask.run`) completes a
 * task with a ToolError while closing and with "The Task finished before …" when its owner
 * ends; only those become a `hangup`/`cancelled` outcome.
 */
function isTeardown(error: Error, session: voice.AgentSession | undefined): boolean {
  return isSessionClosing(session) || error instanceof llm.ToolError || isOwnerFinishedError(error);
}

/**
 * The shell every capture task shares (typed tasks, digits, menus): an upstream AgentTask
 * whose `run()` always resolves an {@link Outcome}. A session torn down mid-capture becomes
 * `hangup` or `cancelled`, and so does the task being replaced (`session.updateAgent`); an
 * error before the task ever started (awaited outside a tool or `onEnter`), an error given
 * to `complete()` by the program, and a second `run()` are rethrown, as upstream does.
 * However the task ends — its own answer, `complete()` from outside, the watchdog — its
 * timers and listeners are released and its running tool calls are cancelled. Subclasses
 * set `entered`, `call` and `agentSession` in `onEnter`, guard their tools with `tools`,
 * and release their timers and listeners in `cleanup()`.
 */
export abstract class CaptureTask<T> extends voice.AgentTask<Outcome<T>> {
  /** True once `onEnter` ran. */
  protected entered = false;
  /** The call this task runs in (set in `onEnter`). */
  protected call: CallContext | undefined;
  /**
   * The session this task runs in (set in `onEnter`): `this.session` throws once the task's
   * activity has closed, and cleanup may run after that.
   */
  protected agentSession: voice.AgentSession | undefined;
  /** Cancels this task's running tool calls when it ends (wrap tools with `tools.wrap`). */
  protected readonly tools: ToolGuard;
  private runCalled = false;
  private programError: Error | undefined;
  private readonly replaced = new ReplacedRun<Outcome<T>>();

  constructor(options: ConstructorParameters<typeof voice.AgentTask>[0], tools: ToolGuard) {
    super(options);
    this.tools = tools;
  }

  /** Failed answers so far (the `attempts` of an unwound outcome). */
  protected abstract failures(): number;

  /** Releases the task's timers and listeners; runs whenever the task ends. */
  protected abstract cleanup(): void;

  /** Marks the task as decided so nothing of it acts again (timers, late keys, tools). */
  protected abstract markFinished(): void;

  /**
   * Completes the task (throws if it is already done, as upstream does). Whoever calls it —
   * the task itself, a flow's timer, a supervisor, a tool — the task stops listening and
   * its running tool calls are cancelled.
   */
  override complete(result: Outcome<T> | Error): void {
    super.complete(result);
    if (result instanceof Error && !isTeardown(result, this.agentSession)) {
      this.programError = result;
    }
    this.markFinished();
    this.cleanup();
    this.tools.end(result instanceof Error ? result.message : `the task ended: ${result.status}`);
  }

  /**
   * The task's activity is closing. Upstream closes it after the task completes, but also
   * when the session moves to another agent (`session.updateAgent`) while the task runs,
   * which would leave the awaiter waiting forever: that becomes `cancelled`.
   */
  override async onExit(): Promise<void> {
    // The step is over (answered, given up, or cut short): anything held for a safe moment
    // may be said now, in this closing activity, before the next question is asked.
    if (this.entered) this.call?.noteStepEnded(this.id);
    if (this.done || !this.entered) return;
    const hungUp = this.call?.hungUp;
    const outcome: Outcome<T> = {
      status: hungUp ? 'hangup' : 'cancelled',
      attempts: this.failures(),
      reason: hungUp?.reason ?? 'the task was replaced by another agent (session.updateAgent)',
    };
    this.complete(outcome);
    this.replaced.settle(outcome);
  }

  /** Runs the task inline and resolves its outcome; never throws for caller behaviour. */
  override async run(): Promise<Outcome<T>> {
    // A second run() throws upstream's "already started" error, untouched.
    if (this.runCalled) return super.run();
    this.runCalled = true;
    return traceCapture(this, () => this.runOnce());
  }

  private async runOnce(): Promise<Outcome<T>> {
    try {
      return await this.replaced.race(super.run());
    } catch (error) {
      if (!this.entered || (this.programError !== undefined && error === this.programError)) {
        throw error;
      }
      return unwoundOutcome(error, this.call, this.failures());
    } finally {
      this.markFinished();
      this.cleanup();
      this.tools.end('the task ended');
    }
  }
}
