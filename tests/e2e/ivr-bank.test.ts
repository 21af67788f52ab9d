/**
 * examples/ivr-bank as a real worker, registered with a real livekit-server and dispatched
 * by its agent name into rooms where a real rtc-node participant calls: speech through Opus,
 * keys as DTMF packets through the server, the agent's words read from its transcription
 * stream and its voice from its audio track.
 */
import { describe, expect, it } from 'vitest';
import type { BankResult } from '../../examples/ivr-bank/index.js';
import { AGENT_NAME } from '../../examples/ivr-bank/room.js';
import { liveKitSuite, liveKitUnavailable, type Worker } from './harness/index.js';

const WORKER = 'tests/e2e/workers/ivr-bank.ts';
const MENU = /^Welcome to Taskline Bank\. For your balance, press 1\./;
const PIN_PROMPT = /^Please enter your 4-digit PIN\.$/;
const BALANCE = 'Your balance is $1,234.56. Thank you for calling. Goodbye.';
const PIN = '4321';
const ALICE = { identity: 'sip_alice', phoneNumber: '+14155550123' };

describe.skipIf(await liveKitUnavailable())('ivr-bank through a real LiveKit server', () => {
  const lk = liveKitSuite();
  let worker: Worker;
  let n = 0;
  const room = () => `bank-${process.pid}-${++n}`;

  it('registers as a worker under its agent name', async () => {
    worker = await lk.worker({ file: WORKER, agentName: AGENT_NAME, port: 17890 });
    expect(worker.lines.some((l) => l.includes('registered worker'))).toBe(true);
  });

  it('balance: asked by voice, PIN keyed (masked in every log), said back; the bot ends the call by deleting the room', async () => {
    const name = room();
    const caller = await lk.call(name, AGENT_NAME, ALICE);
    await caller.heard(MENU);
    await caller.say('how much money is in my account?');
    await caller.heard(PIN_PROMPT);
    await caller.press(PIN);
    const goodbye = await caller.heard(/^Your balance is/);
    expect(goodbye.text).toBe(BALANCE);
    const { result } = await worker.result<BankResult>(name);
    expect(result.outcome).toBe('balance_read');
    expect(result.captured.find((c) => c.name === 'pin')).toMatchObject({
      display: '****',
      masked: true,
    });
    await caller.disconnected();
    expect(caller.roomDeleted).toBe(true);
    expect(await lk.roomExists(name)).toBe(false);
    expect(caller.agentAudioMs).toBeGreaterThan(2_000);
    expect(worker.lines.filter((l) => l.includes(PIN))).toEqual([]);
  });

  it('the caller hanging up mid-PIN ends the call as hangup; the bot ends the room', async () => {
    const name = room();
    const caller = await lk.call(name, AGENT_NAME, ALICE);
    await caller.heard(MENU);
    await caller.press('1');
    await caller.heard(PIN_PROMPT);
    await caller.press('43');
    await caller.leave();
    const { result } = await worker.result<BankResult>(name);
    expect(result.outcome).toBe('hangup');
    await lk.roomGone(name);
  });

  it('a cold transfer of a caller who is not on a phone line is refused, and the caller is told', async () => {
    const name = room();
    const caller = await lk.call(name, AGENT_NAME, { identity: 'web_bob' });
    await caller.heard(MENU);
    await caller.say('I need to talk to someone');
    await caller.heard(/^Please hold while I transfer you to a colleague\.$/);
    await caller.heard(/^Sorry I could not help\. Goodbye\.$/);
    const { result } = await worker.result<BankResult>(name);
    expect(result.outcome).toBe('ended');
    await caller.disconnected();
    expect(caller.roomDeleted).toBe(true);
  });

  it('a cold transfer the server cannot make (no SIP service behind it) is said, not pretended', async () => {
    const name = room();
    const caller = await lk.call(name, AGENT_NAME, ALICE);
    await caller.heard(MENU);
    await caller.press('3');
    await caller.heard(/^Please hold while I transfer you to a colleague\.$/);
    await caller.heard(/^Sorry I could not help\. Goodbye\.$/, 60_000);
    const { result } = await worker.result<BankResult>(name);
    expect(result.outcome).toBe('ended');
    await caller.disconnected();
    expect(caller.roomDeleted).toBe(true);
  });
});
