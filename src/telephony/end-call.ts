import { beta, type llm, type voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { logCall } from './log.js';

/** Options for {@link endCallTool}: upstream's, with taskline's defaults. */
export type EndCallToolOptions = beta.EndCallToolOptions;

/**
 * Upstream's `end_call` tool (`beta.createEndCallTool`) for bots that finish the call
 * themselves: the model calls it after saying goodbye, the session shuts down and, in a
 * room, the room is deleted so a SIP caller is hung up. taskline's default hides it while
 * the agent greets (`ignoreOnEnter: true`) so a model cannot end a call before it starts.
 */
export function endCallTool(options: EndCallToolOptions = {}): llm.Toolset {
  return beta.createEndCallTool({
    ignoreOnEnter: true,
    ...options,
    onToolCalled: async (event) => {
      logCall(callOf(event.ctx.session), 'info', 'the agent ended the call');
      callOf(event.ctx.session).noteEnd('bot', 'the model called end_call');
      await options.onToolCalled?.(event);
    },
  });
}

/**
 * Ends the call from code (a flow that is done): says `goodbye`, waits for it to play,
 * then shuts the session down. A caller who already hung up is not spoken to.
 */
export async function endCall(
  session: voice.AgentSession,
  options: { goodbye?: string } = {},
): Promise<void> {
  // The call logs who ended it: the bot, or the caller who hung up first.
  await callOf(session).end(options);
}
