/**
 * A local OpenAI-compatible chat-completions server for tests: the real
 * `@livekit/agents-plugin-openai` LLM talks to it over HTTP, offline, and every reply is
 * scripted. It answers `POST /v1/chat/completions`, streaming (Server-Sent Events in
 * OpenAI's `chat.completion.chunk` format) or not, and records every request it receives.
 * `GET /v1/models` is answered too, because `openai.LLM.prewarm()` calls it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TasklineErrorCode } from '../core/errors.js';
import { isTasklineError } from '../core/errors.js';
import {
  type Answer,
  completionBody,
  estimateUsage,
  type OpenAIFault,
  sendJson,
  sendStream,
} from './openai-wire.js';

export type { OpenAIFault, OpenAIFaultPoint } from './openai-wire.js';

/** One scripted model reply. */
export interface OpenAIReply {
  content?: string;
  /**
   * Tool calls; `rawArguments` replaces the JSON of `args` on the wire (e.g. a truncated
   * `{"q":"bal` to test what a client does with arguments it cannot parse).
   */
  toolCalls?: Array<{ name: string; args: Record<string, unknown>; rawArguments?: string }>;
  /** A fault to inject into this reply instead of answering it cleanly. */
  fault?: OpenAIFault;
}

/** A fault the server injected, for assertions (not counted in `unexpected`). */
export interface InjectedFault {
  /** The request index it answered. */
  index: number;
  fault: OpenAIFault;
}

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

/** Computes the reply to a request; `index` counts valid chat requests from 0. */
export type OpenAIResponder = (
  request: OpenAIChatRequest,
  index: number,
) => OpenAIReply | Promise<OpenAIReply>;

/** A request the server answered with an error instead of a scripted reply. */
export interface FakeOpenAIFailure {
  status: number;
  code: string;
  message: string;
  /** The request index when the body was a valid chat request, otherwise undefined. */
  index?: number;
}

/** A running fake server; point `openai.LLM({ baseURL: server.url })` at it. */
export interface FakeOpenAIServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** Every valid chat request received, in arrival order (including unscripted ones). */
  requests: OpenAIChatRequest[];
  /** Every error answer given (script exhausted, bad body, unknown route, responder threw). */
  failures: FakeOpenAIFailure[];
  /** Every fault injected on purpose (`reply.fault`), in order. */
  faults: InjectedFault[];
  /** How many requests got an error answer; a well-scripted test expects 0. */
  readonly unexpected: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Options for {@link startFakeOpenAI}. */
export interface FakeOpenAIOptions {
  /** Port to listen on (127.0.0.1); 0, the default, picks a free one. */
  port?: number;
  /**
   * The only API key accepted. When set, a request with another key (or none) gets HTTP 401
   * `invalid_api_key`, as OpenAI answers a wrong key. Any key is accepted when omitted.
   */
  apiKey?: string;
  /**
   * Reject a history whose tool calls and tool results do not pair up (HTTP 400
   * `invalid_request`), as OpenAI does: every assistant `tool_calls` entry must be answered
   * by a following `tool` message, and every `tool` message must answer one. Off by default.
   */
  strictToolHistory?: boolean;
  /**
   * More routes (e.g. the speech endpoints of `speech-endpoints.ts`): asked first, after the
   * API key check; resolves true when it answered the request.
   */
  extraRoutes?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;
}

/** Stable error code sent (and recorded) when a list script has no reply left. */
export const SCRIPT_EXHAUSTED: TasklineErrorCode = 'script_exhausted';

const CHAT_PATH = '/v1/chat/completions';
const MODELS_PATH = '/v1/models';
const MAX_BODY_BYTES = 16 * 1024 * 1024;

