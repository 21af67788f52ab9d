import type { WebSocket } from 'ws';
import { RecentKeys } from '../bus/dedupe.js';
import type { DelegationEvent } from '../bus/events.js';
import type { BusSubscription, DelegationBus } from '../bus/types.js';
import { canSee, type Identity, ownerOf } from './auth.js';

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
  owner: string;
  seen: RecentKeys;
}

/** Caps of {@link DelegationEventsHub}. */
export interface EventsHubLimits {
  /** Most WebSocket clients at once (default 1,000). */
  maxClients?: number;
  /** Most WebSocket clients of one key holder at once (default 32). */
  maxClientsPerKey?: number;
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
  private readonly perOwner = new Map<string, number>();
  private subscription?: BusSubscription;
  /** Most clients at once. */
  readonly maxClients: number;
  /** Most clients of one key holder at once. */
  readonly maxClientsPerKey: number;

  constructor(limits: EventsHubLimits = {}) {
    this.maxClients = limits.maxClients ?? 1_000;
    this.maxClientsPerKey = limits.maxClientsPerKey ?? 32;
  }

  /** Why a new client of `identity` would be refused now, or undefined if it fits. */
  refusal(identity: Identity): string | undefined {
    if (this.clients.size >= this.maxClients) {
      return `The server has its maximum of ${this.maxClients} WebSocket clients; try again later.`;
    }
    if ((this.perOwner.get(ownerOf(identity)) ?? 0) >= this.maxClientsPerKey) {
      return `This key already has ${this.maxClientsPerKey} WebSocket clients open; close one first.`;
    }
    return undefined;
  }

  /** Starts watching the bus. */
  async start(bus: DelegationBus): Promise<void> {
    this.subscription = await bus.watch((event) => this.dispatch(event));
  }

  /**
   * Adds a connected, authenticated client and sends `{type:"ready"}` once it will get changes;
   * over a cap, closes it at once (1013, try again later) and returns false.
   */
  add(socket: WebSocket, identity: Identity): boolean {
    const refused = this.refusal(identity);
    if (refused) {
      socket.close(1013, refused.slice(0, 120));
      return false;
    }
    const owner = ownerOf(identity);
    const client: Client = { socket, identity, owner, seen: new RecentKeys(2_000) };
    this.clients.add(client);
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    socket.on('close', () => this.remove(client));
    socket.on('error', () => this.remove(client));
    socket.send(JSON.stringify({ type: 'ready', data: { identity } }));
    return true;
  }

  private remove(client: Client): void {
    if (!this.clients.delete(client)) return;
    const left = (this.perOwner.get(client.owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(client.owner, left);
    else this.perOwner.delete(client.owner);
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
      this.remove(client);
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
    this.perOwner.clear();
  }
}
