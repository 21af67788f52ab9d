/**
 * Request side of the fake OpenAI server (./openai-server.ts): reading a body within a size
 * cap, parsing and minimally validating a chat-completions request as OpenAI does, with the
 * same HTTP 400 error shapes, and the typed request tests assert on.
 */
import type { IncomingMessage } from 'node:http';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A tool call as it appears in an assistant message of a request. */
export interface OpenAIRequestToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/** One part of a multi-part message content (text, image, ...). */
export interface OpenAIContentPart {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
}

/** The message roles OpenAI's chat-completions API accepts. */
export type OpenAIRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

const ROLES: ReadonlySet<string> = new Set<OpenAIRole>([
  'system',
  'developer',
  'user',
  'assistant',
  'tool',
  'function',
]);

function isRole(value: unknown): value is OpenAIRole {
  return typeof value === 'string' && ROLES.has(value);
}

/** A chat message as a client sent it, typed for assertions. */
export interface OpenAIChatMessage {
  role: OpenAIRole;
  content: string | OpenAIContentPart[] | null;
  name?: string;
  tool_calls?: OpenAIRequestToolCall[];
  tool_call_id?: string;
}

/** A function tool the client offered the model. */
export interface OpenAIToolDefinition {
  type: string;
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean;
  };
}

/** A parsed `POST /v1/chat/completions` body, so tests can assert on what the model was sent. */
export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIChatMessage[];
  tools?: OpenAIToolDefinition[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  stream: boolean;
  stream_options?: { include_usage?: boolean };
  /** The whole JSON body, for fields not typed above (temperature, reasoning_effort, ...). */
  raw: Record<string, unknown>;
}

/** An error answer: HTTP status and OpenAI's error `type`, `code` and `param`. */
export class OpenAIHttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** Reads a request body, refusing one over 16 MiB (HTTP 413). */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new OpenAIHttpError(
            413,
            'invalid_request_error',
            'body_too_large',
            'Request body too large.',
          ),
        );
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function invalid(message: string, param: string | null = null): OpenAIHttpError {
  return new OpenAIHttpError(400, 'invalid_request_error', 'invalid_request', message, param);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`'${param}' must be a string.`, param);
  return value;
}

/** Parses and minimally validates a chat-completions body; throws a 400 OpenAIHttpError. */
export function parseChatRequest(text: string): OpenAIChatRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new OpenAIHttpError(
      400,
      'invalid_request_error',
      'invalid_json',
      `We could not parse the JSON body of your request (${detail}). Send a JSON object.`,
    );
  }
  if (!isRecord(body)) throw invalid('The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') {
    throw invalid("'model' is required and must be a non-empty string.", 'model');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw invalid("'messages' is required and must be a non-empty array.", 'messages');
  }
  const messages = body.messages.map((m, i) => parseMessage(m, `messages[${i}]`));
  const request: OpenAIChatRequest = {
    model: body.model,
    messages,
    stream: body.stream === true,
    raw: body,
  };
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) throw invalid("'tools' must be an array.", 'tools');
    request.tools = body.tools.map((t, i) => parseTool(t, `tools[${i}]`));
  }
  if (body.tool_choice !== undefined) request.tool_choice = body.tool_choice;
  if (typeof body.parallel_tool_calls === 'boolean') {
    request.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (isRecord(body.stream_options)) {
    const include = body.stream_options.include_usage;
    request.stream_options = typeof include === 'boolean' ? { include_usage: include } : {};
  }
  return request;
}

/** OpenAI's pairing rule for tool calls and tool results; throws its 400 otherwise. */
export function checkToolHistory(messages: readonly OpenAIChatMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      throw invalid(
        "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'.",
        `messages.[${i}].role`,
      );
    }
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const open = new Set(m.tool_calls.map((c) => c.id));
    let j = i + 1;
    for (; j < messages.length && messages[j]!.role === 'tool'; j++) {
      const id = messages[j]!.tool_call_id ?? '';
      if (!open.delete(id)) {
        throw invalid(
          "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'.",
          `messages.[${j}].role`,
        );
      }
    }
    if (open.size > 0) {
      throw invalid(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
        `messages.[${i}].role`,
      );
    }
    i = j - 1;
  }
}

function parseMessage(value: unknown, param: string): OpenAIChatMessage {
  if (!isRecord(value)) throw invalid(`'${param}' must be an object.`, param);
  if (!isRole(value.role)) {
    throw invalid(`'${param}.role' must be one of ${[...ROLES].join(', ')}.`, `${param}.role`);
  }
  const message: OpenAIChatMessage = {
    role: value.role,
    content: parseContent(value.content, `${param}.content`),
  };
  const name = optionalString(value.name, `${param}.name`);
  if (name !== undefined) message.name = name;
  const toolCallId = optionalString(value.tool_call_id, `${param}.tool_call_id`);
  if (toolCallId !== undefined) message.tool_call_id = toolCallId;
  if (value.tool_calls !== undefined && value.tool_calls !== null) {
    if (!Array.isArray(value.tool_calls)) {
      throw invalid(`'${param}.tool_calls' must be an array.`, param);
    }
    message.tool_calls = value.tool_calls.map((c, i) =>
      parseToolCall(c, `${param}.tool_calls[${i}]`),
    );
  }
  if (message.role === 'tool' && message.tool_call_id === undefined) {
    throw invalid(`'${param}.tool_call_id' is required for a tool message.`, param);
  }
  return message;
}

function parseContent(value: unknown, param: string): string | OpenAIContentPart[] | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) throw invalid(`'${param}' must be a string or an array.`, param);
  return value.map((part, i) => {
    if (!isRecord(part) || typeof part.type !== 'string') {
      throw invalid(`'${param}[${i}]' must be an object with a 'type'.`, param);
    }
    const parsed: OpenAIContentPart = { type: part.type };
    if (typeof part.text === 'string') parsed.text = part.text;
    if (isRecord(part.image_url) && typeof part.image_url.url === 'string') {
      parsed.image_url = { url: part.image_url.url };
      if (typeof part.image_url.detail === 'string')
        parsed.image_url.detail = part.image_url.detail;
    }
    return parsed;
  });
}

function parseToolCall(value: unknown, param: string): OpenAIRequestToolCall {
  if (!isRecord(value) || !isRecord(value.function)) {
    throw invalid(`'${param}' must be an object with a 'function'.`, param);
  }
  const { name, arguments: args } = value.function;
  if (typeof value.id !== 'string' || typeof name !== 'string' || typeof args !== 'string') {
    throw invalid(`'${param}' needs a string id, function.name and function.arguments.`, param);
  }
  return {
    id: value.id,
    type: typeof value.type === 'string' ? value.type : 'function',
    function: { name, arguments: args },
  };
}

function parseTool(value: unknown, param: string): OpenAIToolDefinition {
  const fn = isRecord(value) ? value.function : undefined;
  if (!isRecord(value) || !isRecord(fn) || typeof fn.name !== 'string') {
    throw invalid(`'${param}' must be {type: 'function', function: {name, ...}}.`, param);
  }
  const tool: OpenAIToolDefinition = {
    type: typeof value.type === 'string' ? value.type : 'function',
    function: { name: fn.name },
  };
  const description = optionalString(fn.description, `${param}.function.description`);
  if (description !== undefined) tool.function.description = description;
  if (isRecord(fn.parameters)) tool.function.parameters = fn.parameters;
  if (typeof fn.strict === 'boolean') tool.function.strict = fn.strict;
  return tool;
}
