// Shared helpers for the upstream conformance suite (tests/upstream).
// They only drive @livekit/agents 1.9.0 the way a user would: a text-only AgentSession over
// upstream's own FakeLLM, no room, no audio, no sleeps.
import { Future, type llm, voice } from '@livekit/agents';

/** One scripted FakeLLM reply, keyed as described in /work/shared/UPSTREAM.md. */
export type Reply = voice.testing.FakeLLMResponse;

/** Ordered record of lifecycle hooks, so tests can assert which hooks ran, in what order, how often. */
export class HookLog {
  readonly entries: string[] = [];

  /** Appends one hook call, e.g. `caller.enter`. */
  record(entry: string): void {
    this.entries.push(entry);
  }

  /** How many times `entry` was recorded. */
  count(entry: string): number {
    return this.entries.filter((e) => e === entry).length;
  }
}

/** Starts a text-only session over FakeLLM, runs `fn`, and always closes the session. */
export async function withSession<T>(
  options: { agent: voice.Agent; replies: Reply[] },
  fn: (session: voice.AgentSession, fake: voice.testing.FakeLLM) => Promise<T>,
): Promise<T> {
  const fake = new voice.testing.FakeLLM(options.replies);
  const session = new voice.AgentSession({ llm: fake });
  try {
    await session.start({ agent: options.agent });
    return await fn(session, fake);
  } finally {
    await session.close();
  }
}

/** Sends one user turn with `session.run` and waits until the run settles. */
export async function userSays(
  session: voice.AgentSession,
  text: string,
): Promise<voice.testing.RunResult> {
  return session.run({ userInput: text }).wait();
}

/** The conversation item type the session emits, so predicates can narrow it. */
export type AddedItem = voice.ConversationItemAddedEvent['item'];

/**
 * Resolves with the first conversation item the session adds that matches `match`.
 * Used to wait for deferred speech (async tools) without sleeping.
 */
export function whenItemAdded(
  session: voice.AgentSession,
  match: (item: AddedItem) => boolean,
): Promise<AddedItem> {
  const found = new Future<AddedItem>();
  const listener = (ev: voice.ConversationItemAddedEvent) => {
    if (!found.done && match(ev.item)) found.resolve(ev.item);
  };
  session.on(voice.AgentSessionEventTypes.ConversationItemAdded, listener);
  return found.await.finally(() => {
    session.off(voice.AgentSessionEventTypes.ConversationItemAdded, listener);
  });
}

/** True for an assistant message whose text is exactly `text`. */
export function isAssistantText(item: AddedItem, text: string): boolean {
  return item.type === 'message' && item.role === 'assistant' && item.textContent === text;
}

/** Short, stable labels for chat items, so assertions on a context read like a transcript. */
export function labels(items: readonly llm.ChatItem[]): string[] {
  return items.map((item) => {
    switch (item.type) {
      case 'message':
        return `${item.role}: ${item.textContent ?? ''}`;
      case 'function_call':
        return `call ${item.name}`;
      case 'function_call_output':
        return `output ${item.name}: ${item.output}`;
      case 'agent_handoff':
        return `handoff ${item.oldAgentId ?? '-'} -> ${item.newAgentId}`;
      case 'agent_config_update':
        return `config ${typeof item.instructions === 'string' ? item.instructions : '(instructions)'}`;
      default:
        return 'unknown';
    }
  });
}

/**
 * The AgentActivity bound to `agent`. Reads upstream's `@internal` `_agentActivity` on purpose:
 * whether an activity is kept (pause) or dropped (close) is exactly what this suite pins.
 */
export function activityOf(agent: voice.Agent): voice.Agent['_agentActivity'] {
  return agent._agentActivity;
}
