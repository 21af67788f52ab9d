/**
 * Every reach taskline makes into @livekit/agents 1.9 internals (underscored members, private
 * symbols, error text), behind one door: an upgrade of upstream touches this file and the
 * tests that pin it, nothing else. Each function names its pinning test in tests/upstream;
 * when that test fails after an upgrade, fix the function here (or drop it if upstream grew a
 * public way), never the call sites.
 */
import { type llm, voice } from '@livekit/agents';

/**
 * True while the session is shutting down (upstream's `AgentSession._closing`): no more
 * speech should be started and a task torn down now ended because of the close.
 * Pinned by tests/upstream/internals.test.ts ("isSessionClosing").
 */
export function isSessionClosing(session: voice.AgentSession | undefined): boolean {
  return session?._closing === true;
}

/**
 * The identity of the participant the session's room I/O is linked to (upstream's
 * `AgentSession._roomIO.linkedParticipant`), or undefined without a room or link.
 * Pinned by tests/upstream/internals.test.ts ("linkedParticipantIdentity") and, with a real
 * room, tests/app/room-entry.test.ts.
 */
export function linkedParticipantIdentity(session: voice.AgentSession): string | undefined {
  try {
    return session._roomIO?.linkedParticipant?.identity;
  } catch {
    return undefined;
  }
}

/**
 * A chat context summarised by `model` into one message (upstream's
 * `ChatContext._summarize`, the summary its TaskGroup hands back).
 * Pinned by tests/upstream/internals.test.ts ("summarizeChatContext").
 */
export function summarizeChatContext(
  context: llm.ChatContext,
  model: llm.LLM,
  options: { keepLastTurns?: number } = {},
): Promise<llm.ChatContext> {
  return context._summarize(model, options);
}

/**
 * The agent's own, mutable chat context (upstream's `Agent._chatCtx`; the public `chatCtx`
 * is a read-only copy), for merging a finished step's turns in place as TaskGroup does.
 * Pinned by tests/upstream/internals.test.ts ("agentChatContext") and merge_back.test.ts.
 */
export function agentChatContext(agent: voice.Agent): llm.ChatContext {
  return agent._chatCtx;
}

/** The executor behind an async toolset (upstream's `ToolExecutor`, not exported). */
export type ToolsetExecutor = llm.AsyncToolset['_executor'];

/**
 * Attaches an async toolset to a session with no owning activity, as upstream's activity does
 * for a session-level toolset (`AsyncToolset._attachActivity`), and returns its executor
 * (`AsyncToolset._executor`): results then follow the session's current agent.
 * Pinned by tests/upstream/internals.test.ts ("attachSessionToolset").
 */
export function attachSessionToolset(
  toolset: llm.AsyncToolset,
  session: voice.AgentSession,
): ToolsetExecutor {
  toolset._attachActivity({ activity: null, session });
  return toolset._executor;
}

/** The part of upstream's onEnter task that {@link onEnterTaskOf} hands out. */
export interface OnEnterTask {
  result: Promise<unknown>;
}

/**
 * The task running the agent's `onEnter` in its current activity (upstream's
 * `Agent._agentActivity._onEnterTask`), or undefined when the agent is not active.
 * Pinned by tests/upstream/internals.test.ts ("onEnterTaskOf") and on_enter_errors.test.ts.
 */
export function onEnterTaskOf(agent: voice.Agent): OnEnterTask | undefined {
  const probe = agent as unknown as {
    _agentActivity?: { _onEnterTask?: OnEnterTask };
  };
  return probe._agentActivity?._onEnterTask;
}

/**
 * Whether an error completing an AgentTask is upstream's "the task that awaited it ended"
 * (`AgentTask.run`: "The Task finished before X was completed."), recognised by its text
 * since upstream throws a plain Error.
 * Pinned by tests/upstream/internals.test.ts ("isOwnerFinishedError").
 */
export function isOwnerFinishedError(error: Error): boolean {
  return error.message.startsWith('The Task finished before');
}

/** A handle upstream's RunResult watches (a SpeechHandle, or a task with a done callback). */
export type RunResultWatchHandle = Parameters<voice.testing.RunResult['_watchHandle']>[0];

/**
 * Wraps upstream's `RunResult._watchHandle` and `_unwatchHandle` (process-wide) so every handle
 * they get passes through `adapt` first. Idempotent per `marker`.
 * Pinned by tests/upstream/async_tools.test.ts ("still hands RunResult._watchHandle a bare
 * promise").
 */
export function wrapRunResultWatch(
  marker: symbol,
  adapt: (handle: RunResultWatchHandle) => RunResultWatchHandle,
): void {
  const proto = voice.testing.RunResult.prototype;
  const patched = proto as unknown as Record<symbol, boolean>;
  if (patched[marker]) return;
  patched[marker] = true;
  const watch = proto._watchHandle;
  const unwatch = proto._unwatchHandle;
  proto._watchHandle = function (this: voice.testing.RunResult, handle: RunResultWatchHandle) {
    return watch.call(this, adapt(handle));
  };
  proto._unwatchHandle = function (this: voice.testing.RunResult, handle: RunResultWatchHandle) {
    return unwatch.call(this, adapt(handle));
  };
}

/**
 * The private symbol under which upstream's pino logger keeps its destination (pino's
 * `symbols.streamSym`, described "pino.stream"; children inherit it through their prototype),
 * or undefined when the logger has no such symbol.
 * Pinned by tests/upstream/logger_destination.test.ts.
 */
export function loggerDestinationKey(logger: object): symbol | undefined {
  return Object.getOwnPropertySymbols(logger).find((s) => s.description === 'pino.stream');
}
