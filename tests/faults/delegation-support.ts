// What the delegation fault tests share: a TCP proxy in front of the shared NATS server that a
// test can take down and bring back (without touching the server other tests use), and
// per-run JetStream prefixes that are cleaned up afterwards.
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';

/** The NATS server the tests use. */
export const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';

/** A JetStream prefix unique to this run (streams named after it). */
export function natsPrefix(tag: string): string {
  return `${tag}${process.pid}_${randomBytes(3).toString('hex')}`;
}

/** Deletes the streams of a prefix. */
export async function dropNatsPrefix(prefix: string): Promise<void> {
  const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, contract: false });
  await bus.deleteStream();
  await bus.close();
}

/** A proxy the test controls. */
export interface FaultProxy {
  /** `host:port` to connect to instead of the real server. */
  readonly address: string;
  /** Cuts every open connection and refuses new ones until {@link back}. */
  down(): void;
  /** Lets connections through again. */
  back(): void;
  /** Connections cut so far. */
  readonly cut: number;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port that forwards to `target` (`host:port`). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const [host, port] = target.replace(/^nats:\/\//, '').split(':');
  const pairs = new Set<[Socket, Socket]>();
  let up = true;
  let cut = 0;
  const server: Server = createServer((client) => {
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port ?? 4222), host ?? '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    address: `127.0.0.1:${address.port}`,
    get cut() {
      return cut;
    },
    down() {
      up = false;
      for (const [a, b] of [...pairs]) {
        cut++;
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    back() {
      up = true;
    },
    async close() {
      up = false;
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
