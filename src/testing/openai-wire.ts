/**
 * The wire side of the fake OpenAI server (src/testing/openai-server.ts): chat-completion
 * bodies, the Server-Sent Events stream in OpenAI's `chat.completion.chunk` format, and the
 * faults it can inject into that stream (errors before, during and after streaming).
 */
import type { ServerResponse } from 'node:http';

const ARGUMENT_PIECE = 12;

/**
 * Where a streamed reply breaks: after this many of its chunks (text pieces, tool-call
 * heads, argument pieces; the role chunk is not counted), or `'end'` — after the last chunk
 * (finish reason and usage included) but before `[DONE]`.
 */
export type OpenAIFaultPoint = number | 'end';

/**
 * A fault the server injects into one reply, to test what a client does when the model
 * fails before, during or after streaming.
 */
export type OpenAIFault =
  /** Before streaming: an HTTP error status with an OpenAI error body (500, 503, 429, 400, ...). */
  | { kind: 'status'; status: number; message?: string }
  /** The connection drops (reset) at `at`: the client sees a network error mid-body. */
  | { kind: 'disconnect'; at: OpenAIFaultPoint }
  /** An SSE error event at `at` (how OpenAI reports a server error mid-stream), then the end. */
  | { kind: 'error-event'; at: OpenAIFaultPoint; message?: string; code?: string }
  /** The server goes silent at `at` and keeps the connection open (a hung model). */
  | { kind: 'stall'; at: OpenAIFaultPoint };

/** A reply as the server sends it. */
export interface Answer {
  id: string;
  model: string;
  created: number;
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function finishReason(answer: Answer): 'tool_calls' | 'stop' {
  return answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** Sends a JSON body with `status` (nothing when the client is gone). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A non-streamed `chat.completion` body. */
export function completionBody(answer: Answer): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: answer.content === '' && answer.toolCalls.length > 0 ? null : answer.content,
    refusal: null,
  };
  if (answer.toolCalls.length > 0) {
    message.tool_calls = answer.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer) }],
    usage: answer.usage,
  };
}

/**
 * Writes the reply as OpenAI streams it: role, content pieces, tool-call pieces, finish,
 * usage, `[DONE]` — or breaks it where `fault` says.
 */
export function sendStream(
  res: ServerResponse,
  answer: Answer,
  includeUsage: boolean,
  fault?: Exclude<OpenAIFault, { kind: 'status' }>,
): void {
  if (res.destroyed) return;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const events: string[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null): void => {
    const body: Record<string, unknown> = {
      id: answer.id,
      object: 'chat.completion.chunk',
      created: answer.created,
      model: answer.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (includeUsage) body.usage = null;
    events.push(`data: ${JSON.stringify(body)}\n\n`);
  };

  const hasText = answer.content !== '';
  let counted = 0;
  if (hasText || answer.toolCalls.length === 0) {
    chunk({ role: 'assistant', content: '', refusal: null }, null);
    counted = 1; // the role chunk is not a piece
    for (const piece of textPieces(answer.content)) chunk({ content: piece }, null);
  }
  answer.toolCalls.forEach((call, index) => {
    const head = {
      index,
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: '' },
    };
    chunk(
      index === 0 && !hasText
        ? { role: 'assistant', content: null, tool_calls: [head] }
        : { tool_calls: [head] },
      null,
    );
    for (let at = 0; at < call.arguments.length; at += ARGUMENT_PIECE) {
      const piece = call.arguments.slice(at, at + ARGUMENT_PIECE);
      chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null);
    }
  });
  chunk({}, finishReason(answer));
  if (includeUsage) {
    const usage = {
      id: answer.id,
      object: 'chat.completion.chunk',
      created: answer.created,
      model: answer.model,
      choices: [],
      usage: answer.usage,
    };
    events.push(`data: ${JSON.stringify(usage)}\n\n`);
  }
  if (!fault) {
    res.end(`${events.join('')}data: [DONE]\n\n`);
    return;
  }
  // The pieces before the break, then the break itself.
  const cut = fault.at === 'end' ? events.length : Math.min(events.length, counted + fault.at);
  res.write(events.slice(0, cut).join(''));
  if (fault.kind === 'disconnect') {
    // Let the pieces reach the client, then reset the connection mid-body.
    setImmediate(() => res.destroy());
  } else if (fault.kind === 'error-event') {
    const error = {
      message: fault.message ?? 'The server had an error while processing your request.',
      type: 'server_error',
      param: null,
      code: fault.code ?? 'injected_fault',
    };
    res.end(`data: ${JSON.stringify({ error })}\n\n`);
  }
  // 'stall': nothing more is written; close() drops the connection.
}

/** Splits text into word-sized pieces, each keeping its trailing whitespace. */
function textPieces(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text]);
}

/** A rough, deterministic token count (4 characters a token) so usage numbers are stable. */
export function estimateUsage(
  prompt: string[],
  content: string,
  toolCalls: Answer['toolCalls'],
): Answer['usage'] {
  const tokens = (s: string): number => Math.ceil(s.length / 4);
  const promptTokens = prompt.reduce((n, part) => n + tokens(part), 0);
  const completion =
    tokens(content) + toolCalls.reduce((n, c) => n + tokens(c.name) + tokens(c.arguments), 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
}
