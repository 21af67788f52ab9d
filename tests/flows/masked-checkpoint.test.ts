// A masked value stays masked in the checkpoint database too (issue 25, item 5): a PIN
// collected with mask: true and a card number are never written in clear. Without keys they
// are withheld and asked again after a resume; with the app's keys they are sealed
// (AES-256-GCM) and restored. SQLite and PostgreSQL, read back with plain SQL.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { announce } from '../../src/flows/announce.js';
import { flow } from '../../src/flows/builder.js';
import type { CheckpointKey } from '../../src/flows/checkpoints/index.js';
import type { CheckpointInfo, FlowRunOptions } from '../../src/flows/runner.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { serviceMissing } from '../services.js';
import {
  AMOUNT,
  DONE,
  PIN,
  postgresUnderTest,
  type StoreUnderTest,
  sqliteUnderTest,
  startBank,
} from './bank-flow.js';
import { PG_URL, uniqueTable } from './pg.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-masked-'));
const callers: SimulatedCaller[] = [];
const stores: StoreUnderTest[] = [];
afterEach(async () => {
  for (const c of callers.splice(0)) await c.close();
});
afterAll(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const CARD = '4111111111111111';
const CARD_PROMPT = 'Key in your card number.';
/** A card number collected on the keypad with no mask: the number itself is the secret. */
const cardFlow = flow('card')
  .step('consent', yesNo({ name: 'consent', question: 'Pay by card?' }))
  .step('card', collectDigits({ name: 'card', prompt: CARD_PROMPT, minDigits: 16, maxDigits: 16 }))
  .step('ok', yesNo({ name: 'ok', question: 'Shall I charge it?' }))
  .step('bye', announce('Done.'));

/** Waits for the write a hang-up leaves (an event, not time). */
function hangupWritten() {
  let done!: () => void;
  const written = new Promise<void>((resolve) => {
    done = resolve;
  });
  return {
    written,
    onCheckpoint: (info: CheckpointInfo) => {
      if (info.status === 'hangup') done();
    },
  };
}

function describeMasked(make: () => Promise<StoreUnderTest>, name: string, skip: boolean) {
  describe(`masked answers in checkpoints (${name})`, { skip }, () => {
    let store: StoreUnderTest;
    beforeAll(async () => {
      store = await make();
      stores.push(store);
    });
    const key = (flowName: string, callId: string): CheckpointKey => ({ flow: flowName, callId });

    /** Answers consent and the PIN, hangs up at the amount; returns the stored row's text. */
    async function dropAtAmount(callId: string, extra: FlowRunOptions = {}) {
      const w = hangupWritten();
      const s = await startBank({
        checkpoints: await store.open(),
        callId,
        onCheckpoint: w.onCheckpoint,
        ...extra,
      });
      callers.push(s.caller);
      await s.caller.say('yes');
      await s.caller.dtmf('4321');
      expect(s.caller.agentLines.at(-1)).toBe(AMOUNT);
      await s.caller.hangup();
      await w.written;
      return (await store.raw(key('bank', callId)))!;
    }

    it('never writes a masked PIN in clear; a resumed call asks for it again, then goes on', async () => {
      const callId = `${name}-pin`;
      const row = await dropAtAmount(callId);
      expect(row).toContain('"consent"');
      expect(row).not.toContain('4321');
      const s = await startBank({ checkpoints: await store.open(), callId });
      callers.push(s.caller);
      expect(s.caller.agentLines).toEqual([
        "Welcome back. We'll pick up where we left off: the amount. For your security, I need to ask for your PIN again first.",
        PIN,
      ]);
      await s.caller.dtmf('4321');
      // Straight back to where the caller was: consent is not asked again.
      expect(s.caller.agentLines.at(-1)).toBe(AMOUNT);
      await s.caller.say('forty');
      expect(s.caller.agentLines.at(-1)).toBe(DONE);
      expect(s.box.result).toMatchObject({
        status: 'completed',
        value: { consent: true, pin: '4321', amount: 40 },
      });
      expect(await store.raw(key('bank', callId))).not.toContain('4321');
    });

    it('with the app’s keys, seals the PIN and restores it on resume without asking', async () => {
      const callId = `${name}-sealed`;
      const sealKeys = randomBytes(32);
      const row = await dropAtAmount(callId, { sealKeys });
      expect(row).not.toContain('4321');
      expect(row).toContain('"sealed"');
      const s = await startBank({ checkpoints: await store.open(), callId, sealKeys });
      callers.push(s.caller);
      expect(s.caller.agentLines).toEqual([
        "Welcome back. We'll pick up where we left off: the amount.",
        AMOUNT,
      ]);
      await s.caller.say('forty');
      expect(s.box.result).toMatchObject({
        status: 'completed',
        value: { consent: true, pin: '4321', amount: 40 },
      });
      expect(await store.raw(key('bank', callId))).not.toContain('4321');
    });

    it('refuses a sealed PIN that does not open with the keys given', async () => {
      const callId = `${name}-wrong-key`;
      await dropAtAmount(callId, { sealKeys: randomBytes(32) });
      const s = await startBank({
        checkpoints: await store.open(),
        callId,
        sealKeys: randomBytes(32),
      });
      callers.push(s.caller);
      expect(s.caller.agentLines).toEqual([]);
      expect(s.box.result).toMatchObject({
        status: 'failed',
        error: { code: 'checkpoint_refused' },
        refused: { code: 'sealed_answer', step: 'pin' },
      });
    });

    it('never writes a card number in clear, even from a step that does not mask it', async () => {
      const callId = `${name}-card`;
      const w = hangupWritten();
      const s = await startBank(
        { checkpoints: await store.open(), callId, onCheckpoint: w.onCheckpoint },
        (o) => cardFlow.run(o),
      );
      callers.push(s.caller);
      await s.caller.say('yes');
      await s.caller.dtmf(CARD);
      expect(s.caller.agentLines.at(-1)).toBe('Shall I charge it?');
      await s.caller.hangup();
      await w.written;
      const row = (await store.raw(key('card', callId)))!;
      expect(row).toContain('"consent"');
      expect(row).not.toContain(CARD);
      expect(row).not.toContain('1111 1111');
    });

    it('returns a completed call without the PIN it never stored, saying so (ifCompleted: return)', async () => {
      const callId = `${name}-return`;
      const first = await startBank({ checkpoints: await store.open(), callId });
      callers.push(first.caller);
      await first.caller.say('yes');
      await first.caller.dtmf('4321');
      await first.caller.say('forty');
      expect(first.box.result).toMatchObject({ status: 'completed' });
      expect(await store.raw(key('bank', callId))).not.toContain('4321');
      const again = await startBank({
        checkpoints: await store.open(),
        callId,
        ifCompleted: 'return',
      });
      callers.push(again.caller);
      expect(again.caller.agentLines).toEqual([]);
      expect(again.box.result).toMatchObject({
        status: 'completed',
        value: { consent: true, amount: 40 },
        withheld: ['pin'],
      });
      const value = again.box.result?.status === 'completed' ? again.box.result.value : undefined;
      expect(Object.keys(value as object)).not.toContain('pin');
    });
  });
}

describeMasked(() => sqliteUnderTest(join(dir, 'masked.db')), 'sqlite', false);
const noPostgres = (await serviceMissing('postgres')) !== undefined;
describeMasked(
  () => postgresUnderTest(PG_URL, uniqueTable('taskline_masked_test')),
  'postgres',
  noPostgres,
);
