/**
 * Repair of dangling tool calls: a function call with no output (the caller interrupted
 * while it ran, the process crashed, a restored history stopped mid-step) gets a synthetic
 * "cancelled" output right after it before the next model call. Upstream's OpenAI format
 * silently drops such a call (provider_format/utils.ts `removeInvalidToolCalls`), so the
 * model would forget it ever tried — and might repeat a payment. With the repair it sees the
 * call and that its result is unknown.
 */
import { llm } from '@livekit/agents';

/** Prefix of the ids of synthetic outputs (stable per call, so a repair is idempotent). */
export const CANCELLED_OUTPUT_ID_PREFIX = 'taskline_cancelled_';

/** What the model reads as the output of an interrupted call. */
export const CANCELLED_OUTPUT =
  'cancelled: this call was interrupted before it returned (the caller spoke over it, or the ' +
  'call was restored after a failure), so its result is unknown. If it mattered, check whether ' +
  'it took effect before doing it again.';

/**
 * Adds a "cancelled" output after every function call of `chatCtx` that has none, in place.
 * Returns the calls it repaired.
 */
export function repairDanglingToolCalls(chatCtx: llm.ChatContext): llm.FunctionCall[] {
  const items = chatCtx.items;
  const answered = new Set<string>();
  for (const item of items) if (item.type === 'function_call_output') answered.add(item.callId);
  const repaired: llm.FunctionCall[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (item.type !== 'function_call' || answered.has(item.callId)) continue;
    // After the call and any calls made with it (one assistant turn), so the turn stays whole.
    let at = i + 1;
    while (at < items.length && items[at]!.type === 'function_call') at++;
    while (at < items.length && items[at]!.type === 'function_call_output') at++;
    items.splice(
      at,
      0,
      llm.FunctionCallOutput.create({
        id: `${CANCELLED_OUTPUT_ID_PREFIX}${item.callId}`,
        callId: item.callId,
        name: item.name,
        output: CANCELLED_OUTPUT,
        isError: true,
        createdAt: item.createdAt,
      }),
    );
    answered.add(item.callId);
    repaired.push(item);
  }
  return repaired;
}
