// A call's remote delegations outlive the voice job that started them: a job resuming the
// call (after the first one's worker died) recovers them by the call's id and speaks each
// result once — whether it was still running, finished while no job was alive, or already
// spoken (then never again). Real SQLite file store, in-process bus, a real worker loop.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import type { DelegationEvent } from '../../src/service/bus/events.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { createDelegationSender } from '../../src/service/bus/sender.js';
import { remoteSubAgent } from '../../src/service/remote.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import { Desk, deliveries, recordEvents, systemText, taskCall, whenSpoken } from './helpers.js';

const CALL = 'RM_call_1';
const FINDING = 'Policy P-7 is active until March.';
const SPOKEN = 'About your policy: it is active until March.';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

/** A shared store and bus, and the back office that answers once released. */
async function backOffice() {
  const store = await SqliteDelegationStore.open({
    path: join(mkdtempSync(join(tmpdir(), 'taskline-recover-')), 'delegations.db'),
  });
  closers.push(() => store.close());
  const bus = new InProcessDelegationBus();
  closers.push(() => bus.close());
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let started!: () => void;
  const working = new Promise<void>((r) => {
    started = r;
  });
  const worker = await serveDelegations({
    agentId: 'back-office',
    bus,
    store,
    handler: async () => {
      started();
      await released;
      return FINDING;
    },
  });
  closers.push(() => worker.close({ abort: true }));
  return { store, bus, release, working };
}

/** One voice job of the call: its sender (own reply inbox), manager and session. */
async function job(
  office: Awaited<ReturnType<typeof backOffice>>,
  agentId: string,
  script: ConstructorParameters<typeof ScriptedLLM>[0] & {
    steps?: Parameters<ScriptedLLM['for']>[1];
  },
) {
  const sender = await createDelegationSender({ agentId, bus: office.bus, store: office.store });
  closers.push(() => sender.close());
  const manager = new TaskManager({
    subagents: [
      remoteSubAgent({
        name: 'lookup',
        description: 'Looks up the caller’s policy in the back office.',
        sender,
        target: 'back-office',
      }),
    ],
  });
  closers.push(() => manager.close());
  const model = new ScriptedLLM({ respond: script.respond }).for(Desk, script.steps ?? []);
  const caller = await SimulatedCaller.start({
    agent: new Desk(manager),
    llm: model,
    callId: CALL,
  });
  closers.push(() => caller.close());
  manager.attach(caller.session);
  return { sender, manager, caller, events: recordEvents(manager) };
}

/** The first job: the caller asks, the model delegates the lookup in the background. */
async function firstJob(office: Awaited<ReturnType<typeof backOffice>>) {
  const first = await job(office, 'voice-a', {
    steps: [
      taskCall({
        subagent_type: 'lookup',
        description: 'Look up the policy',
        prompt: 'Is policy P-7 active?',
        run_in_background: true,
      }),
      { say: 'Let me check that for you.' },
    ],
    respond: (req) => (systemText(req).includes('P-7') ? { say: SPOKEN } : undefined),
  });
  await first.caller.say('Is my policy still active?');
  return first;
}

/** The job that resumes the call: its model speaks a delivered finding. */
function resumingJob(office: Awaited<ReturnType<typeof backOffice>>, agentId: string) {
  return job(office, agentId, {
    respond: (req) => (systemText(req).includes('P-7') ? { say: SPOKEN } : undefined),
  });
}

/** Resolves with the first bus event matching `match` (every event is watched). */
async function busEvent(
  office: Awaited<ReturnType<typeof backOffice>>,
  match: (e: DelegationEvent) => boolean,
): Promise<DelegationEvent> {
  let resolve!: (e: DelegationEvent) => void;
  const seen = new Promise<DelegationEvent>((r) => {
    resolve = r;
  });
  const watch = await office.bus.watch((e) => {
    if (match(e)) resolve(e);
  });
  closers.push(() => watch.close());
  return seen;
}

/** The first job's worker dies: nothing more is heard or said by it. */
async function dies(first: Awaited<ReturnType<typeof firstJob>>) {
  await first.caller.close();
  await first.sender.close();
}

describe('TaskManager.recover: remote delegations outlive the job', () => {
  it('a delegation still running when the worker died is spoken once, by the job that resumes the call', async () => {
    const office = await backOffice();
    const first = await firstJob(office);
    await office.working;
    const [record] = (await office.store.query({ target_subject_id: 'back-office' })).items;
    expect(record?.sub_task_data).toMatchObject({
      call_id: CALL,
      description: 'Look up the policy',
    });
    await dies(first);

    const second = await resumingJob(office, 'voice-b');
    const recovered = await second.manager.recover();
    expect(recovered.map((t) => [t.subagentType, t.description])).toEqual([
      ['lookup', 'Look up the policy'],
    ]);
    const id = recovered[0]!.id;
    await whenSpoken(second.caller, second.manager, id, async () => office.release());
    expect(second.caller.agentLines.filter((l) => l === SPOKEN)).toHaveLength(1);
    expect(deliveries(second.events, id).map((e) => e.type)).toEqual(['delivered']);
    const after = await office.store.get(record!.delegation_id);
    // The result was told to the job that resumed the call, and that is recorded.
    expect(after?.sender_subject_id).toBe('voice-b');
    expect(after?.sub_task_data.delivered_at).toEqual(expect.any(Number));

    // A third job of the call (another crash) finds nothing left to say.
    const third = await resumingJob(office, 'voice-c');
    expect(await third.manager.recover()).toEqual([]);
  });

  it('a delegation that finished while no job was alive is spoken once when the call resumes', async () => {
    const office = await backOffice();
    const first = await firstJob(office);
    await office.working;
    await dies(first);
    const finished = busEvent(office, (e) => e.event === 'delegation_result');
    office.release();
    expect((await finished).record.status.execution?.state).toBe('done');

    const second = await resumingJob(office, 'voice-b');
    const [task] = await second.manager.recover();
    await whenSpoken(second.caller, second.manager, task!.id);
    expect(second.caller.agentLines.filter((l) => l === SPOKEN)).toHaveLength(1);
  });

  it('a result the first job already spoke is never spoken again after its worker dies', async () => {
    const office = await backOffice();
    office.release();
    const marked = busEvent(
      office,
      (e) => e.change === 'update' && e.record.sub_task_data.delivered_at !== undefined,
    );
    const first = await firstJob(office);
    await whenSpoken(first.caller, first.manager, 't1');
    expect(first.caller.agentLines.filter((l) => l === SPOKEN)).toHaveLength(1);
    await marked;
    await dies(first);

    const second = await resumingJob(office, 'voice-b');
    expect(await second.manager.recover()).toEqual([]);
  });

  it('refuses to recover before the manager is attached to the call', async () => {
    const manager = new TaskManager({ subagents: [] });
    closers.push(() => manager.close());
    await expect(manager.recover()).rejects.toMatchObject({ code: 'invalid_state' });
  });
});
