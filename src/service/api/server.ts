import type {} from '@fastify/websocket';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { loadOptional } from '../../core/optional.js';
import type { DelegationStore } from '../../delegation/record.js';
import { errorMessage, logDelegation } from '../bus/log.js';
import {
  type OutboxPublisher,
  type OutboxPublisherOptions,
  startOutboxPublisher,
} from '../bus/publisher.js';
import type { DelegationBus } from '../bus/types.js';
import type { ResultSchemaRegistry } from '../constraints.js';
import { hasOutbox } from '../stores/change.js';
import type { ApiKeys, Identity } from './auth.js';
import { CallBoard, type CallBoardOptions, registerCallRoutes } from './calls.js';
import { capConnections, clientError, DEFAULT_LIMITS, type ServerLimits } from './connections.js';
import { registerConsole } from './console.js';
import { fail, HttpError, statusOf } from './envelope.js';
import { DelegationEventsHub } from './events-hub.js';
import { type HealthProbe, registerHealth } from './health.js';
import { registerJsonBody } from './json-body.js';
import { type PrometheusMetrics, registerMetrics } from './metrics.js';
import { isPublicRoute } from './public-route.js';
import { type RequestLogOptions, registerRequestLog } from './request-log.js';
import { registerDelegationRoutes } from './routes.js';
import { tokenFromUrl } from './url-secrets.js';

export { DEFAULT_LIMITS, type ServerLimits } from './connections.js';

/** Answers a refusal and closes the connection after it (the client may still be sending). */
function refuseAndClose(reply: FastifyReply, request: FastifyRequest): void {
  reply.header('connection', 'close');
  // A refused upgrade socket is not tracked by the HTTP server: close it ourselves, or it would
  // stay open and hold up shutdown.
  if (request.headers.upgrade !== undefined) {
    reply.raw.once('finish', () => request.raw.socket?.destroy());
  }
}

/** Options of {@link createDelegationsApi}. */
export interface DelegationsApiOptions {
  store: DelegationStore;
  /** Bus whose events the WebSocket pushes (and the outbox publishes to). */
  bus: DelegationBus;
  keys: ApiKeys;
  clock?: Clock;
  /** Result schemas by delegation type, enforced on submit_result. */
  schemas?: ResultSchemaRegistry;
  /** Largest accepted request body in bytes (default 256 KiB); larger is 413. */
  bodyLimit?: number;
  /** Run an outbox publisher for the store (default true when it has an outbox). */
  publisher?: boolean | Omit<OutboxPublisherOptions, 'store' | 'bus'>;
  /**
   * How long a write waits for its events to be published before it answers (default 250 ms on
   * the clock; 0 answers at once). As in the contract, a client that hears "created" finds the
   * event already published; if the bus is slow or down the answer goes out anyway and the
   * outbox publishes later.
   */
  publishBeforeAnswerMs?: number;
  /** `GET /health` (no key): probes by name and their timeout (default: store and bus, 2 s). */
  health?: { probes?: Record<string, HealthProbe>; timeoutMs?: number };
  /** One structured line per request (default on, through taskline's logger); false: none. */
  requestLog?: boolean | RequestLogOptions;
  /** Prometheus metrics: request count/latency by route, served at `GET /metrics` (admin key). */
  metrics?: PrometheusMetrics;
  /** The live console under `/console` (default on; 503 with a hint when it is not built). */
  console?: boolean | { assetsDir?: string };
  /** Live calls reported by voice processes (`POST /calls/events`), pushed on the WebSocket. */
  calls?: CallBoardOptions;
  /** Time limits and caps on connections and WebSocket clients (see {@link DEFAULT_LIMITS}). */
  limits?: ServerLimits;
}

/** A built API: the Fastify app plus lifecycle. */
export interface DelegationsApi {
  app: FastifyInstance;
  /** Listens and resolves the base URL (e.g. `http://127.0.0.1:8787`). */
  listen(options?: { port?: number; host?: string }): Promise<string>;
  /** Closes HTTP, WebSockets, the bus watch and the publisher (not the store or bus). */
  close(): Promise<void>;
}

