/**
 * What the caller said or keyed, as a capture writes it into the conversation: a keypad entry
 * as its own caller line ("(keypad) 4321", masked for a secret), and a secret spoken answer
 * replaced by its masked form wherever the session keeps it.
 */
import type { llm, voice } from '@livekit/agents';

/** Adds a caller line to an agent's chat context (merged into its parent's); returns its id. */
export function addCallerLine(agent: voice.Agent, text: string): string {
  const ctx = agent.chatCtx.copy();
  const id = ctx.addMessage({ role: 'user', content: text }).id;
  // The copy is assigned synchronously; only a realtime model update is awaited.
  agent.updateChatCtx(ctx).catch(() => undefined);
  return id;
}

/** Replaces a caller message's text in the message, the session history and the agent's context. */
export function replaceCallerText(
  session: voice.AgentSession,
  agent: voice.Agent,
  message: llm.ChatMessage,
  text: string,
): void {
  message.content = [text];
  for (const ctx of [session.history, agent.chatCtx]) {
    const item = ctx.items.find((i) => i.id === message.id);
    if (item && item.type === 'message') item.content = [text];
  }
}
