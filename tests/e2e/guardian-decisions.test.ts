/**
 * The guardian's decisions against a real LiveKit server, with stand-ins for agent jobs
 * (real rtc-node participants of kind agent, in processes a test kills with SIGKILL) and a
 * real caller: what it re-dispatches and what it leaves alone — a caller already gone,
 * another agent serving the call, an agent that left on purpose, a call re-dispatched as
 * often as allowed (counted from the room's own dispatches, so a restarted guardian counts
 * the same) — how it learns of a loss without a lifeline (the server's signed webhook, about
 * 20 s after the crash), and what it refuses (forged webhooks, lifelines without a valid
 * token).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { AccessToken, AgentDispatchClient, type WebhookEvent } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GuardianDecision } from '../../src/app/guardian/guardian.js';
import { redispatchOf } from '../../src/app/guardian/protocol.js';
import { type RunningGuardian, startGuardian } from '../../src/app/guardian/server.js';
import { liveKitSuite, liveKitUnavailable, PORTS, TestCaller } from './harness/index.js';
import { waitFor } from './harness/wait.js';

const PORT = PORTS.http + 16;
const AGENT = 'taskline-guarded';
const STAND_IN = 'tests/e2e/workers/stand-in-agent.ts';

/** A stand-in agent job in its own process. */
interface StandIn {
  identity: string;
  child: ChildProcess;
  /** SIGKILL: the job's process dies. */
  kill(): Promise<void>;
  /** Leaves on purpose: `done` on the lifeline, then out of the room. */
  leave(): Promise<void>;
}

