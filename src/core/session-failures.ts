import { voice } from '@livekit/agents';
import { onEnterTaskOf } from '../upstream/internals.js';

/** Which part of a call failed. */
export type SessionFailureSource =
  | 'model'
  | 'speech-to-text'
  | 'text-to-speech'
  | 'session'
  | 'agent';

/** One thing that went wrong in a call, as upstream reported it (or as taskline caught it). */
export interface SessionFailure {
  source: SessionFailureSource;
  /** One line a person can act on, e.g. `the model failed (openai.LLM): 401 Incorrect API key`. */
  message: string;
  error: Error;
}

const SOURCES: Record<string, SessionFailureSource> = {
  llm_error: 'model',
  realtime_model_error: 'model',
  stt_error: 'speech-to-text',
  tts_error: 'text-to-speech',
};

/**
 * Watches an AgentSession for what makes a call a failure, from upstream's own signals: an
 * unrecoverable `error` event (a model, STT or TTS error after its retries; upstream keeps the
 * session open for a few of them), a `close` event whose reason is `error`, and an exception
 * thrown by an agent's `onEnter` (see {@link watchOnEnter}). Recoverable errors (a retry
 * that may still succeed) are not failures. Runners (`taskline run`, a room entry) use it to
 * stop a broken call and exit non-zero instead of printing an empty call.
 */
export class SessionFailures {
  /** Everything that failed, in order. */
  readonly failures: SessionFailure[] = [];
  private readonly session: voice.AgentSession;
  private readonly seen = new WeakSet<object>();
  private readonly listeners: Array<() => void> = [];
  private readonly onFailure: ((failure: SessionFailure) => void) | undefined;

  constructor(session: voice.AgentSession, onFailure?: (failure: SessionFailure) => void) {
    this.session = session;
    this.onFailure = onFailure;
    const onError = (ev: voice.ErrorEvent) => {
      if (ev.error.recoverable) return;
      const source = SOURCES[ev.error.type] ?? 'session';
      const error = causeOf(ev.error);
      const label = ev.error.label ? ` (${ev.error.label})` : '';
      this.add(source, `the ${source} failed${label}: ${messageOf(error)}`, error);
    };
    const onClose = (ev: voice.CloseEvent) => {
      if (ev.reason !== voice.CloseReason.ERROR) return;
      const error = ev.error ? causeOf(ev.error) : new Error('the session closed with an error');
      if (this.seen.has(error)) return;
      this.add('session', `the session closed because of an error: ${messageOf(error)}`, error);
    };
    const check = () => this.check();
    const events = [
      [voice.AgentSessionEventTypes.Error, onError],
      [voice.AgentSessionEventTypes.Close, onClose],
      [voice.AgentSessionEventTypes.AgentStateChanged, check],
      [voice.AgentSessionEventTypes.SpeechCreated, check],
      [voice.AgentSessionEventTypes.ConversationItemAdded, check],
    ] as const;
    for (const [event, listener] of events) {
      session.on(event, listener as never);
      this.listeners.push(() => session.off(event, listener as never));
    }
  }

  /** True once anything failed. */
  get failed(): boolean {
    return this.failures.length > 0;
  }

  /** The first failure (the cause; later ones are usually its consequences). */
  get first(): SessionFailure | undefined {
    return this.failures[0];
  }

  /**
   * Looks at the current agent's `onEnter` (call it after each step of a call; session
   * events call it too). Cheap and idempotent.
   */
  check(): void {
    let agent: voice.Agent;
    try {
      agent = this.session.currentAgent;
    } catch {
      return;
    }
    watchOnEnter(agent, this.seen, (error) =>
      this.add('agent', `${agent.id}.onEnter threw: ${messageOf(error)}`, error),
    );
  }

  /** Stops watching. */
  dispose(): void {
    for (const off of this.listeners.splice(0)) off();
  }

  private add(source: SessionFailureSource, message: string, error: Error): void {
    this.seen.add(error);
    const failure = { source, message, error };
    this.failures.push(failure);
    this.onFailure?.(failure);
  }
}

/**
 * Workaround for @livekit/agents 1.9.0 (no upstream issue yet; Python's agents logs the same
 * exception through `log_exceptions`): an exception thrown by `Agent.onEnter` is consumed by
 * the activity's task (`Future.reject` swallows it) and is neither logged nor emitted as an
 * `error` or `close` event, so a call whose first agent crashed looks like a quiet call.
 * This reads the activity's onEnter task ({@link onEnterTaskOf}) and
 * reports its rejection once. tests/upstream/on_enter_errors.test.ts pins the upstream
 * behaviour; remove this when that test fails.
 */
export function watchOnEnter(
  agent: voice.Agent,
  seen: WeakSet<object>,
  report: (error: Error) => void,
): void {
  const task = onEnterTaskOf(agent);
  if (!task || seen.has(task)) return;
  seen.add(task);
  task.result.catch((error: unknown) => {
    const err = error instanceof Error ? error : new Error(String(error));
    // A task cancelled because the call ended is not a failure of the agent.
    if (err.name === 'AbortError') return;
    report(err);
  });
}

/** The underlying Error of an upstream error event (interruption errors are Errors themselves). */
function causeOf(ev: voice.ErrorEvent['error']): Error {
  return ev instanceof Error ? ev : ev.error;
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.trim() || (error instanceof Error ? error.name : 'unknown error');
}
