// Operations of the delegations server: GET /health (no key; store and bus probed, bounded),
// one masked log line per request, Prometheus metrics at /metrics (admin key), the live calls
// board (POST /calls/events, GET /calls, TTL) and the console's static files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/service/api/auth.js';
import { runHealthChecks } from '../../src/service/api/health.js';
import { startPrometheusMetrics } from '../../src/service/api/metrics.js';
import type { RequestLogLine } from '../../src/service/api/request-log.js';
import { createDelegationsApi, type DelegationsApiOptions } from '../../src/service/api/server.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';
import { NATS_URL, serviceMissing } from '../services.js';
import { makeRecord } from './store-suite.js';

const KEYS = {
  voice: 'voice-bot-key-0123456789',
  office: 'back-office-key-0123456789',
  admin: 'admin-key-0123456789abcdef',
};
const keys = new ApiKeys([
  { key: KEYS.voice, agent: 'voice-bot' },
  { key: KEYS.office, agent: 'back-office' },
  { key: KEYS.admin, admin: true, name: 'ops' },
]);

const natsMissing = await serviceMissing('nats');
const dir = mkdtempSync(join(tmpdir(), 'taskline-ops-'));
let n = 0;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A real API on a fresh SQLite store and in-process bus, closed after the test. */
async function serve(extra: Partial<DelegationsApiOptions> = {}) {
  const store = await SqliteDelegationStore.open({ path: join(dir, `ops-${++n}.db`) });
  const bus = extra.bus ?? new InProcessDelegationBus();
  const api = await createDelegationsApi({ store, bus, keys, requestLog: false, ...extra });
  cleanups.push(async () => {
    await api.close();
    await bus.close().catch(() => {});
    await store.close().catch(() => {});
  });
  const inject = async (method: string, url: string, as?: keyof typeof KEYS, body?: unknown) => {
    const res = await api.app.inject({
      method: method as 'GET',
      url,
      headers: as ? { authorization: `Bearer ${KEYS[as]}` } : {},
      ...(body !== undefined ? { payload: body as object } : {}),
    });
    return { status: res.statusCode, body: res.body, json: () => res.json(), headers: res.headers };
  };
  return { api, store, bus, inject };
}

describe('GET /health', () => {
  it('answers 200 without a key when the store and the bus answer', async () => {
    const { inject } = await serve();
    const res = await inject('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({
      success: true,
      data: { status: 'ok', checks: { store: { ok: true }, bus: { ok: true } } },
    });
  });

  it('answers 503 naming the bus when the bus is closed, and the store when it is, with no error text', async () => {
    const { inject, bus, store } = await serve();
    await bus.close();
    let res = await inject('GET', '/health');
    expect(res.status).toBe(503);
    expect(res.json()).toMatchObject({
      success: false,
      code: 'unavailable',
      message: 'Not ready: bus (error) unreachable; the server log has the cause.',
      data: { checks: { store: { ok: true }, bus: { ok: false, reason: 'error' } } },
    });
    // A driver's error can name internal hosts or users: none of it reaches an unauthenticated caller.
    expect(res.body).not.toContain('closed');
    await store.close();
    res = await inject('GET', '/health');
    expect(res.status).toBe(503);
    expect(res.json().message).toBe(
      'Not ready: store (error), bus (error) unreachable; the server log has the cause.',
    );
    expect(res.body).not.toContain('closed');
  });

  it.skipIf(natsMissing !== undefined)(
    `probes NATS with a round trip: 200 while connected, 503 once closed${natsMissing ? ` (skipped: ${natsMissing})` : ''}`,
    async () => {
      const nats = await NatsDelegationBus.connect({
        servers: NATS_URL,
        prefix: `ops${process.pid}_${Date.now()}`,
      });
      cleanups.push(async () => {
        await nats.deleteStream().catch(() => {});
        await nats.close().catch(() => {});
      });
      const { inject } = await serve({ bus: nats });
      expect((await inject('GET', '/health')).json().data.checks.bus.ok).toBe(true);
      await nats.deleteStream();
      await nats.close();
      const down = await inject('GET', '/health');
      expect(down.status).toBe(503);
      expect(down.json().message).toBe(
        'Not ready: bus (error) unreachable; the server log has the cause.',
      );
      expect(down.body).not.toContain('NATS');
    },
  );

  it('counts a probe that never answers as down after its timeout', async () => {
    const clock = new VirtualClock();
    const pending = runHealthChecks({
      clock,
      timeoutMs: 2_000,
      probes: { store: async () => {}, bus: () => new Promise(() => {}) },
    });
    await clock.advance(2_000);
    expect(await pending).toEqual({
      ok: false,
      checks: {
        store: { ok: true, ms: 0 },
        bus: { ok: false, ms: 2_000, error: 'no answer within 2000 ms', timedOut: true },
      },
    });
  });
});

