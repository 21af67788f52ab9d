// The voice process's feed to the console: best effort and bounded — a down server costs a
// counted failure, never an exception or a wait; only the latest state of a call is sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallReporter } from '../../src/app/call-reporter.js';
import { isTasklineError } from '../../src/core/errors.js';
import { ApiKeys } from '../../src/service/api/auth.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';

const KEY = 'voice-bot-key-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'taskline-reporter-'));
let api: DelegationsApi;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;
let url: string;

beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'r.db') });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    keys: new ApiKeys([{ key: KEY, agent: 'voice-bot' }]),
    requestLog: false,
  });
  url = await api.listen({ port: 0 });
});
afterAll(async () => {
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('CallReporter', () => {
  it('sends the latest state of each call; an update replaced before it left is dropped', async () => {
    const reporter = new CallReporter({ url, apiKey: KEY, maxInFlight: 1 });
    reporter.send({ call_id: 'c-1', step: 'consent' });
    reporter.send({ call_id: 'c-1', step: 'score' });
    reporter.send({ call_id: 'c-1', step: 'thanks', outcome: 'score: ok' });
    await reporter.flush();
    expect(reporter.stats).toEqual({ sent: 2, failed: 0, dropped: 1 });
    const res = await api.app.inject({
      method: 'GET',
      url: '/calls',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.json().data).toMatchObject([
      { call_id: 'c-1', step: 'thanks', outcome: 'score: ok' },
    ]);
  });

  it('counts a refused key and a server that is down as failures, without throwing', async () => {
    const refused = new CallReporter({ url, apiKey: 'not-a-key-0123456789' });
    refused.send({ call_id: 'c-2' });
    await refused.flush();
    expect(refused.stats.failed).toBe(1);
    expect(refused.lastError).toBe(`HTTP 401 from ${url}/calls/events`);

    const down = new CallReporter({ url: `http://127.0.0.1:${await closedPort()}`, apiKey: KEY });
    expect(() => down.send({ call_id: 'c-3' })).not.toThrow();
    await down.flush();
    expect(down.stats).toEqual({ sent: 0, failed: 1, dropped: 0 });
  });

  it('keeps at most maxPending calls waiting, dropping the oldest', async () => {
    const reporter = new CallReporter({ url, apiKey: KEY, maxInFlight: 1, maxPending: 2 });
    for (const id of ['a', 'b', 'c', 'd']) reporter.send({ call_id: id });
    await reporter.flush();
    // 'a' left at once; of b, c, d only the newest two waited.
    expect(reporter.stats).toEqual({ sent: 3, failed: 0, dropped: 1 });
  });

  it('refuses a bound that would leave its queue uncapped or nothing sent; the boundaries work', async () => {
    for (const [options, message] of [
      [{ maxPending: Number.NaN }, 'maxPending must be a whole number from 1 to 100000 (got NaN)'],
      [{ maxPending: 0 }, 'maxPending must be a whole number from 1 to 100000 (got 0)'],
      [{ maxInFlight: 0 }, 'maxInFlight must be a whole number from 1 to 64 (got 0)'],
      [{ maxInFlight: '4' }, 'maxInFlight must be a whole number from 1 to 64 (got "4")'],
      [{ timeoutMs: -1 }, 'timeoutMs must be between 100 and 60000 ms (got -1)'],
      [
        { timeoutMs: 30 * 86_400_000 },
        'timeoutMs must be between 100 and 60000 ms (got 2592000000)',
      ],
    ] as const) {
      expect(() => new CallReporter({ url, apiKey: KEY, ...(options as object) })).toThrow(
        expect.objectContaining({ code: 'invalid_argument', message: `CallReporter: ${message}.` }),
      );
    }
    const smallest = new CallReporter({
      url,
      apiKey: KEY,
      maxPending: 1,
      maxInFlight: 1,
      timeoutMs: 100,
    });
    for (const id of ['e', 'f', 'g']) smallest.send({ call_id: id });
    await smallest.flush(600_000);
    // 'e' left at once; of f and g only the newest waited.
    expect(smallest.stats).toEqual({ sent: 2, failed: 0, dropped: 1 });
    const largest = new CallReporter({
      url,
      apiKey: KEY,
      maxPending: 100_000,
      maxInFlight: 64,
      timeoutMs: 60_000,
    });
    for (const id of ['h', 'i']) largest.send({ call_id: id });
    await largest.flush(0);
    await largest.flush();
    expect(largest.stats).toEqual({ sent: 2, failed: 0, dropped: 0 });
    await expect(largest.flush(Number.NaN)).rejects.toMatchObject({
      code: 'invalid_argument',
      message: 'CallReporter.flush: timeoutMs must be between 0 and 600000 ms (got NaN).',
    });
  });

  it('rejects a URL that is not one, naming what it wants', () => {
    let error: unknown;
    try {
      new CallReporter({ url: 'localhost:8787', apiKey: KEY });
    } catch (e) {
      error = e;
    }
    expect(isTasklineError(error, 'invalid_argument')).toBe(true);
    expect((error as Error).message).toBe(
      "CallReporter url must be the server's base URL (http://host:port); got localhost:8787.",
    );
  });
});
