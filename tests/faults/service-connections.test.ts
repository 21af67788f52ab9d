// Bounds on the delegations server's connections, over real sockets: a request must arrive whole
// in time (slow headers and slow bodies are cut off, with or without a key), connections are
// capped in total and per address, and WebSocket clients in total and per key. Every wait is on
// a socket event with a hard bound (the limits here are short, so the bounds are too).
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ApiKeys } from '../../src/service/api/auth.js';
import {
  createDelegationsApi,
  DEFAULT_LIMITS,
  type ServerLimits,
} from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';

const KEYS = { voice: 'voice-bot-key-0123456789', admin: 'admin-key-0123456789abcdef' };
const dir = mkdtempSync(join(tmpdir(), 'taskline-bounds-'));
let n = 0;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function serve(limits: ServerLimits = {}) {
  const store = await SqliteDelegationStore.open({ path: join(dir, `b-${++n}.db`) });
  const bus = new InProcessDelegationBus();
  const api = await createDelegationsApi({
    store,
    bus,
    requestLog: false,
    limits,
    keys: new ApiKeys([
      { key: KEYS.voice, agent: 'voice-bot' },
      { key: KEYS.admin, admin: true },
    ]),
  });
  const url = await api.listen({ port: 0 });
  cleanups.push(async () => {
    await api.close();
    await bus.close();
    await store.close();
  });
  return { port: Number(new URL(url).port), url };
}

/** A raw connection: what it received, and when it closed (rejects after `boundMs`). */
function open(port: number): { socket: Socket; received: () => string; ready: Promise<void> } {
  const socket = connect({ port, host: '127.0.0.1' });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    text += d;
  });
  socket.on('error', () => {});
  cleanups.push(() => {
    socket.destroy();
  });
  return {
    socket,
    received: () => text,
    ready: new Promise((resolve) => socket.once('connect', () => resolve())),
  };
}

function closedWithin(socket: Socket, boundMs: number): Promise<number> {
  const started = Date.now();
  if (socket.destroyed) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${boundMs} ms`)), boundMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

/** Sends one byte every `everyMs` until the socket closes. */
function trickle(socket: Socket, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer);
    else socket.write('x');
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
  cleanups.push(() => clearInterval(timer));
}

const slowPost = (auth?: string) =>
  `POST /delegations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n${
    auth ? `Authorization: Bearer ${auth}\r\n` : ''
  }\r\n{"a":"`;

describe('requests must arrive whole, in time', () => {
  it('has documented defaults: 30 s per request, connection and WebSocket caps', () => {
    expect(DEFAULT_LIMITS).toMatchObject({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      maxConnections: 1_024,
      maxWebSocketsPerKey: 32,
    });
  });

  it('answers a slow body without a key with 401 and closes it at once (50 of 50)', async () => {
    const { port } = await serve();
    const conns = Array.from({ length: 50 }, () => open(port));
    await Promise.all(conns.map((c) => c.ready));
    for (const c of conns) {
      c.socket.write(slowPost());
      trickle(c.socket, 100);
    }
    await Promise.all(conns.map((c) => closedWithin(c.socket, 10_000)));
    for (const c of conns) expect(c.received()).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('cuts off a slow body with a valid key after requestTimeoutMs (408), and slow headers too', async () => {
    const { port } = await serve({ requestTimeoutMs: 1_000, headersTimeoutMs: 500 });
    const body = open(port);
    const headers = open(port);
    await Promise.all([body.ready, headers.ready]);
    body.socket.write(slowPost(KEYS.voice));
    trickle(body.socket, 100);
    headers.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    trickle(headers.socket, 100); // header bytes that never end
    const [bodyMs, headersMs] = await Promise.all([
      closedWithin(body.socket, 10_000),
      closedWithin(headers.socket, 10_000),
    ]);
    expect(body.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(body.received()).toContain('"success":false'); // the envelope, as everywhere
    expect(bodyMs).toBeGreaterThanOrEqual(900);
    expect(headersMs).toBeGreaterThanOrEqual(400);
  });

  it('closes a connection that never sends a byte', async () => {
    const { port } = await serve({ requestTimeoutMs: 1_000, headersTimeoutMs: 500 });
    const silent = open(port);
    await silent.ready;
    await closedWithin(silent.socket, 10_000);
  });
});

describe('connection caps', () => {
  it('answers 503 in the envelope past the per-address cap, and serves again once one closes', async () => {
    const { port, url } = await serve({ maxConnectionsPerIp: 4 });
    const held = Array.from({ length: 4 }, () => open(port));
    await Promise.all(held.map((c) => c.ready));
    const extra = open(port);
    await closedWithin(extra.socket, 10_000);
    expect(extra.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(extra.received()).toContain('"success":false');
    expect(extra.received()).toContain('Too many connections from');
    held[0]!.socket.destroy();
    await expect
      .poll(async () => (await fetch(`${url}/health`)).status, { timeout: 5_000 })
      .toBe(200);
  });

  it('caps connections in total', async () => {
    const { port } = await serve({ maxConnections: 3, maxConnectionsPerIp: 0 });
    const held = Array.from({ length: 3 }, () => open(port));
    await Promise.all(held.map((c) => c.ready));
    const extra = open(port);
    await closedWithin(extra.socket, 10_000);
    expect(extra.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(extra.received()).toContain('maximum of 3 connections');
  });
});

describe('WebSocket caps', () => {
  /** Resolves 101 when it opened (the socket stays open), else the refusal's HTTP status. */
  function upgrade(url: string, key: string): Promise<{ status: number; socket: WebSocket }> {
    return new Promise((resolve) => {
      const socket = new WebSocket(`${url.replace('http', 'ws')}/delegations/events`, {
        headers: { authorization: `Bearer ${key}` },
      });
      socket.on('message', () => resolve({ status: 101, socket }));
      socket.on('unexpected-response', (_req, res) => {
        resolve({ status: res.statusCode ?? 0, socket });
        socket.terminate();
      });
      socket.on('error', () => {});
      cleanups.push(() => socket.terminate());
    });
  }

  it('refuses a key past its cap with 429; other keys and freed slots still connect', async () => {
    const { url } = await serve({ maxWebSocketsPerKey: 3, maxWebSockets: 5 });
    const mine: Array<{ status: number; socket: WebSocket }> = [];
    for (let i = 0; i < 3; i++) mine.push(await upgrade(url, KEYS.voice));
    expect(mine.map((m) => m.status)).toEqual([101, 101, 101]);
    expect((await upgrade(url, KEYS.voice)).status).toBe(429);
    const admin = [await upgrade(url, KEYS.admin), await upgrade(url, KEYS.admin)];
    expect(admin.map((m) => m.status)).toEqual([101, 101]);
    // Five in all: the server's cap.
    expect((await upgrade(url, KEYS.admin)).status).toBe(429);
    const closed = new Promise((r) => mine[0]!.socket.once('close', r));
    mine[0]!.socket.close();
    await closed;
    await expect
      .poll(async () => (await upgrade(url, KEYS.voice)).status, { timeout: 5_000 })
      .toBe(101);
  });

  it('answers a plain GET of the WebSocket route in the envelope (426)', async () => {
    const { url } = await serve();
    const res = await fetch(`${url}/delegations/events`, {
      headers: { authorization: `Bearer ${KEYS.voice}` },
    });
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ success: false, code: 'upgrade_required' });
  });
});
