/**
 * Runs a voice specialist (an AgentTask) inline in the foreground of the call through
 * upstream's `ctx.foreground`: it waits until the line is idle, holds the floor, and the
 * specialist talks to the caller until it completes.
 */
import { voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { TasklineError } from '../core/errors.js';
import { activityRunning } from './floor.js';

/**
 * Awaits `create()`'s AgentTask inside `ctx.foreground`. While the specialist listens,
 * the call is marked as waiting on the caller (the hold keeps the session from looking
 * idle, and simulators and runners need to know the turn is over). An abort completes
 * the specialist with the signal's reason.
 */
export async function runSpecialist<T>(
  ctx: voice.RunContext<unknown>,
  create: () => voice.AgentTask<T>,
  signal: AbortSignal,
): Promise<T> {
  return ctx.foreground(async () => {
    const session = ctx.session;
    const call = callOf(session);
    if (signal.aborted) throw abortError(signal);
    const task = create();
    let release: (() => void) | undefined;
    const sync = () => {
      const listening = session.agentState === 'listening' && session.currentAgent === task;
      if (listening && !release) release = call.waitForCaller();
      if (!listening && release) {
        release();
        release = undefined;
      }
    };
    const onItem = (ev: voice.ConversationItemAddedEvent) => {
      // The specialist's activity is starting: look again once it runs (its opening turn
      // ends with a state change of its own). Not upstream's waitForIdle(): it leaves abort
      // listeners on the activity (see ./floor.ts).
      if (ev.item.type === 'agent_handoff' && ev.item.newAgentId === task.id) {
        void whenRunning(task).then(sync);
      }
    };
    const onAbort = () => {
      if (task.done) return;
      try {
        task.complete(abortError(signal));
      } catch {
        // it completed in the meantime
      }
    };
    session.on(voice.AgentSessionEventTypes.AgentStateChanged, sync);
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await task.run();
    } finally {
      session.off(voice.AgentSessionEventTypes.AgentStateChanged, sync);
      session.off(voice.AgentSessionEventTypes.ConversationItemAdded, onItem);
      signal.removeEventListener('abort', onAbort);
      release?.();
    }
  });
}

/** Resolves once `agent`'s activity accepts speech (bounded: a few event-loop rounds). */
async function whenRunning(agent: voice.Agent): Promise<void> {
  for (let i = 0; i < 50 && !activityRunning(agent); i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new TasklineError('cancelled', 'The specialist was stopped.');
}
