/**
 * The guardian as a running service: one HTTP listener for the LiveKit server's webhooks
 * (`POST /webhook`), the jobs' lifelines (`GET /lifeline`, upgraded) and a health check
 * (`GET /health`), over one {@link Guardian}. `taskline guardian` starts it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEvent } from 'livekit-server-sdk';
import { TasklineError } from '../../core/errors.js';
import { logLine } from '../../core/log.js';
import { loadOptional } from '../../core/optional.js';
import { Guardian, type GuardianDecision } from './guardian.js';
import { Lifelines } from './lifelines.js';
import { type Hello, LIFELINE_PATH } from './protocol.js';
import { liveKitServerApi, type ServerApi } from './server-api.js';
import { webhookHandler } from './webhooks.js';

/** The path the LiveKit server posts webhooks to. */
export const WEBHOOK_PATH = '/webhook';

/** Options for {@link startGuardian}. */
export interface StartGuardianOptions {
  /** The LiveKit server (ws:// or http://), as workers are given it. */
  url: string;
  apiKey: string;
  apiSecret: string;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 7890; 0 picks a free one). */
  port?: number;
  /** Most re-dispatches per call (default 2). */
  maxRedispatches?: number;
  /** Only these agent names are re-dispatched (default: every agent). */
  agentNames?: readonly string[];
  /** How long a re-dispatch may take to bring its agent in (default 60,000 ms). */
  joinWithinMs?: number;
  /** Bound of each request to the LiveKit server (default 5,000 ms). */
  requestTimeoutMs?: number;
  /** Most lifelines at once (default 10,000). */
  maxLifelines?: number;
  /** Called with every decision (after it is logged). */
  onDecision?: (decision: GuardianDecision) => void;
  /** Called with every verified webhook, after the guardian applied it. */
  onWebhook?: (event: WebhookEvent) => void;
  /** Called when a job's lifeline says hello (`joined`), `done` (`left`), or breaks (`lost`). */
  onLifeline?: (event: 'joined' | 'left' | 'lost', call: Hello) => void;
  /** Instead of livekit-server-sdk (tests of the decisions alone). */
  server?: ServerApi;
}

/** A running guardian. */
export interface RunningGuardian {
  /** Its base URL (`http://127.0.0.1:7890`): workers' `TASKLINE_GUARDIAN_URL`. */
  readonly url: string;
  /** The URL to configure as the LiveKit server's webhook. */
  readonly webhookUrl: string;
  readonly guardian: Guardian;
  /** Lifelines open now. */
  lifelines(): number;
  /** Stops listening and closes every lifeline (no job is judged for it). */
  close(): Promise<void>;
}

function checkPositive(name: string, value: number | undefined, min: number): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= min)) {
    throw new TasklineError(
      'invalid_argument',
      `${name} must be a whole number of at least ${min} (got ${String(value)}).`,
    );
  }
}

/** Starts the guardian's listener; resolves once it listens. */
export async function startGuardian(options: StartGuardianOptions): Promise<RunningGuardian> {
  if (!options.apiKey || !options.apiSecret) {
    throw new TasklineError(
      'invalid_argument',
      'The guardian needs the LiveKit API key and secret (LIVEKIT_API_KEY, LIVEKIT_API_SECRET).',
    );
  }
  checkPositive('maxRedispatches', options.maxRedispatches, 0);
  checkPositive('port', options.port, 0);
  checkPositive('joinWithinMs', options.joinWithinMs, 1_000);
  const sdk = await loadOptional(
    () => import('livekit-server-sdk'),
    'livekit-server-sdk',
    'the guardian (re-dispatching calls)',
  );
  const server =
    options.server ??
    (await liveKitServerApi({
      url: options.url,
      apiKey: options.apiKey,
      apiSecret: options.apiSecret,
      ...(options.requestTimeoutMs !== undefined ? { timeoutMs: options.requestTimeoutMs } : {}),
    }));
  const guardian = new Guardian({
    server,
    ...(options.maxRedispatches !== undefined ? { maxRedispatches: options.maxRedispatches } : {}),
    ...(options.agentNames ? { agentNames: options.agentNames } : {}),
    ...(options.joinWithinMs !== undefined ? { joinWithinMs: options.joinWithinMs } : {}),
    onDecision: (d) => {
      logLine('taskline.guardian', d.action === 'failed' ? 'error' : 'info', `call ${d.action}`, {
        ...d,
      });
      options.onDecision?.(d);
    },
  });
  const verifier = new sdk.TokenVerifier(options.apiKey, options.apiSecret);
  const lifelines = new Lifelines({
    ...(options.maxLifelines !== undefined ? { maxLifelines: options.maxLifelines } : {}),
    async verify(token) {
      const claims = await verifier.verify(token);
      const room = claims.video?.room;
      if (!claims.sub || !room || claims.video?.agent !== true) {
        throw new TasklineError('invalid_argument', 'not a lifeline token');
      }
      return { identity: claims.sub, room };
    },
    handlers: {
      joined: (call) => {
        guardian.agentJoined(call.room, call.agentName);
        options.onLifeline?.('joined', call);
      },
      left: (call) => {
        guardian.agentLeft(call.room, call.identity);
        options.onLifeline?.('left', call);
      },
      lost: (call, how) => {
        options.onLifeline?.('lost', call);
        void guardian.agentLost({
          room: call.room,
          identity: call.identity,
          agentName: call.agentName,
          jobId: call.jobId,
          source: 'lifeline',
          reason: `job ${call.jobId}: ${how}`,
        });
      },
    },
  });
  const onWebhook = webhookHandler(
    guardian,
    new sdk.WebhookReceiver(options.apiKey, options.apiSecret),
    options.onWebhook,
  );
  const http: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === WEBHOOK_PATH) return onWebhook(req, res);
    if (req.method === 'GET' && path === '/health') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, lifelines: lifelines.size }));
      return;
    }
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  http.requestTimeout = 30_000;
  http.headersTimeout = 10_000;
  http.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== LIFELINE_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    lifelines.upgrade(req, socket as import('node:net').Socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 7890, options.host ?? '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  return {
    url,
    webhookUrl: `${url}${WEBHOOK_PATH}`,
    guardian,
    lifelines: () => lifelines.size,
    async close() {
      lifelines.closeAll();
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    },
  };
}
