// The live console in real headless Chromium against a real `taskline delegations serve`
// (SQLite store, in-process bus): a wrong key is refused, delegations created and completed
// through the API appear and change state live, and a survey call run by a simulated caller
// shows up in Calls with its flow diagram drawn and the traced path highlighted.
// Screenshots go to .tmp/artifacts/console-*.png (CI artifacts).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { voice } from '@livekit/agents';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { surveyFlow } from '../../examples/survey/index.js';
import { CallReporter, reportCalls } from '../../src/app/call-reporter.js';
import { ApiKeys } from '../../src/service/api/auth.js';
import { findConsoleAssets } from '../../src/service/api/console.js';
import {
  type DelegationsServer,
  startDelegationsServer,
} from '../../src/service/cli/delegations.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

// Functions given to page.evaluate run in the page; these are the page globals they use (the
// project's types are Node's, without the DOM library).
interface PageElement {
  id: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement> & { length: number };
};
declare const sessionStorage: { length: number };

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = '.tmp/artifacts';
const KEYS = {
  admin: 'console-admin-key-0123456789',
  voice: 'voice-bot-key-0123456789ab',
  office: 'back-office-key-0123456789',
};
/** Playwright's auto-waiting expectations give up after this long. */
const WAIT = { timeout: 15_000 };

const missing = !existsSync(CHROMIUM)
  ? `Chromium is not at ${CHROMIUM} (install it: bash scripts/browser-tools.sh)`
  : !findConsoleAssets()
    ? 'the console is not built (run: npm run build)'
    : undefined;
if (missing) {
  if (process.env.CI === 'true') throw new Error(`browser test cannot run: ${missing}`);
  console.warn(`[browser] skipped: ${missing}`);
}

