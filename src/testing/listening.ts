/**
 * When the agent is listening: the one rule the testing kit's callers (text and audio) use to
 * know the agent's turn is over, instead of taking a pause for it. The agent listens when
 * something declares that it waits on the caller (`call.waitForCaller()`: a digit collector,
 * a voice specialist), or when it says and generates nothing, works on nothing between turns
 * (`call.beginWork()`: a flow writing its checkpoint), and the current agent's `onEnter` has
 * returned — an `onEnter` that still awaits something (a store opening before its flow starts)
 * has not handed the turn to the caller yet.
 */
import type { voice } from '@livekit/agents';
import type { CallContext } from '../core/call.js';
import { onEnterTaskOf } from '../upstream/internals.js';

const IDLE = new Set<voice.AgentState>(['listening', 'idle']);

/** Upstream 1.9's `Task` of an activity's `onEnter` (the part this module reads). */
interface OnEnterTask {
  readonly done: boolean;
  readonly result: Promise<unknown>;
}

function current(session: voice.AgentSession): voice.Agent | undefined {
  try {
    return session.currentAgent;
  } catch {
    return undefined;
  }
}

/**
 * The current agent's `onEnter` while it still runs, else undefined (there is no public
 * signal: see `onEnterTaskOf`, pinned by tests/upstream/on_enter_task.test.ts too).
 */
export function runningOnEnter(session: voice.AgentSession): OnEnterTask | undefined {
  const agent = current(session);
  const task = agent ? (onEnterTaskOf(agent) as OnEnterTask | undefined) : undefined;
  return task && !task.done ? task : undefined;
}

/** True when the agent's turn is over and it waits for the caller (see the module comment). */
export function agentListening(session: voice.AgentSession, call: CallContext): boolean {
  if (call.isWaitingForCaller) return true;
  if (call.isBusy || !IDLE.has(session.agentState)) return false;
  return runningOnEnter(session) === undefined;
}
