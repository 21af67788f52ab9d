/**
 * ivr-bank's transfers that cannot be made, through a real LiveKit server: the bot says so
 * and ends the call, nothing pretends to transfer. (Its scenarios run in scenarios.test.ts
 * as room calls and, those that transfer, in sip.test.ts as SIP calls through livekit-sip.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { BankResult } from '../../examples/ivr-bank/index.js';
import { AGENT_NAME } from '../../examples/ivr-bank/room.js';
import { liveKitSuite, liveKitUnavailable, type Worker } from './harness/index.js';

const WORKER = 'tests/e2e/workers/ivr-bank.ts';
const MENU = /^Welcome to Taskline Bank\. For your balance, press 1\./;
const HOLD = /^Please hold while I transfer you to a colleague\.$/;
const SORRY = /^Sorry I could not help\. Goodbye\.$/;

describe.skipIf(await liveKitUnavailable())('ivr-bank: transfers that cannot be made', () => {
  const lk = liveKitSuite();
  let w: Worker;
  let n = 0;
  const room = () => `bank-${process.pid}-${++n}`;
  beforeAll(async () => {
    w = await lk.worker({ file: WORKER, agentName: AGENT_NAME });
  });

  describe('transfers refused', () => {
    it('a cold transfer of a caller who is not on a phone line (a web participant) is refused, and the caller is told', async () => {
      const name = room();
      const caller = await lk.call(name, AGENT_NAME, { identity: 'web_bob' });
      await caller.heard(MENU, 120_000);
      await caller.quiet();
      await caller.say('I need to talk to someone');
      await caller.heard(HOLD);
      await caller.heard(SORRY);
      const { result, transfer } = await w.result<BankResult>(name);
      expect(result.outcome).toBe('ended');
      expect(transfer).toMatchObject({ ok: false, mode: 'cold' });
      expect(transfer?.ok === false && transfer.reason).toMatch(/not on a phone line/);
      await caller.disconnected();
      expect(caller.roomDeleted).toBe(true);
    });

    it('a cold transfer the server refuses (a SIP-kind participant with no SIP call behind it) is said, not pretended', async () => {
      const name = room();
      const caller = await lk.call(name, AGENT_NAME, {
        identity: 'sip_alice',
        phoneNumber: '+14155550123',
      });
      await caller.heard(MENU, 120_000);
      await caller.press('3');
      await caller.heard(HOLD);
      await caller.heard(SORRY, 60_000);
      const { result, transfer } = await w.result<BankResult>(name);
      expect(result.outcome).toBe('ended');
      expect(transfer).toMatchObject({ ok: false, mode: 'cold' });
      await caller.disconnected();
      expect(caller.roomDeleted).toBe(true);
    });
  });
});
