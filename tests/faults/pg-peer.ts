import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** The Postgres the tests use (TASKLINE_PG_URL, or the local one). */
export const PG_URL = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A URL like PG_URL but on 127.0.0.1:`port` (a test peer in front of, or instead of, PG). */
export function urlOn(port: number): string {
  const url = new URL(PG_URL);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/**
 * A TCP peer for Postgres fault tests: in front of the real server it forwards both ways
 * until `silence()`, after which it accepts connections and reads queries but never answers
 * (a hung server, a dead network path). Started silent, it never answers anything.
 */
export class PgPeer {
  private silent: boolean;
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  port = 0;

  private constructor(silent: boolean) {
    this.silent = silent;
  }

  /** A peer that accepts TCP and never says a word. */
  static async silent(): Promise<PgPeer> {
    return new PgPeer(true).listen();
  }

  /** A forwarding proxy to the test Postgres, until silenced. */
  static async proxy(): Promise<PgPeer> {
    return new PgPeer(false).listen();
  }

  /** Its URL (database and user as in PG_URL). */
  get url(): string {
    return urlOn(this.port);
  }

  /** From now on nothing is forwarded either way; connections stay open. */
  silence(): void {
    this.silent = true;
  }

  private async listen(): Promise<this> {
    const upstream = new URL(PG_URL);
    const server = createServer((client) => {
      this.track(client);
      client.on('error', () => undefined);
      if (this.silent) return;
      const db = createConnection(Number(upstream.port || 5432), upstream.hostname);
      this.track(db);
      db.on('error', () => client.destroy());
      client.on('data', (chunk) => {
        if (!this.silent) db.write(chunk);
      });
      db.on('data', (chunk) => {
        if (!this.silent) client.write(chunk);
      });
      client.on('close', () => db.destroy());
      db.on('close', () => {
        if (!this.silent) client.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** A port nothing listens on (connections are refused). */
export async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
