// Checkpoints record the flow's version; a call checkpointed under another version resumes
// only through the migration the app gives, and is refused with a typed reason otherwise.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/index.js';
import type { FlowMigration } from '../../src/flows/definition.js';
import { parseFlow } from '../../src/flows/document/load.js';
import type { CheckpointInfo } from '../../src/flows/runner.js';
import type { FlowResult } from '../../src/flows/types.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const callers: SimulatedCaller[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});

const V1 = `flow: feedback
version: 1
steps:
  - { id: consent, task: yesNo, with: { question: Do you have a minute? }, next: { "true": rating, "false": end } }
  - { id: rating, task: likert, with: { question: From 1 to 5?, min: 1, max: 5 }, label: your rating }
  - { id: bye, announce: "Thanks! You gave us {{rating}}." }
`;
/** Version 2 renames "consent" to "agree". */
const V2 = V1.replace('version: 1', 'version: 2')
  .replace('id: consent', 'id: agree')
  .replace('name: consent', 'name: agree');

async function run(text: string, checkpoints: MemoryCheckpointStore, migrate?: FlowMigration) {
  const f = parseFlow(text, { migrate });
  const box: { result?: FlowResult<unknown> } = {};
  let hungUp!: () => void;
  const written = new Promise<void>((resolve) => {
    hungUp = resolve;
  });
  class Host extends voice.Agent {
    constructor() {
      super({ id: 'host', instructions: 'host' });
    }
    override async onEnter(): Promise<void> {
      box.result = await f.run({
        checkpoints,
        callId: 'caller-1',
        onCheckpoint: (i: CheckpointInfo) => {
          if (i.status === 'hangup') hungUp();
        },
      });
    }
  }
  const caller = await SimulatedCaller.start({ agent: new Host(), llm: new ScriptedLLM() });
  callers.push(caller);
  return { caller, box, written };
}

/** Version 1: consent given, then the caller hangs up at the rating. */
async function dropUnderV1(checkpoints: MemoryCheckpointStore) {
  const first = await run(V1, checkpoints);
  await first.caller.say('yes');
  expect(first.caller.agentLines.at(-1)).toBe('From 1 to 5?');
  await first.caller.hangup();
  await first.written;
  const stored = await checkpoints.load({ flow: 'feedback', callId: 'caller-1' });
  expect(stored?.state).toMatchObject({ version: 1, position: 'rating' });
}

describe('a flow of another version', () => {
  it('resumes through the app’s migration, its answers checked like any checkpoint', async () => {
    const checkpoints = new MemoryCheckpointStore();
    await dropUnderV1(checkpoints);
    const migrate: FlowMigration = ({ from, to, answers }) => {
      expect([from, to]).toEqual([1, 2]);
      const { consent, ...rest } = answers;
      return { answers: { ...rest, agree: consent } };
    };
    const back = await run(V2, checkpoints, migrate);
    expect(back.caller.agentLines).toEqual([
      "Welcome back. We'll pick up where we left off: your rating.",
      'From 1 to 5?',
    ]);
    await back.caller.say('four');
    expect(back.caller.agentLines.at(-1)).toBe('Thanks! You gave us 4.');
    expect(back.box.result).toMatchObject({
      status: 'completed',
      value: { agree: true, rating: 4 },
    });
    const stored = await checkpoints.load({ flow: 'feedback', callId: 'caller-1' });
    expect(stored?.state.version).toBe(2);
  });

  it('is refused (version_mismatch) without a migration, or when it declines the call', async () => {
    for (const migrate of [undefined, () => undefined]) {
      const checkpoints = new MemoryCheckpointStore();
      await dropUnderV1(checkpoints);
      const back = await run(V2, checkpoints, migrate);
      expect(back.caller.agentLines).toEqual([]);
      expect(back.box.result).toMatchObject({
        status: 'failed',
        error: { code: 'checkpoint_refused' },
        refused: { code: 'version_mismatch' },
      });
    }
  });

  it('refuses what a migration makes when it does not fit the new version', async () => {
    const checkpoints = new MemoryCheckpointStore();
    await dropUnderV1(checkpoints);
    const back = await run(V2, checkpoints, () => ({ answers: { agree: 'sure' } }));
    expect(back.caller.agentLines).toEqual([]);
    expect(back.box.result).toMatchObject({
      refused: { code: 'invalid_answer', step: 'agree' },
    });
  });
});
