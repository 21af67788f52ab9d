import { ReadableStream } from 'node:stream/web';
import { llm } from '@livekit/agents';

/** A model-free reply stream: speaks `text`, as if a model had said it. */
export function textStream(text: string): ReadableStream<llm.ChatChunk | string> {
  return new ReadableStream<llm.ChatChunk | string>({
    start(controller) {
      controller.enqueue(text);
      controller.close();
    },
  });
}

/** A model-free reply stream holding one tool call, so the runtime executes it normally. */
export function toolCallStream(
  callId: string,
  name: string,
  args: Record<string, unknown>,
): ReadableStream<llm.ChatChunk | string> {
  return new ReadableStream<llm.ChatChunk | string>({
    start(controller) {
      controller.enqueue({
        id: callId,
        delta: {
          role: 'assistant',
          toolCalls: [llm.FunctionCall.create({ callId, name, args: JSON.stringify(args) })],
        },
      });
      controller.close();
    },
  });
}

/**
 * A reply that says and does nothing. Use it instead of returning `null` from `llmNode`:
 * in @livekit/agents 1.9.0 `performLLMInference` returns early on a null stream after
 * closing only the text writer, so the tool-call side never closes and the speech never
 * ends (the turn hangs). An empty stream ends both normally.
 */
export function emptyStream(): ReadableStream<llm.ChatChunk | string> {
  return new ReadableStream<llm.ChatChunk | string>({
    start(controller) {
      controller.close();
    },
  });
}
