/**
 * A call survives its worker, through a real LiveKit server: two workers of the crash-safe
 * survey keep lifelines to a real `taskline guardian` (which also gets the server's signed
 * webhooks); the worker serving a call is killed with SIGKILL in the middle of the flow while
 * the caller stays in the room; the guardian dispatches the agent again, the other worker's
 * job resumes the flow from the SQLite checkpoint at the first unanswered step, apologising
 * once, and asks nothing that was answered.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSENT_QUESTION,
  EMAIL_QUESTION,
  REFERRAL_QUESTION,
  SCORE_QUESTION,
  type SurveyOutcome,
  THANKS_LINE,
} from '../../examples/survey/index.js';
import { resumeApology } from '../../src/app/continuity.js';
import { type GuardianProcess, startGuardianProcess } from './guardian-process.js';
import {
  E2E_DIR,
  liveKitSuite,
  liveKitUnavailable,
  PORTS,
  type TestCaller,
  type Worker,
} from './harness/index.js';
import { CRASH_SAFE_AGENT } from './workers/crash-safe.js';

const WORKER = 'tests/e2e/workers/crash-safe.ts';
/** This file's own ports, beside the server's (TASKLINE_LIVEKIT_PORT moves them all). */
const GUARDIAN_PORT = PORTS.http + 70;
const WORKER_PORTS = [PORTS.http + 71, PORTS.http + 72];
const BOB = { identity: 'sip_bob', phoneNumber: '+14155550177' };
const APOLOGY = resumeApology({ flow: 'survey', callId: '', step: '', answered: 0 });
const exact = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

describe.skipIf(await liveKitUnavailable())('a call survives its worker (guardian)', () => {
  const lk = liveKitSuite({ webhooks: [`http://127.0.0.1:${GUARDIAN_PORT}/webhook`] });
  let guardian: GuardianProcess;
  const workers: Worker[] = [];
  const checkpoints = join(E2E_DIR, `crash-safe-${process.pid}.db`);

  beforeAll(async () => {
    guardian = await startGuardianProcess(lk.server, GUARDIAN_PORT, ['--max-redispatches', '2']);
    for (const port of WORKER_PORTS) {
      workers.push(
        await lk.worker({
          file: WORKER,
          agentName: CRASH_SAFE_AGENT,
          port,
          env: { TASKLINE_CHECKPOINTS: checkpoints, TASKLINE_GUARDIAN_URL: guardian.url },
        }),
      );
    }
  }, 180_000);

  afterAll(async () => {
    await guardian?.stop();
  });

  /** The worker whose job serves the agent `identity` (`agent-<job id>`). */
  const servingWorker = (identity: string): Worker => {
    const jobId = identity.replace(/^agent-/, '');
    const found = workers.find((w) => w.lines.some((l) => l.includes(jobId)));
    if (!found) throw new Error(`no worker logged job ${jobId}`);
    return found;
  };

  const agentIn = (caller: TestCaller) =>
    [...caller.room.remoteParticipants.values()].find((p) => p.identity.startsWith('agent-'));

  it('kill -9 mid-flow: the other worker resumes at the first unanswered step, asking nothing answered again', async () => {
    const room = `crash-${process.pid}-1`;
    const caller = await lk.call(room, CRASH_SAFE_AGENT, BOB);
    await caller.heard(exact(CONSENT_QUESTION), 60_000);
    await caller.quiet();
    await caller.say('yes, sure');
    await caller.heard(exact(SCORE_QUESTION));
    await caller.quiet();
    await caller.press('9');
    await caller.heard(exact(REFERRAL_QUESTION));
    const first = agentIn(caller)!.identity;
    const dying = servingWorker(first);
    const other = workers.find((w) => w !== dying)!;
    const linesBefore = caller.agentLines.length;

    const killedAt = Date.now();
    await dying.kill();

    const decision = await guardian.decision((d) => d.room === room && d.action === 'redispatched');
    expect(decision).toMatchObject({ source: 'lifeline', attempt: 1, identity: first });
    // The new agent joins and apologises once, then asks the first unanswered question.
    await caller.participant(new RegExp(`^agent-(?!${first.slice(6)})`), true, 60_000);
    const apology = await caller.heard(exact(APOLOGY), 60_000, linesBefore);
    const asked = await caller.heard(exact(REFERRAL_QUESTION), 60_000, linesBefore);
    const resumedWithinMs = apology.at - killedAt;
    console.log(
      `[guardian e2e] kill -9 → decision ${decision.printedAt - killedAt} ms, → apology heard ${resumedWithinMs} ms, → question ${asked.at - killedAt} ms`,
    );
    expect(caller.disconnectReason).toBeUndefined();
    expect(agentIn(caller)?.identity).not.toBe(first);

    await caller.quiet();
    await caller.say('yes please');
    await caller.heard(exact(EMAIL_QUESTION));
    await caller.quiet();
    await caller.say('jane dot doe at example dot com');
    await caller.afterTurn();
    await caller.say('yes');
    await caller.heard(exact(THANKS_LINE));
    const done = await other.result<SurveyOutcome>(room);
    expect(done.result).toEqual({
      status: 'completed',
      answers: { consent: true, score: 9, referral: true, email: 'jane.doe@example.com' },
    });
    const said = caller.agentLines.map((l) => l.text);
    expect(said.filter((t) => t === CONSENT_QUESTION)).toHaveLength(1);
    expect(said.filter((t) => t === SCORE_QUESTION)).toHaveLength(1);
    expect(said.filter((t) => t === APOLOGY)).toHaveLength(1);
    expect(said.filter((t) => t.startsWith('Welcome back'))).toEqual([]);
    await caller.disconnected();
    expect(caller.roomDeleted).toBe(true);
    // One re-dispatch for this call, and no second agent at any time.
    expect(
      guardian.decisions.filter((d) => d.room === room && d.action === 'redispatched'),
    ).toHaveLength(1);
  });
});
