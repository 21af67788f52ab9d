/**
 * The guardian's side of the lifelines (see ./protocol.ts): accepts each job's upgrade
 * (token checked before anything is read), learns which call it serves from its `hello`, and
 * reports how the lifeline ended: `done` (the job left on purpose), closed by the peer without
 * `done` (its process ended: a crash), or silent past the idle bound (left to the server's
 * webhooks, since a silent link proves nothing). Bounded: lifelines in all, time to `hello`,
 * idle time, line length.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { LineReader, writeLine } from './lines.js';
import { BEAT_INTERVAL_MS, Hello, JobLine, LIFELINE_PROTOCOL } from './protocol.js';

/** What the token of a lifeline says: the job and its room. */
export interface LifelineClaims {
  identity: string;
  room: string;
}

/** How the guardian hears about lifelines. */
export interface LifelineHandlers {
  /** A job said which call it serves. */
  joined(call: Hello): void;
  /** A job left its call on purpose (`done`). */
  left(call: Hello, reason: string): void;
  /** A job's lifeline closed without `done`: its process ended. */
  lost(call: Hello, how: string): void;
}

/** Options for {@link Lifelines}. */
export interface LifelinesOptions {
  /** Checks a bearer token; rejects when it is not one of ours. */
  verify(token: string): Promise<LifelineClaims>;
  handlers: LifelineHandlers;
  /** Most lifelines open at once (default 10,000; more are refused with 503). */
  maxLifelines?: number;
  /** A job must say `hello` within this (default 10,000 ms). */
  helloTimeoutMs?: number;
  /** A lifeline silent this long is dropped without judging the job (default 3 beats). */
  idleTimeoutMs?: number;
}

/** One open lifeline. */
interface Open {
  socket: Socket;
  call?: Hello;
  ended: boolean;
}

/** Every open lifeline of a guardian. */
export class Lifelines {
  readonly #open = new Set<Open>();
  readonly #options: LifelinesOptions;
  #closing = false;

  constructor(options: LifelinesOptions) {
    this.#options = options;
  }

  /** Lifelines open now. */
  get size(): number {
    return this.#open.size;
  }

  /** The calls whose lifelines are open now. */
  calls(): Hello[] {
    return [...this.#open].flatMap((o) => (o.call && !o.ended ? [o.call] : []));
  }

  /** Handles an HTTP upgrade to a lifeline (the server's `upgrade` event). */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => undefined);
    const wanted = String(req.headers.upgrade ?? '').toLowerCase();
    const auth = String(req.headers.authorization ?? '');
    const token = /^Bearer (\S+)$/.exec(auth)?.[1];
    const refusal =
      wanted !== LIFELINE_PROTOCOL
        ? ([400, 'unknown upgrade'] as const)
        : this.#closing
          ? ([503, 'guardian closing'] as const)
          : this.#open.size >= (this.#options.maxLifelines ?? 10_000)
            ? ([503, 'too many lifelines'] as const)
            : !token
              ? ([401, 'missing bearer token'] as const)
              : undefined;
    if (refusal || !token) {
      refuse(socket, refusal?.[0] ?? 401, refusal?.[1] ?? 'missing bearer token');
      return;
    }
    const open: Open = { socket, ended: false };
    // Counted from now, so a flood of slow token checks stays within the bound.
    this.#open.add(open);
    socket.pause();
    this.#options.verify(token).then(
      (claims) => this.#accept(open, claims, head),
      () => {
        this.#open.delete(open);
        refuse(socket, 401, 'invalid token');
      },
    );
  }

  /** Closes every lifeline without judging any job (the guardian is stopping). */
  closeAll(): void {
    this.#closing = true;
    for (const open of this.#open) {
      open.ended = true;
      open.socket.destroy();
    }
    this.#open.clear();
  }

  #accept(open: Open, claims: LifelineClaims, head: Buffer): void {
    const { socket } = open;
    if (socket.destroyed || this.#closing) {
      this.#open.delete(open);
      socket.destroy();
      return;
    }
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${LIFELINE_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`,
    );
    socket.setNoDelay(true);
    const helloTimer = setTimeout(() => this.#drop(open), this.#options.helloTimeoutMs ?? 10_000);
    socket.setTimeout(this.#options.idleTimeoutMs ?? BEAT_INTERVAL_MS * 3, () => this.#drop(open));
    const reader = new LineReader(
      (value) => {
        if (!open.call) {
          const hello = Hello.safeParse(value);
          if (
            !hello.success ||
            hello.data.jobId !== claims.identity ||
            hello.data.room !== claims.room
          ) {
            this.#drop(open);
            return;
          }
          clearTimeout(helloTimer);
          open.call = hello.data;
          writeLine(socket, { type: 'welcome' });
          this.#options.handlers.joined(hello.data);
          return;
        }
        const line = JobLine.safeParse(value);
        if (!line.success) {
          this.#drop(open);
          return;
        }
        if (line.data.type === 'done' && !open.ended) {
          open.ended = true;
          this.#options.handlers.left(open.call, line.data.reason);
          writeLine(socket, { type: 'bye' });
          socket.end();
        }
      },
      () => this.#drop(open),
    );
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    // The peer's kernel closed the connection (FIN or RST): its process is gone, or it closed
    // the socket itself, which a job only does after `done`.
    const peerClosed = (how: string) => {
      clearTimeout(helloTimer);
      reader.stop();
      this.#open.delete(open);
      if (open.ended || this.#closing) return;
      open.ended = true;
      if (open.call) this.#options.handlers.lost(open.call, how);
    };
    socket.on('end', () => peerClosed('the lifeline closed without done'));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      peerClosed(`the lifeline broke (${error.code ?? error.message})`),
    );
    socket.on('close', () => peerClosed('the lifeline closed without done'));
    if (head.length > 0) reader.push(head);
    socket.resume();
  }

  /** Ends a lifeline without judging its job (silent, malformed, or never said hello). */
  #drop(open: Open): void {
    open.ended = true;
    this.#open.delete(open);
    open.socket.destroy();
  }
}

function refuse(socket: Socket, status: number, why: string): void {
  const text = { 400: 'Bad Request', 401: 'Unauthorized', 503: 'Service Unavailable' }[status];
  if (!socket.destroyed) {
    socket.end(
      `HTTP/1.1 ${status} ${text ?? 'Error'}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(why)}\r\n\r\n${why}`,
    );
  }
}
