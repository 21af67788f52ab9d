/**
 * One structured log line per HTTP request of the delegations API: method, route pattern,
 * status, duration, request id and the caller's identity — never the Authorization header,
 * with secret query values and configured keys replaced (url-secrets.ts, the same decoding the
 * WebSocket's key goes through) and every string passed through {@link maskPII}.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { logLine } from '../../core/log.js';
import { maskPII } from '../../core/pii.js';
import { maskSecretsInUrl } from './url-secrets.js';

/** What one request-log line holds. */
export interface RequestLogLine {
  method: string;
  /** The route pattern (`/delegations/:id`), or `unmatched` for a 404. */
  route: string;
  /** The path and query as sent, with secrets masked. */
  url: string;
  status: number;
  /** Time from the request's arrival to the last byte of the answer (ms, 0.1 ms precision). */
  ms: number;
  request_id: string;
  /** Who called (agent id, or `admin:<name>`), when the key was valid. */
  caller?: string;
}

/** Options of {@link registerRequestLog}. */
export interface RequestLogOptions {
  /** Where lines go (default: taskline's logger, component `delegations.http`, level info). */
  sink?: (line: RequestLogLine) => void;
  /** Who the request's key belongs to, if known. */
  callerOf?: (request: FastifyRequest) => string | undefined;
  /** True for text that is a configured API key (masked wherever it appears in the URL). */
  isKey?: (text: string) => boolean;
}

/** The URL as it may appear in a log: secret query values and keys masked, then PII masked. */
export function maskUrl(url: string, isKey?: (text: string) => boolean): string {
  return maskPII(maskSecretsInUrl(url, isKey));
}

/** Registers the `onResponse` hook that writes one line per request. */
export function registerRequestLog(app: FastifyInstance, options: RequestLogOptions = {}): void {
  const sink =
    options.sink ??
    ((line: RequestLogLine) => logLine('delegations.http', 'info', 'http request', { ...line }));
  app.addHook('onResponse', async (request, reply) => {
    const caller = options.callerOf?.(request);
    const line: RequestLogLine = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      url: maskUrl(request.url, options.isKey),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      request_id: String(request.id),
      ...(caller !== undefined ? { caller } : {}),
    };
    try {
      sink(line);
    } catch {
      // A broken log sink never fails a request.
    }
  });
}