describe.skipIf(await liveKitUnavailable())('the guardian against a real server', () => {
  const lk = liveKitSuite({ webhooks: [`http://127.0.0.1:${PORT}/webhook`] });
  const decisions: GuardianDecision[] = [];
  const webhooks: WebhookEvent[] = [];
  const joined: string[] = [];
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const l of listeners) l();
  };
  const children: ChildProcess[] = [];
  const callers: TestCaller[] = [];
  let guardian: RunningGuardian;
  let n = 0;
  const room = () => `guarded-${process.pid}-${++n}`;

  const start = (): Promise<RunningGuardian> =>
    startGuardian({
      url: lk.server.url,
      apiKey: lk.server.apiKey,
      apiSecret: lk.server.apiSecret,
      port: PORT,
      maxRedispatches: 1,
      onDecision: (d) => {
        decisions.push(d);
        changed();
      },
      onWebhook: (e) => {
        webhooks.push(e);
        changed();
      },
      onLifeline: (event, call) => {
        if (event === 'joined') joined.push(call.identity);
        changed();
      },
    });

  beforeAll(async () => {
    guardian = await start();
  });

  afterEach(async () => {
    for (const c of callers.splice(0)) await c.leave().catch(() => undefined);
    for (const c of children.splice(0)) c.kill('SIGKILL');
  });

  afterAll(async () => {
    await guardian?.close();
  });

  const decision = (where: string, timeoutMs = 30_000) =>
    waitFor(
      () => decisions.find((d) => d.room === where),
      listeners,
      timeoutMs,
      `a decision about ${where} (so far ${JSON.stringify(decisions)})`,
    );

  const webhook = (match: (e: WebhookEvent) => boolean, timeoutMs = 60_000) =>
    waitFor(() => webhooks.find(match), listeners, timeoutMs, 'a webhook');

  const caller = async (where: string) => {
    const c = await TestCaller.join(lk.server, where, { identity: `caller-${where}` }, lk.oracle);
    callers.push(c);
    return c;
  };

  const standIn = async (where: string, identity: string, lifeline = true): Promise<StandIn> => {
    // node itself runs the stand-in (tsx as a loader, not a wrapper process): SIGKILL
    // reaches the process that holds the room connection and the lifeline.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        STAND_IN,
        lk.server.url,
        where,
        identity,
        AGENT,
        ...(lifeline ? [guardian.url] : []),
      ],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: {
          ...process.env,
          LIVEKIT_API_KEY: lk.server.apiKey,
          LIVEKIT_API_SECRET: lk.server.apiSecret,
        },
      },
    );
    children.push(child);
    const lines: string[] = [];
    const seen = new Set<() => void>();
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      for (const l of seen) l();
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.once('exit', () => {
      for (const l of seen) l();
    });
    const line = (text: string) =>
      waitFor(
        () => lines.includes(text) || undefined,
        seen,
        60_000,
        `${identity} to print ${text}`,
        () => (child.exitCode !== null && !lines.includes(text) ? 'it exited' : undefined),
      );
    await line('READY');
    return {
      identity,
      child,
      async kill() {
        child.kill('SIGKILL');
        await exited;
      },
      async leave() {
        child.stdin!.write('done\n');
        await line('LEFT');
        await exited;
      },
    };
  };

  const members = async (where: string) =>
    (await lk.rooms.listParticipants(where)).map((p) => p.identity);

  it('re-dispatches the agent of a job that died with a caller in the room, and removes the dead one at once', async () => {
    const where = room();
    await caller(where);
    const agent = await standIn(where, 'agent-AJ_one');
    await agent.kill();
    const d = await decision(where);
    expect(d).toMatchObject({
      action: 'redispatched',
      source: 'lifeline',
      attempt: 1,
      agentName: AGENT,
      identity: 'agent-AJ_one',
    });
    // Removed by the guardian, not left ~20 s for the server to notice.
    expect(await members(where)).toEqual([`caller-${where}`]);
    const dispatches = await new AgentDispatchClient(
      lk.server.httpUrl,
      lk.server.apiKey,
      lk.server.apiSecret,
    ).listDispatch(where);
    const marked = dispatches.map((x) => redispatchOf(x.metadata)).filter(Boolean);
    expect(marked).toEqual([
      expect.objectContaining({ attempt: 1, previousJob: 'AJ_one', original: '' }),
    ]);
    // The server's own report of the removal is not a second loss.
    await webhook(
      (e) => e.event === 'participant_left' && e.participant?.identity === 'agent-AJ_one',
    );
    expect(decisions.filter((x) => x.room === where)).toHaveLength(1);
  });

  it('leaves a call alone when the caller has already gone', async () => {
    const where = room();
    const c = await caller(where);
    const agent = await standIn(where, 'agent-AJ_two');
    await c.leave();
    await webhook(
      (e) => e.event === 'participant_left' && e.participant?.identity === c.options.identity,
    );
    await agent.kill();
    expect(await decision(where)).toMatchObject({
      action: 'skipped',
      reason: 'no caller is left in the room',
    });
  });

  it('never puts a second agent in a call another agent of the same name serves', async () => {
    const where = room();
    await caller(where);
    const dying = await standIn(where, 'agent-AJ_three');
    await standIn(where, 'agent-AJ_four');
    await dying.kill();
    expect(await decision(where)).toMatchObject({
      action: 'skipped',
      reason: 'agent-AJ_four already serves the call',
    });
  });

  it('does nothing when the agent leaves on purpose (done on its lifeline)', async () => {
    const where = room();
    await caller(where);
    const agent = await standIn(where, 'agent-AJ_five');
    await agent.leave();
    const left = await webhook(
      (e) => e.event === 'participant_left' && e.participant?.identity === 'agent-AJ_five',
    );
    expect(left.participant?.disconnectReason).toBe(1); // CLIENT_INITIATED
    expect(decisions.filter((x) => x.room === where)).toEqual([]);
  });

  it('re-dispatches a call at most as often as allowed, counting from the room even after a restart', async () => {
    const where = room();
    await caller(where);
    const first = await standIn(where, 'agent-AJ_six');
    await first.kill();
    expect(await decision(where)).toMatchObject({ action: 'redispatched', attempt: 1 });
    // The re-dispatched job arrives (a stand-in here), then the guardian restarts.
    const second = await standIn(where, 'agent-AJ_seven');
    await guardian.close();
    const before = joined.length;
    guardian = await start();
    // The job's lifeline reconnects to the new guardian by itself.
    await waitFor(
      () => joined.slice(before).includes('agent-AJ_seven') || undefined,
      listeners,
      30_000,
      'the lifeline to reconnect to the restarted guardian',
    );
    await second.kill();
    const d = await waitFor(
      () => decisions.filter((x) => x.room === where)[1],
      listeners,
      30_000,
      'the second decision',
    );
    expect(d).toMatchObject({
      action: 'skipped',
      reason: 'the call was already re-dispatched 1 time(s), the most allowed (1)',
    });
  });

  it('learns of a job that died without a lifeline from the server’s webhook (about 20 s later)', async () => {
    const where = room();
    await caller(where);
    const agent = await standIn(where, 'agent-AJ_eight', false);
    const killed = Date.now();
    await agent.kill();
    const d = await decision(where, 90_000);
    expect(d).toMatchObject({ action: 'redispatched', source: 'webhook', attempt: 1 });
    expect(d.reason).toMatch(/^the server dropped the agent \((CONNECTION_TIMEOUT|SIGNAL_CLOSE)\)/);
    console.log(
      `[guardian decisions] webhook-only detection: ${Date.now() - killed} ms after kill -9`,
    );
  });

  it('refuses a forged webhook and a lifeline without a valid token', async () => {
    const forged = await fetch(`${guardian.url}/webhook`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-a-token', 'content-type': 'application/webhook+json' },
      body: JSON.stringify({ event: 'participant_left', room: { name: 'x' } }),
    });
    expect(forged.status).toBe(401);
    // A token signed with another secret: refused before anything is read.
    const other = new AccessToken('devkey', 'not-the-secret', { identity: 'AJ_x' });
    other.addGrant({ room: 'x', agent: true });
    expect(await upgradeStatus(`${guardian.url}/lifeline`, await other.toJwt())).toBe(401);
    expect(decisions.filter((d) => d.room === 'x')).toEqual([]);
  });
});

/** The status a lifeline upgrade with `token` gets (101 when accepted). */
function upgradeStatus(url: string, token: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = request(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'taskline-lifeline/1',
        authorization: `Bearer ${token}`,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}
