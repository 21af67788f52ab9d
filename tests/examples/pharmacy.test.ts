// examples/pharmacy where its features meet: the menu by voice, keyed and said numbers with
// read-backs and corrections, a pharmacist after repeated failures, and SQLite checkpoints
// opened in onEnter before the flow starts — then a dropped call resumed from the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as demo from '../../examples/pharmacy/demo.js';
import {
  createPharmacyCall,
  PHARMACIST,
  type RefillCheckpoints,
} from '../../examples/pharmacy/index.js';
import type { CheckpointStore } from '../../src/flows/checkpoints/types.js';
import { openCheckpointStore } from '../../src/flows/index.js';
import type { RecordingTransferer } from '../../src/telephony/transfer.js';
import { expectCall, SimulatedCaller } from '../../src/testing/index.js';

const dirs: string[] = [];
const stores: CheckpointStore[] = [];
const callers: SimulatedCaller[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A real SQLite file, opened the way the room entry opens it: when the call needs it. */
function sqlite(path?: string): { path: string; checkpoints: RefillCheckpoints } {
  const file =
    path ??
    join(
      (() => {
        const d = mkdtempSync(join(tmpdir(), 'taskline-pharmacy-'));
        dirs.push(d);
        return d;
      })(),
      'checkpoints.db',
    );
  return {
    path: file,
    checkpoints: {
      callId: 'tel:+14155550123',
      open: async () => {
        const store = await openCheckpointStore({ kind: 'sqlite', path: file });
        stores.push(store);
        return store;
      },
    },
  };
}

async function call(checkpoints?: RefillCheckpoints) {
  const built = createPharmacyCall(checkpoints ? { checkpoints } : {});
  const model = demo.createScriptedModel();
  const caller = await SimulatedCaller.start({ agent: built.agent, llm: model });
  callers.push(caller);
  return { ...built, model, caller };
}

describe('examples/pharmacy', () => {
  it('books a refill from the demo script, checkpointed in SQLite opened before the flow', async () => {
    const { checkpoints } = sqlite();
    const { caller, model, result } = await call(checkpoints);
    // The store opens in onEnter after the menu: the caller's words still reach the menu.
    await caller.play(demo.demoScript);
    expect(result()).toEqual({
      outcome: 'refill_booked',
      answers: { date_of_birth: '1980-03-15', rx_number: '1234567' },
    });
    expectCall(caller, model)
      .agentSaid('I have Saturday, March 15, 1980. Is that right?')
      .agentSaid('I have 1 2 3, 4 5 6 7. Is that right?')
      .noModelCallWhile('date_of_birth')
      .noModelCallWhile('rx_number');
    expect(caller.endedBy).toBe('bot');
  });

  it('resumes a dropped call from the SQLite file at the question it stopped on', async () => {
    const { path, checkpoints } = sqlite();
    const first = await call(checkpoints);
    await first.caller.play([{ keys: '1' }, { keys: '03151980' }, { say: 'yes' }]);
    expect(first.caller.agentLines.at(-1)).toMatch(/^What is your 7-digit prescription number\?/);
    await first.caller.hangup();

    const again = await call(sqlite(path).checkpoints);
    await again.caller.playTurn({ keys: '1' });
    expect(again.caller.agentLines.slice(-2)).toEqual([
      "Welcome back. We'll pick up where we left off: your prescription number.",
      'What is your 7-digit prescription number? It is on the label, after R X.',
    ]);
    await again.caller.play([{ keys: '7654321' }, { say: 'yes' }]);
    expect(again.result()).toEqual({
      outcome: 'refill_booked',
      answers: { date_of_birth: '1980-03-15', rx_number: '7654321' },
    });
  });

  it('hands the caller to a pharmacist after two unusable answers, once', async () => {
    const { caller, result, transferer } = await call();
    await caller.play([
      { say: 'a refill please' },
      { say: "I don't know" },
      { say: 'no idea at all' },
    ]);
    expect(result().outcome).toBe('transferred');
    const transfers = (transferer as RecordingTransferer).requests;
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ to: PHARMACIST, mode: 'cold' });
    expect(transfers[0]?.summary).toMatch(/^Refill caller could not give their date of birth/);
  });
});