describe.skipIf(missing !== undefined)('the live console in Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskline-console-'));
  let server: DelegationsServer;
  let browser: Browser;
  let page: Page;

  const api = async (method: string, path: string, body?: unknown, key = KEYS.voice) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const envelope = (await response.json()) as { success: boolean; message?: string };
    expect(envelope.success, `${method} ${path}: ${envelope.message}`).toBe(true);
    return envelope;
  };
  /** Text (or an attribute) of the first match, null when nothing matches: read at once. */
  const read = (selector: string, attribute?: string) =>
    page.evaluate(
      ([s, a]) => {
        const found = document.querySelector(s as string);
        if (!found) return null;
        return a ? found.getAttribute(a) : (found.textContent ?? '').trim();
      },
      [selector, attribute ?? null] as const,
    );
  const count = (selector: string) =>
    page.evaluate((s) => document.querySelectorAll(s).length, selector);
  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `console-${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startDelegationsServer({
      db: join(dir, 'console.db'),
      prefix: 'taskline',
      contract: {},
      port: 0,
      host: '127.0.0.1',
      keys: new ApiKeys([
        { key: KEYS.admin, admin: true, name: 'ops' },
        { key: KEYS.voice, agent: 'voice-bot' },
        { key: KEYS.office, agent: 'back-office' },
      ]),
      expiryMs: 1_000,
      metrics: false,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a wrong key with a clear message and keeps nothing', async () => {
    await page.goto(`${server.url}/console`);
    await page.getByLabel('API key').fill('not-a-key-of-this-server');
    await page.getByRole('button', { name: 'Open console' }).click();
    await expect
      .poll(() => read('#login-error'), WAIT)
      .toBe('Refused: Unknown API key. Check the key and try again.');
    expect(await page.locator('#tabs').isVisible()).toBe(false);
    expect(await page.locator('#login').isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await shot('refused');
  });

  it('shows delegations appear and change state live, with deadlines and results', async () => {
    await page.getByLabel('API key').fill(KEYS.admin);
    await page.getByRole('button', { name: 'Open console' }).click();
    await expect.poll(() => read('#conn'), WAIT).toBe('live');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    expect(await page.locator('#login').isVisible()).toBe(false);
    expect(await page.locator('#delegations').isVisible()).toBe(true);

    const now = Math.floor(Date.now() / 1000);
    const record = (id: string, type: string) => ({
      delegation_id: id,
      task_id: 'task-1',
      sub_task_id: `sub-${id}`,
      workflow_level: 1,
      delegation_type: type,
      sender_subject_id: 'voice-bot',
      target_subject_id: 'back-office',
      status: { execution: { state: 'pending', time: now, deadline: now + 3_600 } },
      sub_task_data: { account: 'A-17' },
    });
    await api('POST', '/delegations', record('refund-1', 'refund'));
    await api('POST', '/delegations', record('lookup-1', 'lookup'));

    const refund = 'tr[data-id="refund-1"]';
    await expect.poll(() => read(refund, 'data-state'), WAIT).toBe('pending');
    expect(await read(`${refund} td.deadline`)).toMatch(/^in (59m \d\ds|1h 00m)$/);
    await expect.poll(() => count('tr[data-id="lookup-1"]'), WAIT).toBe(1);

    // The target (back-office) reports progress and the result.
    await api(
      'PUT',
      '/delegations/refund-1/status/execution',
      { state: 'in_progress' },
      KEYS.office,
    );
    await expect.poll(() => read(refund, 'data-state'), WAIT).toBe('in_progress');
    await api(
      'PUT',
      '/delegations/submit_result/refund-1',
      { state: 'done', delegation_result: 'Refund of 20 EUR issued' },
      KEYS.office,
    );
    await expect.poll(() => read(refund, 'data-state'), WAIT).toBe('done');
    expect(await read(`${refund} td.result`)).toBe('Refund of 20 EUR issued');
    expect(await read(`${refund} td.deadline`)).toBe(''); // finished: no countdown

    // Filters narrow the table; a row opens its per-stage history.
    await page.getByLabel('State').selectOption('done');
    await expect.poll(() => count('#deleg-table tbody tr'), WAIT).toBe(1);
    expect(await read('#deleg-table tbody tr', 'data-id')).toBe('refund-1');
    await page.getByLabel('State').selectOption('');
    await page.getByPlaceholder('Filter by id, type or agent').fill('lookup');
    await expect.poll(() => count('#deleg-table tbody tr'), WAIT).toBe(1);
    expect(await read('#deleg-table tbody tr', 'data-id')).toBe('lookup-1');
    await page.getByPlaceholder('Filter by id, type or agent').fill('');
    await expect.poll(() => count('#deleg-table tbody tr'), WAIT).toBe(2);
    await page.locator(refund).click();
    await expect.poll(() => read('#history h2'), WAIT).toBe('History of refund-1');
    expect(await count('#history tbody tr')).toBe(2);
    expect(await read('#history-data')).toContain('"account": "A-17"');
    await shot('delegations');
  });

  it('shows a live call and draws its flow with the traced path highlighted', async () => {
    const reporter = new CallReporter({ url: server.url, apiKey: KEYS.voice });
    let stop: ((outcome?: string) => void) | undefined;
    class Host extends voice.Agent {
      constructor() {
        super({ id: 'host', instructions: 'host' });
      }
      override async onEnter(): Promise<void> {
        const task = surveyFlow.create({ callId: 'call-42' });
        stop = reportCalls(task, reporter);
        const result = await task.run();
        stop(result.status);
      }
    }
    const caller = await SimulatedCaller.start({ agent: new Host(), llm: new ScriptedLLM() });
    try {
      await page.getByRole('tab', { name: 'Calls' }).click();
      await caller.say('yes');
      const row = 'tr[data-call="call-42"]';
      await expect.poll(() => read(`${row} td.step`), WAIT).toBe('score');
      expect(await read(`${row} td.outcome`)).toBe('consent: ok');
      expect(await read(`${row} td.state`)).toBe('active');
      await caller.say('eight');
      await expect.poll(() => read(row, 'data-state'), WAIT).toBe('ended');
      expect(await read(`${row} td.outcome`)).toBe('completed');
      await shot('calls');
    } finally {
      await caller.close();
    }
    expect(reporter.stats.failed).toBe(0);

    await page.locator('tr[data-call="call-42"]').click();
    expect(await read('#tabs [data-tab="flows"]', 'aria-selected')).toBe('true');
    expect(await read('#flows', 'hidden')).toBe(null);
    await expect.poll(() => count('#diagram svg g.node'), WAIT).toBeGreaterThan(0);
    // The steps the call took are highlighted; the branches it did not take are not.
    const taken = await page.evaluate(() =>
      [...document.querySelectorAll('#diagram svg g.node.taken')].map((n) => n.id),
    );
    const stepOf = (id: string) => /flowchart-(.+)-\d+$/.exec(id)?.[1] ?? id;
    expect(taken.map(stepOf).sort()).toEqual(['consent', 'score', 'thanks']);
    expect(await count('#diagram svg g.node')).toBeGreaterThanOrEqual(6);
    expect(await count('#steps-table tbody tr')).toBe(3);
    expect(await read('#steps-table tbody tr[data-step="score"] td:nth-child(3)')).toBe('ok');
    await shot('flows');
  });
  it('draws reported labels as text, loads nothing they name, and survives a malformed report', async () => {
    // The server refuses such events (400); this feeds them to the page directly, as a
    // compromised or older server might, to check the page's own defences.
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const now = Math.floor(Date.now() / 1000);
    const hostile = [
      '%%{init: {"htmlLabels": true, "flowchart": {"htmlLabels": true}, "securityLevel": "loose"}}%%',
      'flowchart TD',
      '  a["<img src=/console/probe-a.png onerror=alert(1)>consent"] --> b["#60;img src=/console/probe-b.png#62;"]',
      '  b --> c["<b>bold</b> & <i>x</i>"]',
    ].join('\n');
    const calls = [
      {
        call_id: 'evil-1',
        state: 'active',
        flow: 'evil',
        diagram: hostile,
        reporter: 'voice-bot',
        owner: 'agent:voice-bot',
        updated_at: now,
        report: { steps: [] },
      },
      {
        call_id: 'broken-1',
        state: 'active',
        flow: 'survey',
        diagram: 'flowchart TD\n  a --> b',
        reporter: 'voice-bot',
        owner: 'agent:voice-bot',
        updated_at: now - 1,
        report: { steps: 'boom' },
      },
      {
        call_id: 'evil-1',
        state: 'ended',
        flow: 'other',
        reporter: 'back-office',
        owner: 'agent:back-office',
        updated_at: now - 2,
      },
    ];
    await page.route('**/calls', (route) =>
      route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify({ success: true, data: calls }),
      }),
    );
    try {
      await page.reload();
      await expect.poll(() => read('#conn'), WAIT).toBe('live');
      await page.getByRole('tab', { name: 'Calls' }).click();
      // Same call_id from two owners: two rows.
      await expect.poll(() => count('tr[data-call="evil-1"]'), WAIT).toBe(2);

      await page.locator('tr[data-call="broken-1"]').click();
      await expect.poll(() => count('#steps-table tbody tr[data-malformed]'), WAIT).toBe(1);
      await expect.poll(() => count('#diagram svg g.node'), WAIT).toBeGreaterThan(0);

      await page.getByRole('tab', { name: 'Calls' }).click();
      await page.locator('tr[data-call="evil-1"][data-owner="agent:voice-bot"]').click();
      await expect.poll(() => count('#diagram svg g.node'), WAIT).toBe(3);
      expect(
        await count('#diagram img, #diagram foreignObject, #diagram image, #diagram b, #diagram i'),
      ).toBe(0);
      const labels = await page.evaluate(
        () => document.querySelector('#diagram svg')?.textContent ?? '',
      );
      expect(labels).toContain('consent');
      await shot('hostile-diagram');
    } finally {
      await page.unroute('**/calls');
    }
    expect(requested.filter((u) => /probe-/.test(u))).toEqual([]);
  });
});
