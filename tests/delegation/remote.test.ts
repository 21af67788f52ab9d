// A voice session delegates to a worker through a durable record: task tool → SQLite
// record + outbox → bus → serveDelegations → result → spoken to the caller.
import { afterEach, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { createDelegationSender } from '../../src/service/bus/sender.js';
import { remoteSubAgent } from '../../src/service/remote.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import { Desk, systemText, taskCall, whenSpoken } from './helpers.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('remote sub-agents (durable delegations)', () => {
  it('speaks a result computed by another agent, with the record trail in the store', async () => {
    const bus = new InProcessDelegationBus();
    const store = await SqliteDelegationStore.open({ path: ':memory:' });
    closers.push(() => store.close());
    const briefs: unknown[] = [];
    const worker = await serveDelegations({
      agentId: 'back-office',
      bus,
      store,
      handler: async (task) => {
        briefs.push(task.record.sub_task_data);
        return 'Flight LX318 on Monday is available.';
      },
    });
    closers.push(() => worker.close());
    const sender = await createDelegationSender({ agentId: 'voice-bot', bus, store });
    closers.push(() => sender.close());
    const manager = new TaskManager({
      subagents: [
        remoteSubAgent({
          name: 'booking',
          description: 'Checks flight availability in the back office.',
          sender,
          target: 'back-office',
        }),
      ],
    });
    const model = new ScriptedLLM().for(Desk, [
      taskCall({
        subagent_type: 'booking',
        description: 'Check Monday flights',
        prompt: 'Is LX318 on Monday available?',
        run_in_background: true,
      }),
      { say: 'Let me check that with our booking team.' },
      (req) => ({
        say: systemText(req).includes('LX318 on Monday is available')
          ? 'Good news: LX318 is available.'
          : '??',
      }),
    ]);
    const caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
    closers.push(() => caller.close());
    await caller.say('Can I fly to Zurich on Monday?');
    await whenSpoken(caller, manager, 't1');
    expect(caller.agentLines).toEqual([
      'Let me check that with our booking team.',
      'Good news: LX318 is available.',
    ]);
    // The call the delegation belongs to travels with it (a resumed call recovers it by this).
    expect(briefs).toEqual([
      {
        prompt: 'Is LX318 on Monday available?',
        description: 'Check Monday flights',
        call_id: caller.call.callId,
      },
    ]);
    const { items } = await store.query({ target_subject_id: 'back-office' });
    expect(items).toHaveLength(1);
    expect(items[0]?.sender_subject_id).toBe('voice-bot');
    expect(items[0]?.status.execution?.state).toBe('done');
    expect(items[0]?.status.execution?.delegation_result).toBe(
      'Flight LX318 on Monday is available.',
    );
    model.assertComplete();
  });
});
