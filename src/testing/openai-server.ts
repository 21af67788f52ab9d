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
  checkToolHistory,
  type OpenAIChatRequest,
  OpenAIHttpError,
  parseChatRequest,
  readBody,
} from './openai-request.js';
import {
  type Answer,
  completionBody,
  estimateUsage,
  type OpenAIFault,
  sendJson,
  sendStream,
} from './openai-wire.js';

export type {
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAIContentPart,
  OpenAIRequestToolCall,
  OpenAIRole,
  OpenAIToolDefinition,
} from './openai-request.js';
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

  const fail = (res: ServerResponse, err: OpenAIHttpError, index?: number): void => {
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
        new OpenAIHttpError(
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
        new OpenAIHttpError(
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
        new OpenAIHttpError(
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
      if (err instanceof OpenAIHttpError) return fail(res, err);
      throw err;
    }
    const index = requests.length;
    requests.push(request);

    let reply: OpenAIReply;
    try {
      reply = await responder(request, index);
    } catch (err) {
      if (err instanceof OpenAIHttpError) return fail(res, err, index);
      const code = isTasklineError(err) ? err.code : 'responder_error';
      const message = err instanceof Error ? err.message : String(err);
      return fail(res, new OpenAIHttpError(500, 'server_error', code, message), index);
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
      fail(res, new OpenAIHttpError(500, 'server_error', 'internal_error', message));
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
      throw new OpenAIHttpError(
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
