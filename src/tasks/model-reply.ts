import { ReadableStream } from 'node:stream/web';
import { type FlushSentinel, isAPIError, llm, type voice } from '@livekit/agents';
import type { Clock } from '../core/clock.js';
import { logLine } from '../core/log.js';
import { readModelCall, watchModelCall } from '../core/model-call.js';

type Stream = ReadableStream<llm.ChatChunk | string | FlushSentinel>;

function delivered(chunk: llm.ChatChunk): boolean {
  return Boolean(chunk.delta?.content || chunk.delta?.toolCalls?.length);
}

/**
 * A capture task's model reply, released only once the model call has completed normally.
 * Upstream's default llmNode streams text to the caller and tool calls to execution as they
 * arrive, and a call that fails part-way just ends: half a sentence would be spoken, a tool
 * call from the broken stream would run, and a retry would add its text to the first
 * attempt's. Here a failed call delivers nothing of itself; `onFailure` says what the caller
 * hears instead (a re-prompt) and counts the attempt. A call that failed before delivering
 * anything is retried once when the error is retryable (each retry emits a separate model
 * error, which the session counts toward its own limit). A model that goes silent mid-answer
 * for the request timeout (`llmConnOptions.timeoutMs`) fails the same way. Returns undefined for a model that
 * is not an `llm.LLM` (a realtime model), which keeps upstream's own path.
 */
export function guardedModelReply(
  agent: voice.Agent,
  chatCtx: llm.ChatContext,
  toolCtx: llm.ToolContext,
  modelSettings: voice.ModelSettings,
  clock: Clock,
  onFailure: (error: Error) => string | undefined,
): Stream | undefined {
  const activity = agent.getActivityOrThrow();
  const model = activity.llm;
  if (!(model instanceof llm.LLM)) return undefined;
  const connOptions = activity.agentSession.connOptions.llmConnOptions;
  let current: llm.LLMStream | undefined;
  let cancelled = false;
  return new ReadableStream<llm.ChatChunk | string | FlushSentinel>({
    async start(controller) {
      try {
        for (let attempt = 1; ; attempt++) {
          const { stream, watch } = watchModelCall(model, () =>
            model.chat({
              chatCtx,
              toolCtx,
              toolChoice: modelSettings.toolChoice,
              connOptions: { ...connOptions, maxRetry: 0 },
            }),
          );
          current = stream;
          // Silence mid-answer counts as a failure after the request timeout, on the call's clock.
          const chunks = await readModelCall(stream, watch, {
            idleMs: connOptions.timeoutMs,
            clock,
          });
          if (cancelled) return;
          const failure = watch.failure;
          if (!failure) {
            for (const chunk of chunks) controller.enqueue(chunk);
            return;
          }
          const nothing = !chunks.some(delivered);
          if (nothing && attempt === 1 && connOptions.maxRetry > 0 && isAPIError(failure)) {
            if (failure.retryable) continue;
          }
          logLine('taskline.tasks', 'warn', `model call failed in task ${agent.id}; re-prompting`, {
            task: agent.id,
            error: failure.message,
            partial: !nothing,
          });
          const line = onFailure(failure);
          if (line) controller.enqueue(line);
          return;
        }
      } finally {
        current?.close();
        if (!cancelled) controller.close();
      }
    },
    cancel() {
      cancelled = true;
      current?.close();
    },
  });
}