describe('request log', () => {
  it('writes one line per request with route, status, duration, id and caller — secrets masked', async () => {
    const lines: RequestLogLine[] = [];
    const { inject } = await serve({ requestLog: { sink: (line) => lines.push(line) } });
    await inject('POST', '/delegations', 'voice', makeRecord('d-1'));
    await inject('GET', `/delegations/4111111111111111?access_token=${KEYS.admin}`, 'voice');
    await inject('GET', '/delegations/d-1');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      method: 'POST',
      route: '/delegations',
      url: '/delegations',
      status: 200,
      caller: 'voice-bot',
    });
    expect(lines[0]!.ms).toBeGreaterThanOrEqual(0);
    expect(lines[0]!.request_id).toMatch(/\S/);
    expect(lines[1]).toMatchObject({
      route: '/delegations/:id',
      url: '/delegations/************1111?access_token=****',
      status: 400, // the key goes in the header; this route takes no query parameters
    });
    expect(lines[2]).toMatchObject({ status: 401 });
    expect(lines[2]).not.toHaveProperty('caller');
    const text = JSON.stringify(lines);
    for (const key of Object.values(KEYS)) expect(text).not.toContain(key);
    expect(text).not.toContain('4111111111111111');
  });
});

describe('GET /metrics', () => {
  it('serves request counts and latency by route, and any global taskline meter, to admin keys', async () => {
    const prometheus = await startPrometheusMetrics();
    cleanups.push(() => prometheus.close());
    const { inject } = await serve({ metrics: prometheus });
    metrics.getMeter('taskline').createCounter('taskline.calls.started').add(2, { flow: 'survey' });
    await inject('POST', '/delegations', 'voice', makeRecord('m-1'));
    await inject('GET', '/delegations/m-1', 'voice');

    expect((await inject('GET', '/metrics')).status).toBe(401);
    const refused = await inject('GET', '/metrics', 'voice');
    expect(refused.status).toBe(403);
    expect(refused.json().message).toBe('GET /metrics needs an admin API key.');

    const res = await inject('GET', '/metrics', 'admin');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toMatch(
      /^taskline_http_server_requests_total\{method="POST",route="\/delegations",status="200"[^}]*\} 1$/m,
    );
    expect(res.body).toMatch(
      /^taskline_http_server_duration_count\{method="GET",route="\/delegations\/:id",status="200"[^}]*\} 1$/m,
    );
    expect(res.body).toMatch(/^taskline_calls_started_total\{flow="survey"[^}]*\} 2$/m);
  });
});

describe('live calls', () => {
  it('keeps the latest state per call, shows it to its reporter and admins, and drops it after the TTL', async () => {
    const clock = new VirtualClock();
    const { inject } = await serve({ clock, publishBeforeAnswerMs: 0, calls: { ttlMs: 60_000 } });
    const posted = await inject('POST', '/calls/events', 'voice', {
      call_id: 'c-1',
      flow: 'survey',
      step: 'consent',
    });
    expect(posted.status).toBe(200);
    await inject('POST', '/calls/events', 'voice', { call_id: 'c-1', outcome: 'consent: ok' });
    const mine = (await inject('GET', '/calls', 'voice')).json().data;
    expect(mine).toMatchObject([
      { call_id: 'c-1', state: 'active', flow: 'survey', step: 'consent', outcome: 'consent: ok' },
    ]);
    expect((await inject('GET', '/calls', 'office')).json().data).toEqual([]);
    expect((await inject('GET', '/calls', 'admin')).json().data).toHaveLength(1);

    await clock.advance(61_000);
    expect((await inject('GET', '/calls', 'admin')).json().data).toEqual([]);
  });

  it('refuses a bad event with the reason, and one without a key', async () => {
    const { inject } = await serve();
    const bad = await inject('POST', '/calls/events', 'voice', { call_id: '', status: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.json().message).toMatch(/^Invalid request body: /);
    expect(bad.json().message).toContain('call_id');
    expect((await inject('POST', '/calls/events', undefined, { call_id: 'c' })).status).toBe(401);
  });
});

describe('the console files', () => {
  it('serves only the built files, without a key, with a strict content policy', async () => {
    const assets = mkdtempSync(join(dir, 'assets-'));
    writeFileSync(join(assets, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(assets, 'main.js'), 'export {};');
    const { inject } = await serve({ console: { assetsDir: assets } });
    expect((await inject('GET', '/console')).headers.location).toBe('/console/');
    const page = await inject('GET', '/console/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>console</title>');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await inject('GET', '/console/main.js')).headers['content-type']).toMatch(
      /^text\/javascript/,
    );
    expect((await inject('GET', '/console/..%2Fpackage.json')).status).toBe(404);
    expect((await inject('GET', '/console/secret.db')).status).toBe(404);
  });

  it('says how to build the console when it is missing', async () => {
    const { inject } = await serve({ console: { assetsDir: join(dir, 'nowhere') } });
    const res = await inject('GET', '/console/');
    expect(res.status).toBe(503);
    expect(res.json().message).toBe(
      'The console is not built: run `npm run build` (it writes dist/bundle/console/).',
    );
  });
});
