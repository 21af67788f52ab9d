/**
 * A call survives its worker, through a real LiveKit server: two workers of the crash-safe
 * survey keep lifelines to a real `taskline guardian` (which also gets the server's signed
 * webhooks); the worker serving a call is killed with SIGKILL in the middle of the flow while
 * the caller stays in the room; the guardian dispatches the agent again, the other worker's
 * job resumes the flow from the SQLite checkpoint at the first unanswered step, apologising
 * once, and asks nothing that was answered. The account lookup the call started in the
 * background (a durable delegation over NATS JetStream, answered by this test's back office)
 * is recovered by the new job and its finding spoken exactly once.
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
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { type DelegationWorker, serveDelegations } from '../../src/service/worker.js';
import { NATS_URL, serviceMissing } from '../services.js';
import { type GuardianProcess, startGuardianProcess } from './guardian-process.js';
import {
  E2E_DIR,
  liveKitSuite,
  liveKitUnavailable,
  PORTS,
  type TestCaller,
  type Worker,
} from './harness/index.js';
import {
  CHECKPOINT_PREFIX,
  CRASH_SAFE_AGENT,
  FINDING,
  FINDING_LINE,
  LOOKUP,
} from './workers/crash-safe.js';

const WORKER = 'tests/e2e/workers/crash-safe.ts';
/** This file's own ports, beside the server's (TASKLINE_LIVEKIT_PORT moves them all). */
const GUARDIAN_PORT = PORTS.http + 13;
const WORKER_PORTS = [PORTS.http + 14, PORTS.http + 15];
const BOB = { identity: 'sip_bob', phoneNumber: '+14155550177' };
const APOLOGY = resumeApology({
  flow: 'survey',
  callId: '',
  step: '',
  answered: 0,
  reask: [],
  reaskLabels: [],
  reaskMasked: false,
});
const exact = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

const BACK_OFFICE = `back-office-${process.pid}`;
const BUS_PREFIX = `e2e_guardian_${process.pid}`;

/** The back office: answers the account lookup only when the test releases it. */
class BackOffice {
  readonly asked: Array<Record<string, unknown>> = [];
  #release!: () => void;
  readonly #released = new Promise<void>((r) => {
    this.#release = r;
  });
  #started!: () => void;
  /** Resolves once the lookup is being worked on. */
  readonly working = new Promise<void>((r) => {
    this.#started = r;
  });

  handle = async ({ data }: { data: Record<string, unknown> }): Promise<string> => {
    this.asked.push(data);
    this.#started();
    await this.#released;
    return FINDING;
  };

  release(): void {
    this.#release();
  }
}

const unavailable = (await liveKitUnavailable()) ?? (await serviceMissing('nats'));

