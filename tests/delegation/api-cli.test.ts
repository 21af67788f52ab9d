import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { parseServeArgs, startDelegationsServer } from '../../src/service/cli/delegations.js';
import type { PostgresDelegationStore } from '../../src/service/stores/postgres.js';
import { serviceMissing } from '../services.js';
import { makeRecord, PG_URL, spawnScript, srcModule } from './store-suite.js';

const noPostgresOrNats = (await serviceMissing('postgres')) ?? (await serviceMissing('nats'));
const dir = mkdtempSync(join(tmpdir(), 'taskline-deleg-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ADMIN = 'admin-key-0123456789abcdef';
const KEYS_JSON = JSON.stringify({
  keys: [
    { key: ADMIN, admin: true },
    { key: 'voice-bot-key-0123456789', agent: 'voice-bot' },
  ],
});

function record(id: string) {
  const now = Date.now();
  return makeRecord(id, {
    status: {
      execution: {
        state: 'pending',
        time: Math.floor(now / 1000),
        deadline: Math.floor((now + 3_600_000) / 1000),
      },
    },
  });
}

describe('taskline delegations serve: arguments', () => {
  it('reads keys from --keys or TASKLINE_API_KEYS and has sensible defaults', () => {
    const file = join(dir, 'keys.json');
    writeFileSync(file, KEYS_JSON);
    const fromFile = parseServeArgs(['--keys', file, '--port', '0'], {});
    expect(fromFile).toMatchObject({
      db: 'taskline-delegations.db',
      port: 0,
      host: '127.0.0.1',
      prefix: 'taskline',
    });
    expect(fromFile.keys.resolve(`Bearer ${ADMIN}`)).toEqual({ admin: true, name: 'admin' });
    const fromEnv = parseServeArgs(['--postgres', PG_URL, '--nats', 'nats://x:4222'], {
      TASKLINE_API_KEYS: KEYS_JSON,
    });
    expect(fromEnv).toMatchObject({ postgres: PG_URL, nats: 'nats://x:4222', port: 8787 });
    expect(fromEnv.limits).toBeUndefined();
    const bounded = parseServeArgs(
      [
        '--request-timeout-ms',
        '5000',
        '--max-connections',
        '64',
        '--max-connections-per-ip',
        '0',
        '--max-websockets',
        '10',
        '--max-websockets-per-key',
        '2',
      ],
      { TASKLINE_API_KEYS: KEYS_JSON },
    );
    expect(bounded.limits).toEqual({
      requestTimeoutMs: 5000,
      maxConnections: 64,
      maxConnectionsPerIp: 0,
      maxWebSockets: 10,
      maxWebSocketsPerKey: 2,
    });
    expect(() =>
      parseServeArgs(['--max-websockets-per-key', 'lots'], { TASKLINE_API_KEYS: KEYS_JSON }),
    ).toThrow(/--max-websockets-per-key takes a whole number/);
  });

  it('explains what is wrong with bad arguments', () => {
    const env = { TASKLINE_API_KEYS: KEYS_JSON };
    expect(() => parseServeArgs([], {})).toThrow(/No API keys: pass --keys/);
    expect(() => parseServeArgs([], { TASKLINE_API_KEYS: '{oops' })).toThrow(
      /TASKLINE_API_KEYS is not valid JSON/,
    );
    expect(() =>
      parseServeArgs([], { TASKLINE_API_KEYS: '{"keys":[{"key":"short","agent":"a"}]}' }),
    ).toThrow(/16\+ chars/);
    expect(() => parseServeArgs(['--keys', join(dir, 'missing.json')], {})).toThrow(
      /Cannot read the keys file/,
    );
    // A device never ends: refused before it is read.
    expect(() => parseServeArgs(['--keys', '/dev/zero'], {})).toThrow(
      /Cannot read the keys file \/dev\/zero: .*a device; a keys file must be a regular file/,
    );
    expect(() => parseServeArgs(['--db', 'a.db', '--postgres', PG_URL], env)).toThrow(
      /--db or --postgres/,
    );
    expect(() => parseServeArgs(['--port', 'http'], env)).toThrow(/--port takes a whole number/);
    expect(() => parseServeArgs(['--bogus'], env)).toThrow();
  });
});

describe('taskline delegations serve: running', () => {
  it('serves the API on SQLite with in-process events', async () => {
    const options = parseServeArgs(['--db', join(dir, 'serve.db'), '--port', '0'], {
      TASKLINE_API_KEYS: KEYS_JSON,
    });
    const server = await startDelegationsServer(options);
    expect(server.description).toMatch(
      /listening on http:\/\/127\.0\.0\.1:\d+ \(sqlite .*serve\.db, in-process events\)/,
    );
    const res = await fetch(`${server.url}/delegations`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer voice-bot-key-0123456789',
        'content-type': 'application/json',
      },
      body: JSON.stringify(record('cli-1')),
    });
    expect(res.status).toBe(200);
    await server.close();
  });

  it('scales out on Postgres + NATS: a change made through the API reaches a WebSocket via NATS', {
    timeout: 30_000,
    skip: noPostgresOrNats !== undefined,
  }, async () => {
    const prefix = `cli${process.pid}_${randomBytes(3).toString('hex')}`;
    const options = parseServeArgs(
      [
        '--postgres',
        PG_URL,
        '--nats',
        process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222',
        '--prefix',
        prefix,
        '--port',
        '0',
      ],
      { TASKLINE_API_KEYS: KEYS_JSON },
    );
    const server = await startDelegationsServer(options);
    try {
      expect(server.description).toContain('(postgres, nats ');
      const socket = new WebSocket(`${server.url.replace('http', 'ws')}/delegations/events`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      const created = new Promise<{ delegation_id: string; change: string }>((resolve, reject) => {
        socket.on('message', (raw) => {
          const msg = JSON.parse(String(raw)) as {
            type: string;
            data: { delegation_id: string; change: string };
          };
          if (msg.type === 'delegation') resolve(msg.data);
        });
        socket.on('error', reject);
      });
      await new Promise((resolve) => socket.once('message', resolve)); // ready
      const res = await fetch(`${server.url}/delegations`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer voice-bot-key-0123456789',
          'content-type': 'application/json',
        },
        body: JSON.stringify(record('cli-scale-1')),
      });
      expect(res.status).toBe(200);
      expect(await created).toMatchObject({ delegation_id: 'cli-scale-1', change: 'create' });
      socket.close();
    } finally {
      await (server.bus as NatsDelegationBus).deleteStream().catch(() => {});
      await (server.store as PostgresDelegationStore).dropTables();
      await server.close();
    }
  });

  it('runs as a process and stops cleanly on SIGTERM', { timeout: 60_000 }, async () => {
    const child = spawnScript(
      `
      const { delegationsMain } = await import(${JSON.stringify(srcModule('service/cli/delegations.ts'))});
      const code = await delegationsMain(['serve', '--db', ${JSON.stringify(join(dir, 'proc.db'))}, '--port', '0']);
      console.log('exit ' + code);
      process.exit(code);
    `,
      { TASKLINE_API_KEYS: KEYS_JSON },
    );
    const line = await child.waitForLine(/listening on/);
    const url = /listening on (\S+)/.exec(line)![1]!;
    const res = await fetch(`${url}/delegations/none`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ success: false, code: 'not_found' });
    child.kill('SIGTERM');
    await child.waitForLine(/^exit 0$/);
    await child.exited;
  });
});
