/**
 * The server going away mid-call: the call ends with a typed outcome (nothing hangs), and
 * the worker reconnects to the server when it is back and takes the next call.
 */
import { describe, expect, it } from 'vitest';
import type { BankResult } from '../../examples/ivr-bank/index.js';
import { AGENT_NAME } from '../../examples/ivr-bank/room.js';
import { liveKitSuite, liveKitUnavailable } from './harness/index.js';

const MENU = /^Welcome to Taskline Bank\. For your balance, press 1\./;
const PIN_PROMPT = /^Please enter your 4-digit PIN\.$/;
const ALICE = { identity: 'sip_alice', phoneNumber: '+14155550123' };

describe.skipIf(await liveKitUnavailable())('the LiveKit server going away mid-call', () => {
  // A server of its own: this file kills it.
  const lk = liveKitSuite({ ownServer: true });

  it('ends the call with a typed outcome; the worker reconnects and takes the next call', async () => {
    const worker = await lk.worker({
      file: 'tests/e2e/workers/ivr-bank.ts',
      agentName: AGENT_NAME,
    });
    const name = `gone-${process.pid}-1`;
    const caller = await lk.call(name, AGENT_NAME, ALICE);
    await caller.heard(MENU);
    await caller.press('1');
    await caller.heard(PIN_PROMPT);
    await caller.press('43');
    const registered = worker.lines.filter((l) => l.includes('registered worker')).length;
    await lk.crashServer();
    // The job loses its room: the call ends as a hang-up, its result printed, bounded.
    const { result } = await worker.result<BankResult>(name, 60_000);
    expect(result.outcome).toBe('hangup');
    expect(result.captured.map((c) => c.name)).toEqual(['main_menu']);
    await caller.leave();

    await lk.restartServer();
    // The worker registers again by itself (upstream retries the connection).
    await waitForRegistrations(worker, registered + 1);
    const again = `gone-${process.pid}-2`;
    const next = await lk.call(again, AGENT_NAME, ALICE);
    await next.heard(MENU, 60_000);
    await next.press('1');
    await next.heard(PIN_PROMPT);
    await next.press('4321');
    await next.heard(/^Your balance is \$1,234\.56\./);
    expect((await worker.result<BankResult>(again)).result.outcome).toBe('balance_read');
  });
});

/** Waits until the worker logged `count` registrations in all. */
async function waitForRegistrations(
  worker: { lines: string[]; line(p: RegExp, t?: number, from?: number): Promise<string> },
  count: number,
): Promise<void> {
  for (;;) {
    const seen = worker.lines.filter((l) => l.includes('registered worker')).length;
    if (seen >= count) return;
    const from = worker.lines.length;
    await worker.line(/registered worker/, 90_000, from);
  }
}
