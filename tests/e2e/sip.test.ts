/**
 * ivr-bank on a real phone line: a Debian SIP phone (baresip) calls livekit-sip on loopback,
 * an inbound trunk and an individual dispatch rule (livekit-server-sdk) put the call in its
 * own room with the ivr-bank worker dispatched by name. The phone presses keys as RFC 2833
 * events, plays speech from a file and hangs up with BYE; a hidden observer in the room
 * reads what the agent says; a second phone is the service desk a cold transfer REFERs to.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BankResult } from '../../examples/ivr-bank/index.js';
import { AGENT_NAME } from '../../examples/ivr-bank/room.js';
import { E2E_DIR, liveKitSuite, liveKitUnavailable, type Worker } from './harness/index.js';
import {
  inboundRoute,
  SipPhone as Phone,
  REDIS_ADDRESS,
  SIP_PORTS,
  type SipPhone,
  type SipService,
  sipUnavailable,
  startSipService,
  TRUNK_NUMBER,
} from './harness/sip.js';

const ALICE = '+14155550123';
const DESK = { number: 'desk', port: 15072, ctrlPort: 15076, keyPort: 15077 };
const MENU = /^Welcome to Taskline Bank\. For your balance, press 1\./;
const PIN_PROMPT = /^Please enter your 4-digit PIN\.$/;
const DIAL = `sip:${TRUNK_NUMBER}@127.0.0.1:${SIP_PORTS.signalling}`;

const skip = (await liveKitUnavailable()) ?? (await sipUnavailable());

describe.skipIf(skip)('ivr-bank answers a real SIP call (livekit-sip, baresip)', () => {
  const lk = liveKitSuite({ redis: REDIS_ADDRESS });
  let sip: SipService;
  let worker: Worker;
  let route: Awaited<ReturnType<typeof inboundRoute>>;
  let alice: SipPhone;
  let desk: SipPhone;
  let n = 0;

  beforeAll(async () => {
    sip = await startSipService(lk.server);
    worker = await lk.worker({
      file: 'tests/e2e/workers/ivr-bank.ts',
      agentName: AGENT_NAME,
      port: 17896,
      env: { TASKLINE_TRANSFER_TO: `sip:${DESK.number}@127.0.0.1:${DESK.port}` },
    });
    route = await inboundRoute(lk.server, AGENT_NAME, 'call-');
    alice = await Phone.start({ number: ALICE, port: 15070, ctrlPort: 15074, keyPort: 15075 });
    desk = await Phone.start({ ...DESK, answer: true });
  });
  afterAll(async () => {
    await alice?.stop();
    await desk?.stop();
    await route?.remove();
    await sip?.stop();
  });

  /** Alice dials the bank; resolves the call's room (made by the dispatch rule) and an observer in it. */
  async function dialBank() {
    n += 1;
    const from = alice.events.length;
    const before = new Set((await lk.rooms.listRooms()).map((r) => r.name));
    alice.dial(DIAL);
    await alice.event('CALL_ESTABLISHED', 180_000, from);
    let room: string | undefined;
    for (let i = 0; i < 100 && !room; i++) {
      room = (await lk.rooms.listRooms())
        .map((r) => r.name)
        .find((r) => r.startsWith('call-') && !before.has(r));
      if (!room) await new Promise((r) => setTimeout(r, 200));
    }
    if (!room) throw new Error('the call made no room');
    const observer = await lk.observe(room);
    await observer.heard(MENU, 120_000);
    return { room, observer, from };
  }

  it('balance: menu by key, the PIN keyed (masked), the balance said; the bot hangs up (BYE to the phone)', async () => {
    const { room, observer, from } = await dialBank();
    await alice.press('1');
    await observer.heard(PIN_PROMPT);
    await alice.press('4321');
    const goodbye = await observer.heard(/^Your balance is/);
    expect(goodbye.text).toBe('Your balance is $1,234.56. Thank you for calling. Goodbye.');
    await alice.event('CALL_CLOSED', 30_000, from);
    const call = await worker.result<BankResult>(room);
    expect(call.result.outcome).toBe('balance_read');
    expect(call.result.captured.find((c) => c.name === 'pin')).toMatchObject({ display: '****' });
    expect(call.callerNumber).toBe(ALICE);
    expect(worker.lines.filter((l) => l.includes('4321'))).toEqual([]);
    await lk.roomGone(room);
  });

  it('the caller asks by voice (speech played from a file), then hangs up mid-PIN with BYE: hangup', async () => {
    const { room, observer } = await dialBank();
    const text = 'how much money is in my account?';
    const wav = join(E2E_DIR, `alice-${n}.wav`);
    const pcm = await speech(text, wav);
    lk.oracle.register(text, pcm);
    alice.play(wav);
    await observer.heard(PIN_PROMPT, 60_000);
    await alice.press('43');
    alice.hangup();
    const call = await worker.result<BankResult>(room);
    expect(call.result.outcome).toBe('hangup');
    await lk.roomGone(room);
  });

  it('a cold transfer REFERs the call to the desk phone, which rings and picks up; the bot leaves the room', async () => {
    const { room, observer } = await dialBank();
    const ringing = desk.events.length;
    await alice.press('3');
    await observer.heard(/^Please hold while I transfer you to a colleague\.$/);
    // The desk answers at once (answermode auto): its call from Alice is established.
    const answered = await desk.event('CALL_ESTABLISHED', 60_000, ringing);
    expect(answered).toMatchObject({ direction: 'incoming' });
    expect(String(answered.peeruri)).toContain(ALICE);
    const call = await worker.result<BankResult>(room);
    expect(call.result.outcome).toBe('transferred');
  });
});

/** espeak-ng speech as an 8 kHz WAV for the phone, and its samples for the oracle. */
async function speech(text: string, wav: string) {
  const { synthesize, encodeWav } = await import('../../src/testing/espeak.js');
  const pcm = await synthesize(text, { sampleRate: 8_000 });
  const { writeFileSync } = await import('node:fs');
  writeFileSync(wav, encodeWav(pcm));
  return pcm;
}
