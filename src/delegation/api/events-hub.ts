import type { WebSocket } from 'ws';
import { RecentKeys } from '../bus/dedupe.js';
import type { DelegationEvent } from '../bus/events.js';
import type { BusSubscription, DelegationBus } from '../bus/types.js';
import { canSee, type Identity } from './auth.js';

/** What a WebSocket client receives for each change it may see. */
export interface StatusChangeMessage {
  type: 'delegation';
  data: Pick<
    DelegationEvent,
    'delegation_id' | 'incarnation' | 'version' | 'change' | 'stage' | 'state' | 'time' | 'record'
  >;
}

interface Client {
  socket: WebSocket;
  identity: Identity;
  seen: RecentKeys;
}

/** A client whose unsent data exceeds this is too slow and is disconnected. */
const MAX_BUFFERED = 1 << 20;

/**
 * Fans bus events out to WebSocket clients: one `watch` on the bus for the whole server, and
 * per client only the changes its identity may see (a party to the record, or the agent the
 * event is addressed to; admins see all), once per version of each incarnation of a record.
 */
export class DelegationEventsHub {
  private readonly clients = new Set<Client>();
  private subscription?: BusSubscription;

  /** Starts watching the bus. */
  async start(bus: DelegationBus): Promise<void> {
    this.subscription = await bus.watch((event) => this.dispatch(event));
  }

  /** Adds a connected, authenticated client; sends `{type:"ready"}` once it will get changes. */
  add(socket: WebSocket, identity: Identity): void {
    const client: Client = { socket, identity, seen: new RecentKeys(2_000) };
    this.clients.add(client);
    socket.on('close', () => this.clients.delete(client));
    socket.on('error', () => this.clients.delete(client));
    socket.send(JSON.stringify({ type: 'ready', data: { identity } }));
  }

  private dispatch(event: DelegationEvent): void {
    const message: StatusChangeMessage = {
      type: 'delegation',
      data: {
        delegation_id: event.delegation_id,
        incarnation: event.incarnation,
        version: event.version,
        change: event.change,
        time: event.time,
        record: event.record,
        ...(event.stage !== undefined ? { stage: event.stage } : {}),
        ...(event.state !== undefined ? { state: event.state } : {}),
      },
    };
    let text: string | undefined;
    const key = `${event.delegation_id}\u0000${event.incarnation}\u0000${event.version}`;
    for (const client of this.clients) {
      const { identity } = client;
      const allowed =
        canSee(identity, event.record) || (!identity.admin && event.to === identity.agent);
      if (!allowed || !client.seen.add(key)) continue;
      text ??= JSON.stringify(message);
      this.send(client, text);
    }
  }

  /** Sends a message (a live call's change) to every client `visible` admits. */
  broadcast(message: unknown, visible: (identity: Identity) => boolean): void {
    let text: string | undefined;
    for (const client of this.clients) {
      if (!visible(client.identity)) continue;
      text ??= JSON.stringify(message);
      this.send(client, text);
    }
  }

  /** Sends to one client, or drops a client that has fallen too far behind to catch up. */
  private send(client: Client, text: string): void {
    if (client.socket.bufferedAmount > MAX_BUFFERED) {
      client.socket.close(1013, 'Client too slow; reconnect and query for missed changes.');
      this.clients.delete(client);
      return;
    }
    client.socket.send(text);
  }

  /** Number of connected clients. */
  get size(): number {
    return this.clients.size;
  }

  /** Stops watching and disconnects every client. */
  async close(): Promise<void> {
    await this.subscription?.close();
    for (const c of this.clients) c.socket.close(1001, 'Server shutting down.');
    this.clients.clear();
  }
}