const FASTIFY_MESSAGES: Record<string, (e: FastifyError, limit: number) => [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) => [413, `Request body is larger than ${limit} bytes.`],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => [
    415,
    'Send the body as JSON with Content-Type: application/json.',
  ],
  FST_ERR_CTP_EMPTY_JSON_BODY: () => [400, 'The JSON body is empty; send a JSON object.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => [400, 'Content-Length does not match the body.'],
};

/**
 * The HTTP + WebSocket API for delegation records, speaking the published wire contract (routes
 * under `/delegations`, the `{ success, data | message }` envelope, integer epoch-second times)
 * with bearer API keys as a documented addition. Fastify and @fastify/websocket load on first
 * call. Every body is validated; bad input is a 4xx in the same envelope, never a 500.
 */
export async function createDelegationsApi(
  options: DelegationsApiOptions,
): Promise<DelegationsApi> {
  const [{ default: Fastify }, { default: websocket }] = await Promise.all([
    loadOptional(() => import('fastify'), 'fastify', 'the delegations HTTP API'),
    loadOptional(
      () => import('@fastify/websocket'),
      '@fastify/websocket',
      'the delegations HTTP API',
    ),
  ]);
  const clock = options.clock ?? systemClock;
  const bodyLimit = options.bodyLimit ?? 256 * 1024;
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const app = Fastify({
    logger: false,
    bodyLimit,
    requestTimeout: limits.requestTimeoutMs,
    clientErrorHandler: clientError,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      // How often Node looks for requests past their time (its default, 30 s, would let a slow
      // request live up to a minute past a 30 s limit).
      connectionsCheckingInterval: Math.max(
        100,
        Math.min(1_000, Math.floor(limits.requestTimeoutMs / 4)),
      ),
    },
    // Ids are up to 200 characters (the record schema); longer path segments get 414.
    routerOptions: { maxParamLength: 256 },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Router-level errors (bad percent-encoding, over-long segments) in the same envelope.
    frameworkErrors: (error, _request, reply) => {
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
        return fail(
          reply,
          414,
          'bad_request',
          'A path segment is longer than 256 characters; ids are at most 200.',
        );
      }
      return fail(reply, 400, 'bad_request', `The URL is not valid: ${error.message}`);
    },
  });
  const identities = new WeakMap<FastifyRequest, Identity>();
  const hub = new DelegationEventsHub({
    maxClients: limits.maxWebSockets,
    maxClientsPerKey: limits.maxWebSocketsPerKey,
  });
  capConnections(app.server, limits);
  registerJsonBody(app, bodyLimit);

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof HttpError) return fail(reply, error.status, error.code, error.message);
    if (error instanceof TasklineError) {
      return fail(reply, statusOf(error.code), error.code, error.message);
    }
    const fe = error as Partial<FastifyError>;
    const mapped = fe.code ? FASTIFY_MESSAGES[fe.code] : undefined;
    if (mapped) {
      const [status, message] = mapped(fe as FastifyError, bodyLimit);
      return fail(reply, status, 'bad_request', message);
    }
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      const message =
        error instanceof SyntaxError || /JSON/i.test(String(fe.message))
          ? `Request body is not valid JSON: ${fe.message}`
          : String(fe.message);
      return fail(reply, fe.statusCode, 'bad_request', message);
    }
    logDelegation('error', 'delegations API internal error', {
      url: request.url,
      error: errorMessage(error),
    });
    return fail(reply, 500, 'internal', 'Internal error; the server log has the details.');
  });

  app.setNotFoundHandler((request, reply) =>
    fail(reply, 404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}.`),
  );

  if (options.requestLog !== false) {
    registerRequestLog(app, {
      callerOf: (request) => {
        const who = identities.get(request);
        return who === undefined ? undefined : who.admin ? `admin:${who.name}` : who.agent;
      },
      isKey: (text) => options.keys.isKey(text),
      ...(typeof options.requestLog === 'object' ? options.requestLog : {}),
    });
  }
  if (options.metrics) {
    registerMetrics(app, { metrics: options.metrics, identityOf: (r) => identities.get(r) });
  }

  app.addHook('onRequest', async (request, reply) => {
    if (isPublicRoute(request)) return;
    // Browsers cannot set headers on a WebSocket: the upgrade may carry ?access_token= instead,
    // read the one way the request log reads it (url-secrets.ts).
    const upgrade = request.headers.upgrade?.toLowerCase() === 'websocket';
    const token = upgrade ? tokenFromUrl(request.url) : undefined;
    if (token === 'ambiguous') {
      refuseAndClose(reply, request);
      return fail(reply, 401, 'unauthorized', 'Send one access_token, not several.');
    }
    const identity = options.keys.resolve(request.headers.authorization ?? token);
    if (identity === 'missing' || identity === 'unknown') {
      refuseAndClose(reply, request);
      return identity === 'missing'
        ? fail(reply, 401, 'unauthorized', 'Send an API key: Authorization: Bearer <key>.')
        : fail(reply, 401, 'unauthorized', 'Unknown API key.');
    }
    identities.set(request, identity);
  });

  const identityOf = (request: FastifyRequest): Identity => {
    const identity = identities.get(request);
    if (!identity)
      throw new HttpError(401, 'unauthorized', 'Send an API key: Authorization: Bearer <key>.');
    return identity;
  };

  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  app.route({
    method: 'GET',
    url: '/delegations/events',
    // A plain GET (no upgrade) gets the envelope, saying how to connect.
    handler: async (_request, reply) => {
      reply.header('upgrade', 'websocket');
      return fail(
        reply,
        426,
        'upgrade_required',
        'GET /delegations/events is a WebSocket: connect with Upgrade: websocket (browsers: ?access_token=<key>).',
      );
    },
    preHandler: async (request, reply) => {
      if (request.headers.upgrade?.toLowerCase() !== 'websocket') return;
      const refused = hub.refusal(identityOf(request));
      if (refused) {
        refuseAndClose(reply, request);
        return fail(reply, 429, 'limit_exceeded', refused);
      }
    },
    wsHandler: (socket, request) => {
      // Clients only listen; anything they send is ignored.
      socket.on('message', () => {});
      hub.add(socket, identityOf(request));
    },
  });

  registerHealth(app, {
    clock,
    probes: options.health?.probes ?? {
      store: () => options.store.get('__taskline_health__'),
      bus: () => options.bus.ping?.() ?? Promise.resolve(),
    },
    ...(options.health?.timeoutMs !== undefined ? { timeoutMs: options.health.timeoutMs } : {}),
  });
  if (options.console !== false) {
    registerConsole(
      app,
      typeof options.console === 'object' ? options.console.assetsDir : undefined,
    );
  }
  const board = new CallBoard((message, visible) => hub.broadcast(message, visible), {
    clock,
    ...options.calls,
  });
  registerCallRoutes(app, board, identityOf);

  let publisher: OutboxPublisher | undefined;
  const waitMs = options.publishBeforeAnswerMs ?? 250;
  const published = async (): Promise<void> => {
    if (!publisher || waitMs <= 0) return;
    let timer: TimerHandle | undefined;
    await Promise.race([
      publisher.drain().catch(() => 0),
      new Promise<void>((resolve) => {
        timer = clock.setTimer(waitMs, resolve);
      }),
    ]);
    timer?.cancel();
  };

  registerDelegationRoutes(app, {
    store: options.store,
    clock,
    identityOf,
    published,
    ...(options.schemas ? { schemas: options.schemas } : {}),
  });

  await hub.start(options.bus);
  if (options.publisher !== false && hasOutbox(options.store)) {
    const tuning = typeof options.publisher === 'object' ? options.publisher : {};
    publisher = startOutboxPublisher({ clock, ...tuning, store: options.store, bus: options.bus });
  }

  return {
    app,
    async listen(opts = {}) {
      const address = await app.listen({ port: opts.port ?? 8787, host: opts.host ?? '127.0.0.1' });
      return address;
    },
    async close() {
      board.close();
      await hub.close();
      await app.close();
      await publisher?.close();
    },
  };
}
