/**
 * Free loopback ports the system picks, for what the suite starts beside the shared server
 * (a file's own livekit-server, each worker's health endpoint): processes started at the
 * same time never collide on a fixed number.
 */
import { createSocket } from 'node:dgram';
import { type AddressInfo, createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the system's pick). */
export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A UDP port on 127.0.0.1 that was free a moment ago (the system's pick). */
export function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}