class HttpError extends Error {
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

/**
 * Starts a fake OpenAI server on 127.0.0.1. A list script is answered in order; once it
 * runs out every further request gets HTTP 500 with code `script_exhausted`, which is
 * counted in `unexpected` and listed in `failures`.
 */
export async function startFakeOpenAI(
  script: OpenAIReply[] | OpenAIResponder,
  options: FakeOpenAIOptions = {},
): Promise<FakeOpenAIServer> {
  const requests: OpenAIChatRequest[] = [];
  const failures: FakeOpenAIFailure[] = [];
  const faults: InjectedFault[] = [];
  const responder = toResponder(script);
  const ids = { completion: 0, toolCall: 0 };

  const fail = (res: ServerResponse, err: HttpError, index?: number): void => {
    failures.push({ status: err.status, code: err.code, message: err.message, index });
    sendJson(res, err.status, {
      error: { message: err.message, type: err.type, param: err.param, code: err.code },
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return fail(
        res,
        new HttpError(
          401,
          'invalid_request_error',
          'invalid_api_key',
          'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
        ),
      );
    }
    if (options.extraRoutes && (await options.extraRoutes(req, res, path ?? '/'))) return;
    if (path === MODELS_PATH && req.method === 'GET') {
      // openai.LLM.prewarm() lists models to open a connection early; answer, don't record.
      const models = [...new Set(requests.map((r) => r.model))];
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'taskline' })),
      });
    }
    if (path !== CHAT_PATH) {
      return fail(
        res,
        new HttpError(
          404,
          'invalid_request_error',
          'unknown_url',
          `Unknown route ${req.method} ${path}: the fake OpenAI server serves POST ${CHAT_PATH} ` +
            `and GET ${MODELS_PATH} only.`,
        ),
      );
    }
    if (req.method !== 'POST') {
      return fail(
        res,
        new HttpError(
          405,
          'invalid_request_error',
          'method_not_allowed',
          `Use POST for ${CHAT_PATH}, not ${req.method}.`,
        ),
      );
    }
    let request: OpenAIChatRequest;
    try {
      request = parseChatRequest(await readBody(req));
      if (options.strictToolHistory) checkToolHistory(request.messages);
    } catch (err) {
      if (err instanceof HttpError) return fail(res, err);
      throw err;
    }
    const index = requests.length;
    requests.push(request);

    let reply: OpenAIReply;
    try {
      reply = await responder(request, index);
    } catch (err) {
      if (err instanceof HttpError) return fail(res, err, index);
      const code = isTasklineError(err) ? err.code : 'responder_error';
      const message = err instanceof Error ? err.message : String(err);
      return fail(res, new HttpError(500, 'server_error', code, message), index);
    }
    if (res.destroyed) return;
    const fault = reply.fault;
    if (fault) faults.push({ index, fault });
    if (fault?.kind === 'status') {
      return sendJson(res, fault.status, {
        error: {
          message: fault.message ?? `Injected HTTP ${fault.status}.`,
          type: fault.status >= 500 ? 'server_error' : 'invalid_request_error',
          param: null,
          code: 'injected_fault',
        },
      });
    }

    const completionId = `chatcmpl-${++ids.completion}`;
    const toolCalls = (reply.toolCalls ?? []).map((call) => ({
      id: `call_${++ids.toolCall}`,
      name: call.name,
      arguments: call.rawArguments ?? JSON.stringify(call.args),
    }));
    const answer: Answer = {
      id: completionId,
      model: request.model,
      created: Math.floor(Date.now() / 1000),
      content: reply.content ?? '',
      toolCalls,
      usage: estimateUsage(
        [JSON.stringify(request.messages), JSON.stringify(request.tools ?? [])],
        reply.content ?? '',
        toolCalls,
      ),
    };
    if (request.stream) {
      sendStream(res, answer, request.stream_options?.include_usage === true, fault);
    } else if (fault) {
      // A fault in a non-streamed reply breaks the body the same way.
      res.destroy();
    } else {
      sendJson(res, 200, completionBody(answer));
    }
  };

  const server = createServer((req, res) => {
    res.on('error', () => {
      // The client went away (e.g. an interrupted generation); nothing to answer.
    });
    handle(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (res.headersSent) {
        res.destroy();
        failures.push({ status: 500, code: 'internal_error', message });
        return;
      }
      fail(res, new HttpError(500, 'server_error', 'internal_error', message));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    failures,
    faults,
    get unexpected() {
      return failures.length;
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function toResponder(script: OpenAIReply[] | OpenAIResponder): OpenAIResponder {
  if (typeof script === 'function') return script;
  const replies = [...script];
  return (_request, index) => {
    const reply = replies[index];
    if (reply === undefined) {
      throw new HttpError(
        500,
        'server_error',
        SCRIPT_EXHAUSTED,
        `Fake OpenAI script exhausted: request #${index + 1} arrived but only ${replies.length} ` +
          `repl${replies.length === 1 ? 'y was' : 'ies were'} scripted. Add a reply for it, or ` +
          `check server.requests to see why the model was called again.`,
      );
    }
    return reply;
  };
}

// ---------------------------------------------------------------------------------------
// Request parsing

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new HttpError(413, 'invalid_request_error', 'body_too_large', 'Request body too large.'),
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

function invalid(message: string, param: string | null = null): HttpError {
  return new HttpError(400, 'invalid_request_error', 'invalid_request', message, param);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown, param: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`'${param}' must be a string.`, param);
  return value;
}

/** Parses and minimally validates a chat-completions body; throws a 400 HttpError. */
function parseChatRequest(text: string): OpenAIChatRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new HttpError(
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
function checkToolHistory(messages: readonly OpenAIChatMessage[]): void {
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
