// The request log never holds an API key, however the WebSocket's token parameter is spelled:
// what authenticates and what is masked read the URL the same way (percent-decoded once), and a
// configured key is masked wherever it appears in the URL. Real server, real WebSockets.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ApiKeys } from '../../src/service/api/auth.js';
import type { RequestLogLine } from '../../src/service/api/request-log.js';
import { createDelegationsApi, type DelegationsApi } from '../../src/service/api/server.js';
import { maskSecretsInUrl, tokenFromUrl } from '../../src/service/api/url-secrets.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';

const KEY = 'voice-bot-key-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'taskline-reqlog-'));
const lines: RequestLogLine[] = [];
let api: DelegationsApi;
let store: SqliteDelegationStore;
let bus: InProcessDelegationBus;
let base: string;
beforeAll(async () => {
  store = await SqliteDelegationStore.open({ path: join(dir, 'l.db') });
  bus = new InProcessDelegationBus();
  api = await createDelegationsApi({
    store,
    bus,
    keys: new ApiKeys([{ key: KEY, agent: 'voice-bot' }]),
    requestLog: { sink: (line) => lines.push(line) },
  });
  base = (await api.listen({ port: 0 })).replace('http', 'ws');
});
afterAll(async () => {
  await api.close();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens a WebSocket with `query`; resolves 101 or the refusal's status, and its log line. */
async function upgrade(
  query: string,
): Promise<{ status: number; line: RequestLogLine | undefined }> {
  const before = lines.length;
  const status = await new Promise<number>((resolve) => {
    const socket = new WebSocket(`${base}/delegations/events?${query}`);
    socket.on('message', () => {
      resolve(101);
      socket.close();
    });
    socket.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('error', () => resolve(-1));
  });
  // An upgrade that was accepted is hijacked (no log line); a refusal is logged once answered.
  if (status !== 101) await expect.poll(() => lines.length, { timeout: 5_000 }).toBe(before + 1);
  return { status, line: lines[before] };
}

describe('the WebSocket key in the request log', () => {
  it('is accepted only as access_token (however it is percent-encoded) and never logged', async () => {
    const encoded = KEY.replace('v', '%76');
    for (const query of [
      `access_token=${KEY}`,
      `acc%65ss_token=${KEY}`,
      `access%5Ftoken=${KEY}`,
      `access_token=${encoded}`,
    ]) {
      expect((await upgrade(query)).status, query).toBe(101);
    }
    for (const query of [
      `access_token[]=${KEY}`,
      `ACCESS_TOKEN=${KEY}`,
      `access_token=${KEY}&access_token=${KEY}`,
      `token=${KEY}`,
      `api-key=${KEY}`,
      `${KEY}=1`,
      `x=${encoded}`,
    ]) {
      const { status, line } = await upgrade(query);
      expect(status, query).toBe(401);
      expect(line?.status).toBe(401);
      expect(line?.url, query).not.toContain(KEY);
      expect(decodeURIComponent(line?.url ?? ''), query).not.toContain(KEY);
    }
    const text = JSON.stringify(lines);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('0123456789');
  });

  it('reads the URL one way for both: what authenticates is what is masked', () => {
    const isKey = (t: string) => t === KEY;
    for (const url of [
      `/e?acc%65ss_token=${KEY}`,
      `/e?access%5Ftoken=${KEY}`,
      `/e?access_token[]=${KEY}`,
      `/e?a=1&access_token=${encodeURIComponent(KEY)}#frag`,
      `/delegations/${KEY}`,
      `/e?${KEY}`,
    ]) {
      expect(maskSecretsInUrl(url, isKey), url).not.toContain(KEY);
    }
    expect(tokenFromUrl(`/e?acc%65ss_token=${KEY}`)).toBe(KEY);
    expect(tokenFromUrl(`/e?access_token[]=${KEY}`)).toBeUndefined();
    expect(tokenFromUrl(`/e?access_token=a&acc%65ss_token=b`)).toBe('ambiguous');
    expect(maskSecretsInUrl('/e?limit=5&cursor=abc')).toBe('/e?limit=5&cursor=abc');
  });
});
