/**
 * The delegations server's bounds on connections (its HTTP server, below the routes): time
 * limits for a request to arrive, caps on open connections in total and per address, and the
 * answers Node's own errors get — all in the API's envelope.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Bounds on connections, so no client — with a key or without — can hold the server's sockets:
 * every request must arrive whole within a time limit, and connections and WebSocket clients
 * are capped in total and per client.
 */
export interface ServerLimits {
  /** A request (headers and body) must arrive whole within this long, or it gets 408 and is closed (default 30 s). */
  requestTimeoutMs?: number;
  /** The headers must arrive within this long (default 10 s; at most `requestTimeoutMs`). */
  headersTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this long (default 5 s). */
  keepAliveTimeoutMs?: number;
  /** A connection with no traffic at all is closed after this long (default 60 s; WebSockets exempt). */
  idleTimeoutMs?: number;
  /** Most open connections, WebSockets included (default 1,024); more are answered 503 and closed. */
  maxConnections?: number;
  /** Most open connections from one IP address (default 256; 0: no per-address cap, e.g. behind a proxy). */
  maxConnectionsPerIp?: number;
  /** Most WebSocket clients at once (default 1,000). */
  maxWebSockets?: number;
  /** Most WebSocket clients of one key (default 32); more are refused with 429. */
  maxWebSocketsPerKey?: number;
}

/** The default {@link ServerLimits}. */
export const DEFAULT_LIMITS: Required<ServerLimits> = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  idleTimeoutMs: 60_000,
  maxConnections: 1_024,
  maxConnectionsPerIp: 256,
  maxWebSockets: 1_000,
  maxWebSocketsPerKey: 32,
};

/** A plain HTTP answer written straight to a socket the server will not serve. */
function refuseSocket(socket: Socket, message: string): void {
  const body = JSON.stringify({ success: false, code: 'unavailable', message });
  socket.end(
    `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nRetry-After: 5\r\n\r\n${body}`,
  );
  socket.destroySoon();
}

/** Caps connections in total and per remote address on `server` (see {@link ServerLimits}). */
export function capConnections(
  server: FastifyInstance['server'],
  limits: Required<ServerLimits>,
): void {
  const byAddress = new Map<string, number>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const mine = byAddress.get(address) ?? 0;
    if (open >= limits.maxConnections) {
      refuseSocket(
        socket,
        `The server has its maximum of ${limits.maxConnections} connections; try again later.`,
      );
      return;
    }
    if (limits.maxConnectionsPerIp > 0 && mine >= limits.maxConnectionsPerIp) {
      refuseSocket(
        socket,
        `Too many connections from ${address} (${limits.maxConnectionsPerIp}); close some first.`,
      );
      return;
    }
    open += 1;
    byAddress.set(address, mine + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left > 0) byAddress.set(address, left);
      else byAddress.delete(address);
    });
  });
}

/**
 * What Node reports about a connection before any route runs (a request past its time, headers
 * too large, bytes that are not HTTP), answered in the envelope like every other error.
 */
export function clientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'The request did not arrive whole in time; send it at once.']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'The request headers are too large.']
        : [400, 'Bad Request', 'The request is not valid HTTP.'];
  const body = JSON.stringify({ success: false, code: 'bad_request', message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