describe.skipIf(unavailable)('a call survives its worker (guardian)', () => {
  const lk = liveKitSuite({ webhooks: [`http://127.0.0.1:${GUARDIAN_PORT}/webhook`] });
  let guardian: GuardianProcess;
  const workers: Worker[] = [];
  const checkpoints = join(E2E_DIR, `crash-safe-${process.pid}.db`);
  const office = new BackOffice();
  let store: SqliteDelegationStore;
  let bus: NatsDelegationBus;
  let officeWorker: DelegationWorker;

  beforeAll(async () => {
    const delegations = join(E2E_DIR, `crash-safe-delegations-${process.pid}.db`);
    store = await SqliteDelegationStore.open({ path: delegations });
    bus = await NatsDelegationBus.connect({
      servers: NATS_URL,
      prefix: BUS_PREFIX,
      contract: false,
    });
    officeWorker = await serveDelegations({
      agentId: BACK_OFFICE,
      bus,
      store,
      handler: office.handle,
    });
    // The agent's lines, synthesised once before the call (the speech server keeps them): on
    // a machine shared by many processes a cold espeak-ng synthesis can outlast upstream's
    // 10 s TTS idle bound, which cuts the line and the caller hears nothing.
    await warmSpeech(lk.speech.url, [
      CONSENT_QUESTION,
      SCORE_QUESTION,
      REFERRAL_QUESTION,
      APOLOGY,
      FINDING_LINE,
      EMAIL_QUESTION,
      THANKS_LINE,
    ]);
    guardian = await startGuardianProcess(lk.server, GUARDIAN_PORT, ['--max-redispatches', '2']);
    for (const port of WORKER_PORTS) {
      workers.push(
        await lk.worker({
          file: WORKER,
          agentName: CRASH_SAFE_AGENT,
          port,
          env: {
            TASKLINE_CHECKPOINTS: checkpoints,
            TASKLINE_GUARDIAN_URL: guardian.url,
            TASKLINE_E2E_BACKOFFICE: BACK_OFFICE,
            TASKLINE_DELEGATIONS: delegations,
            TASKLINE_NATS_URL: NATS_URL,
            TASKLINE_E2E_BUS_PREFIX: BUS_PREFIX,
          },
        }),
      );
    }
  }, 180_000);

  afterAll(async () => {
    office.release();
    await guardian?.stop();
    await officeWorker?.close({ abort: true });
    await bus?.deleteStream().catch(() => undefined);
    await bus?.close();
    await store?.close();
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
    // The lookup the call started is running in the back office when the worker dies.
    await office.working;
    expect(office.asked).toEqual([expect.objectContaining(LOOKUP)]);
    const first = agentIn(caller)!.identity;
    const dying = servingWorker(first);
    const other = workers.find((w) => w !== dying)!;
    const linesBefore = caller.agentLines.length;
    const otherFrom = other.lines.length;

    const killedAt = Date.now();
    await dying.kill();

    const decision = await guardian.decision((d) => d.room === room && d.action === 'redispatched');
    expect(decision).toMatchObject({ source: 'lifeline', attempt: 1, identity: first });
    // The other worker's job claims the call's checkpoint at the first unanswered step.
    const claimed = await other.line(/"position":"referral"/, 60_000, otherFrom);
    const resumedAt = Date.now();
    expect(claimed.startsWith(CHECKPOINT_PREFIX)).toBe(true);
    // The new agent apologises once, then asks the first unanswered question.
    const apology = await caller.heard(exact(APOLOGY), 60_000, linesBefore);
    const asked = await caller.heard(exact(REFERRAL_QUESTION), 60_000, linesBefore);
    console.log(
      `[guardian e2e] kill -9 → re-dispatch ${decision.printedAt - killedAt} ms, → resumed at the step ${resumedAt - killedAt} ms, → apology said ${apology.at - killedAt} ms, → question said ${asked.at - killedAt} ms`,
    );
    // How soon (the goal: within 5 s of the kill) is printed above, not asserted: a
    // time on a machine shared by many processes is a measurement, not a property of the code.
    expect(caller.disconnectReason).toBeUndefined();
    expect(agentIn(caller)?.identity).not.toBe(first);

    // The back office finishes now: its finding reaches the new job over NATS and is said
    // once the line is idle (this bot delivers with deliverAt: 'interrupt'), once, by the new
    // job; the open question is asked again after it.
    office.release();
    const finding = await caller.heard(exact(FINDING_LINE), 60_000, linesBefore);
    await caller.heard(exact(REFERRAL_QUESTION), 60_000, caller.agentLines.indexOf(finding) + 1);
    await caller.quiet();
    await caller.say('yes please');
    await caller.heard(exact(EMAIL_QUESTION), 60_000, linesBefore);
    await caller.quiet();
    await caller.say('jane dot doe at example dot com');
    await caller.afterTurn();
    await caller.say('yes');
    await caller.heard(exact(THANKS_LINE));
    const done = await other.result<SurveyOutcome>(room);
    expect(done.result).toEqual({
      status: 'completed',
      answers: { consent: true, score: 9, referral: true, email: 'jane.doe@example.com' },
      repairs: {},
    });
    const said = caller.agentLines.map((l) => l.text);
    expect(said.filter((t) => t === CONSENT_QUESTION)).toHaveLength(1);
    expect(said.filter((t) => t === SCORE_QUESTION)).toHaveLength(1);
    expect(said.filter((t) => t === APOLOGY)).toHaveLength(1);
    expect(said.filter((t) => t.startsWith('Welcome back'))).toEqual([]);
    expect(said.filter((t) => t === FINDING_LINE)).toHaveLength(1);
    // The work was done once, by the back office; the new job did not ask for it again.
    expect(office.asked).toHaveLength(1);
    await caller.disconnected();
    expect(caller.roomDeleted).toBe(true);
    // One re-dispatch for this call, and no second agent at any time.
    expect(
      guardian.decisions.filter((d) => d.room === room && d.action === 'redispatched'),
    ).toHaveLength(1);
  });
});

/**
 * Asks the local speech server for each line (whole, and sentence by sentence, as a TTS
 * stream may split it), so the worker's own requests are answered from its cache.
 */
async function warmSpeech(url: string, lines: string[]): Promise<void> {
  const texts = new Set(lines.flatMap((l) => [l, ...l.split(/(?<=[.!?])\s+/)]));
  for (const input of texts) {
    const res = await fetch(`${url}/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer local' },
      body: JSON.stringify({ model: 'tts-1', voice: 'alloy', input, response_format: 'pcm' }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status, `speech for ${input}`).toBe(200);
    await res.arrayBuffer();
  }
}
