import type { CallContext } from '../core/call.js';
import { isSessionClosing } from '../upstream/internals.js';
import type { FlowResult } from './types.js';

/**
 * How the call ends once a flow does (`flow.run({ onEnd })`): a last line chosen by how the
 * flow ended, then the bot ends the call. A flow that fails, is declined, loses a checkpoint
 * race or cannot reach its checkpoint store still says goodbye instead of leaving the
 * caller on a silent line.
 */
export interface FlowEnding {
  /**
   * The last line. A string is said whenever the flow did not complete (a completed flow
   * usually thanks the caller in its last step); a function chooses per result (undefined
   * says nothing). Never spoken to a caller who hung up. Default {@link defaultGoodbye}.
   */
  goodbye?: string | ((result: FlowResult<unknown>) => string | undefined);
  /** End the call after the goodbye (default true); false only says it. */
  endCall?: boolean;
}

/** The default last lines: none after completion, a hang-up or a transfer. */
export function defaultGoodbye(result: FlowResult<unknown>): string | undefined {
  switch (result.status) {
    case 'completed':
    case 'hangup':
    case 'transferred':
      return undefined;
    case 'conflict':
      return 'This call is being continued on another line. Goodbye.';
    default:
      return "Sorry, we couldn't finish this today. Thank you for your time. Goodbye.";
  }
}

/** Says the ending's goodbye for `result` and, unless told not to, ends the call. */
export async function endFlowCall(
  call: CallContext,
  ending: FlowEnding,
  result: FlowResult<unknown>,
): Promise<void> {
  const { goodbye } = ending;
  const line =
    typeof goodbye === 'function'
      ? goodbye(result)
      : typeof goodbye === 'string'
        ? result.status === 'completed'
          ? undefined
          : goodbye
        : defaultGoodbye(result);
  const reason = `flow ${result.status}${result.status === 'completed' ? '' : `: ${result.reason}`}`;
  if (ending.endCall === false) {
    if (line && !call.hungUp && !isSessionClosing(call.session)) {
      await call.session
        .say(line, { allowInterruptions: false })
        .waitForPlayout()
        .catch(() => undefined);
    }
    return;
  }
  await call.end({ goodbye: line, reason });
}
