import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { recordCapture } from '../../src/telephony/captures.js';
import {
  ColdSipTransferer,
  type SipTransferClient,
  sipTarget,
} from '../../src/telephony/sip-transfer.js';
import {
  RecordingTransferer,
  type TransferRequest,
  transferCall,
  transferOnExhausted,
  transferSummary,
} from '../../src/telephony/transfer.js';
import { WarmTransferer } from '../../src/telephony/warm-transfer.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const request: TransferRequest = {
  to: '+1 (555) 010-0',
  mode: 'cold',
  summary: 'Caller wants a person.',
};

describe('ColdSipTransferer', () => {
  it('creates its SIP client only on the first transfer and sends a SIP REFER', async () => {
    const calls: unknown[][] = [];
    let created = 0;
    const client: SipTransferClient = {
      transferSipParticipant: async (...args: unknown[]) => {
        calls.push(args);
      },
    };
    const transferer = new ColdSipTransferer({
      roomName: 'call-room',
      participantIdentity: 'sip_alice',
      createClient: () => {
        created += 1;
        return client;
      },
    });
    expect(transferer.connected).toBe(false);
    expect(created).toBe(0);
    await expect(transferer.transfer(request)).resolves.toEqual({
      ok: true,
      mode: 'cold',
      to: request.to,
    });
    await transferer.transfer({ ...request, to: 'sip:desk@bank.example' });
    expect(created).toBe(1);
    expect(calls).toEqual([
      [
        'call-room',
        'sip_alice',
        'tel:+15550100',
        { playDialtone: true, headers: { 'X-Taskline-Summary': 'Caller wants a person.' } },
      ],
      [
        'call-room',
        'sip_alice',
        'sip:desk@bank.example',
        { playDialtone: true, headers: { 'X-Taskline-Summary': 'Caller wants a person.' } },
      ],
    ]);
  });

  it('reports a failed or unsupported transfer instead of throwing', async () => {
    const transferer = new ColdSipTransferer({
      roomName: 'r',
      participantIdentity: 'p',
      createClient: () => ({
        transferSipParticipant: async () => {
          throw new Error('486 busy here');
        },
      }),
    });
    await expect(transferer.transfer(request)).resolves.toEqual({
      ok: false,
      mode: 'cold',
      to: request.to,
      reason: '486 busy here',
    });
    const warm = await transferer.transfer({ ...request, mode: 'warm' });
    expect(warm.ok).toBe(false);
  });

  it('builds the real livekit-server-sdk client lazily (no network until a transfer)', () => {
    const transferer = new ColdSipTransferer({
      roomName: 'r',
      participantIdentity: 'p',
      url: 'wss://example.livekit.cloud',
      apiKey: 'key',
      apiSecret: 'secret',
    });
    expect(transferer.connected).toBe(false);
    expect(() => new ColdSipTransferer({ roomName: '', participantIdentity: 'p' })).toThrow(
      /needs the caller room name/,
    );
  });

  it('turns destinations into SIP targets', () => {
    expect(sipTarget('+15550100')).toBe('tel:+15550100');
    expect(sipTarget('tel:+15550100')).toBe('tel:+15550100');
    expect(sipTarget('desk@bank.example')).toBe('sip:desk@bank.example');
  });
});

describe('WarmTransferer', () => {
  it('builds upstream WarmTransferTask with the summary spoken to the human', () => {
    const warm = new WarmTransferer({ sipTrunkId: 'ST_test' });
    const req: TransferRequest = {
      to: '+15550100',
      mode: 'warm',
      summary: 'Caller lost a card. Captured so far: pin: ****.',
    };
    const options = warm.taskOptions(req);
    expect(options.sipCallTo).toBe('+15550100');
    expect(options.greetingSpeech).toBe(req.summary);
    expect(options.instructions).toEqual({
      extra: `Summary prepared by the automated line (values shown as * are private): ${req.summary}`,
    });
    expect(warm.createTask(req)).toBeInstanceOf(voice.AgentTask);
  });

  it('fails cleanly outside a tool or onEnter, and for cold requests', async () => {
    const warm = new WarmTransferer({ sipTrunkId: 'ST_test' });
    const outside = await warm.transfer({ ...request, mode: 'warm' });
    expect(outside).toMatchObject({ ok: false, mode: 'warm' });
    expect(outside.ok === false && outside.reason).toMatch(/inside a Task context|function tools/);
    expect((await warm.transfer(request)).ok).toBe(false);
  });
});

describe('transferCall / transferOnExhausted', () => {
  it('adds what was captured (masked stays masked) and the failure to the summary', () => {
    const session = new voice.AgentSession({ llm: new ScriptedLLM() });
    recordCapture(session, 'main_menu', 'a lost card');
    recordCapture(session, 'pin', '4321', { masked: true });
    const summary = transferSummary(
      { to: 'x', summary: 'Caller reported a lost card.', session },
      { status: 'invalid', attempts: 3, reason: 'invalid answer 3 times' },
    );
    expect(summary).toBe(
      'Caller reported a lost card. Captured so far: main menu: a lost card; pin: ****. The automated step ended: invalid answer 3 times.',
    );
  });

  it('keeps the failure (with the reason) when the transfer fails', async () => {
    const failing = new RecordingTransferer((r) => ({
      ok: false,
      mode: r.mode,
      to: r.to,
      reason: 'no answer',
    }));
    const outcome = await transferOnExhausted(failing, { to: '+1555', summary: 'help' })({
      status: 'noinput',
      attempts: 3,
      reason: 'no answer after 3 prompts',
    });
    expect(outcome).toEqual({
      status: 'noinput',
      attempts: 3,
      reason: 'no answer after 3 prompts; transfer failed: no answer',
    });
    const direct = await transferCall(
      { transfer: async () => Promise.reject(new Error('boom')) },
      { to: '+1555', summary: 'help' },
    );
    expect(direct).toEqual({ status: 'cancelled', attempts: 0, reason: 'transfer failed: boom' });
  });

  it('plugs into a typed task (yesNo): announced, transferred, captured values in the summary', async () => {
    const transferer = new RecordingTransferer();
    class Desk extends voice.Agent {
      outcome: unknown;
      override async onEnter(): Promise<void> {
        recordCapture(this.session, 'account', 'ACC-7');
        this.outcome = await yesNo({
          name: 'consent',
          question: 'May we record this call?',
          modelFallback: false,
          retry: {
            maxNoMatch: 1,
            onExhausted: transferOnExhausted(transferer, {
              to: '+15550100',
              summary: 'Caller could not answer the consent question',
              session: this.session,
              announce: 'Let me get you a colleague.',
            }),
          },
        }).run();
      }
    }
    const desk = new Desk({ instructions: 'desk' });
    const caller = await SimulatedCaller.start({ agent: desk, llm: new ScriptedLLM() });
    try {
      await caller.say('purple');
      expect(desk.outcome).toEqual({
        status: 'transferred',
        attempts: 1,
        reason: 'transferred to +15550100 (cold)',
      });
      expect(caller.agentLines.at(-1)).toBe('Let me get you a colleague.');
      expect(transferer.requests.map((r) => r.summary)).toEqual([
        'Caller could not answer the consent question. Captured so far: account: ACC-7. The automated step ended: not understood 1 times.',
      ]);
    } finally {
      await caller.close();
    }
  });

  it('RecordingTransferer records a copy of each request', async () => {
    const t = new RecordingTransferer();
    const req = { ...request };
    await t.transfer(req);
    req.summary = 'changed';
    expect(t.requests[0]?.summary).toBe('Caller wants a person.');
  });
});
