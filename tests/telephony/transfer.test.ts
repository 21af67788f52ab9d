import { llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { clearSecrets, registerSecret } from '../../src/core/pii.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import { recordCapture } from '../../src/telephony/captures.js';
import { sipTarget } from '../../src/telephony/sip-address.js';
import { ColdSipTransferer, type SipTransferClient } from '../../src/telephony/sip-transfer.js';
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
    expect(sipTarget('tel:+1-555-0100')).toBe('tel:+15550100');
    expect(sipTarget('desk@bank.example')).toBe('sip:desk@bank.example');
    expect(sipTarget('sips:desk@bank.example;transport=tls')).toBe(
      'sips:desk@bank.example;transport=tls',
    );
    expect(() => sipTarget('call the desk')).toThrow(/Cannot dial "call the desk"/);
  });

  it('takes ringingTimeoutMs in milliseconds and sends LiveKit whole seconds', async () => {
    const calls: unknown[][] = [];
    const transferer = new ColdSipTransferer({
      roomName: 'r',
      participantIdentity: 'p',
      ringingTimeoutMs: 25_000,
      createClient: () => ({
        transferSipParticipant: async (...args: unknown[]) => {
          calls.push(args);
        },
      }),
    });
    await transferer.transfer(request);
    expect(calls[0]?.[3]).toMatchObject({ ringingTimeout: 25 });
    const cold = (ringingTimeoutMs: unknown) =>
      new ColdSipTransferer({
        roomName: 'r',
        participantIdentity: 'p',
        ringingTimeoutMs: ringingTimeoutMs as number,
      });
    // Past 10 minutes, a fraction of a second, nothing, negative, NaN, a string: refused by name.
    for (const [ms, got] of [
      [1500, '1500'],
      [0, '0'],
      [-1000, '-1000'],
      [Number.NaN, 'NaN'],
      [601_000, '601000'],
      [30 * 86_400_000, '2592000000'],
      ['20000', '"20000"'],
    ] as const) {
      expect(() => cold(ms)).toThrow(
        expect.objectContaining({
          code: 'invalid_argument',
          message: `ColdSipTransferer: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got ${got}): LiveKit SIP counts ringing in whole seconds.`,
        }),
      );
    }
    // The boundaries pass.
    expect(() => cold(1_000)).not.toThrow();
    expect(() => cold(600_000)).not.toThrow();
    expect(
      () =>
        new ColdSipTransferer({
          roomName: 'r',
          participantIdentity: 'p',
          ringingTimeout: 20,
        } as never),
    ).toThrow(
      'ColdSipTransferer: `ringingTimeout` is now `ringingTimeoutMs` (milliseconds, for cold and warm transfers alike).',
    );
  });
});

describe('WarmTransferer', () => {
  const req: TransferRequest = {
    to: '+15550100',
    mode: 'warm',
    summary: 'Caller lost a card. Captured so far: pin: ****.',
  };

  it('builds upstream WarmTransferTask with the summary in the briefing, and no greeting by default', () => {
    const warm = new WarmTransferer({ sipTrunkId: 'ST_test' });
    const options = warm.taskOptions(req);
    expect(options.sipCallTo).toBe('+15550100');
    // An answered line may be a voicemail box: nothing is spoken until the human speaks.
    expect(options.greetingSpeech).toBeUndefined();
    expect(options.instructions).toEqual({
      extra: `Summary prepared by the automated line (values shown as * are private): ${req.summary}`,
    });
    expect(warm.createTask(req)).toBeInstanceOf(voice.AgentTask);
  });

  it('speaks the summary on answer only when asked to', () => {
    expect(new WarmTransferer({ greetWithSummary: true }).taskOptions(req).greetingSpeech).toBe(
      req.summary,
    );
    const own = new WarmTransferer({ greetWithSummary: true, greetingSpeech: 'Hi, a transfer.' });
    expect(own.taskOptions(req).greetingSpeech).toBe('Hi, a transfer.');
  });

  it('reads tel: URIs and formatted numbers as the number to dial', () => {
    const warm = new WarmTransferer({ sipTrunkId: 'ST_test' });
    for (const to of ['tel:+1-415-555-0100', '+1 (415) 555-0100', 'TEL:+14155550100']) {
      expect(warm.taskOptions({ ...req, to })).toMatchObject({
        sipCallTo: '+14155550100',
        sipTrunkId: 'ST_test',
      });
    }
  });

  it('dials a sip: URI through an inline trunk to its host, and refuses a conflicting trunk', async () => {
    const inline = new WarmTransferer().taskOptions({ ...req, to: 'sip:desk@pbx.example:5061' });
    expect(inline).toMatchObject({
      sipCallTo: 'desk',
      sipTrunkId: null,
      sipConnection: { hostname: 'pbx.example:5061' },
    });
    const sameHost = new WarmTransferer({
      sipConnection: { hostname: 'pbx.example', authUsername: 'bot' } as never,
    }).taskOptions({ ...req, to: 'sip:desk@pbx.example' });
    expect(sameHost.sipConnection).toMatchObject({ hostname: 'pbx.example', authUsername: 'bot' });

    const trunk = new WarmTransferer({ sipTrunkId: 'ST_test' });
    expect(() => trunk.taskOptions({ ...req, to: 'sip:desk@pbx.example' })).toThrow(
      /goes to trunk ST_test, not pbx.example/,
    );
    await expect(trunk.transfer({ ...req, to: 'sip:desk@pbx.example' })).resolves.toMatchObject({
      ok: false,
      reason: expect.stringContaining('Dial a number, or configure sipConnection'),
    });
  });

  it('refuses destinations it cannot dial, with the reason', () => {
    const warm = new WarmTransferer({ sipTrunkId: 'ST_test' });
    expect(() => warm.taskOptions({ ...req, to: 'the front desk' })).toThrow(
      'Cannot dial "the front desk": use a phone number ("+15550100"), a tel: URI or a sip:user@host URI.',
    );
    expect(() => warm.taskOptions({ ...req, to: 'tel:+15550100;ext=12' })).toThrow(
      /tel: URI parameters are not supported/,
    );
  });

  it("briefs the human on the request's conversation (or the configured one)", () => {
    const history = llm.ChatContext.empty();
    history.addMessage({ role: 'user', content: 'I lost my card' });
    const fallback = llm.ChatContext.empty();
    const warm = new WarmTransferer({ sipTrunkId: 'ST_test', chatCtx: fallback });
    expect(warm.taskOptions({ ...req, history }).chatCtx).toBe(history);
    expect(warm.taskOptions(req).chatCtx).toBe(fallback);
  });

  it('takes ringingTimeoutMs in milliseconds, whole seconds only, like cold transfers', () => {
    expect(new WarmTransferer({ ringingTimeoutMs: 20_000 }).taskOptions(req).ringingTimeout).toBe(
      20_000,
    );
    expect(() => new WarmTransferer({ ringingTimeoutMs: 1500 })).toThrow(
      'WarmTransferer: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 1500): LiveKit SIP counts ringing in whole seconds.',
    );
    expect(() => new WarmTransferer({ ringingTimeoutMs: 660_000 })).toThrow(
      'WarmTransferer: ringingTimeoutMs must be a whole number of seconds from 1000 to 600000 ms (got 660000): LiveKit SIP counts ringing in whole seconds.',
    );
    expect(new WarmTransferer({ ringingTimeoutMs: 1_000 }).taskOptions(req).ringingTimeout).toBe(
      1_000,
    );
    expect(new WarmTransferer({ ringingTimeoutMs: 600_000 }).taskOptions(req).ringingTimeout).toBe(
      600_000,
    );
    expect(() => new WarmTransferer({ ringingTimeout: 20 } as never)).toThrow(/ringingTimeoutMs/);
  });

  it('bounds the hold (consultTimeoutMs, a positive number of ms) and keeps it from upstream', () => {
    // 30 days would overflow Node's timer (any delay over ~24.8 days fires at once).
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 30 * 86_400_000]) {
      expect(() => new WarmTransferer({ consultTimeoutMs: bad })).toThrow(
        `WarmTransferer: consultTimeoutMs must be between 1 and 3600000 ms (got ${bad}).`,
      );
    }
    const options = new WarmTransferer({
      sipTrunkId: 'ST_test',
      consultTimeoutMs: 5_000,
    }).taskOptions(req);
    expect(options).not.toHaveProperty('consultTimeoutMs');
    expect(options).not.toHaveProperty('clock');
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

  it("passes the conversation so far, PII masked, for the human's briefing", async () => {
    registerSecret('4321');
    const received: TransferRequest[] = [];
    class Desk extends voice.Agent {
      override async onEnter(): Promise<void> {
        await this.session.say('Please enter your PIN.').waitForPlayout();
      }
    }
    const caller = await SimulatedCaller.start({
      agent: new Desk({ instructions: 'desk' }),
      llm: new ScriptedLLM({ respond: () => ({ say: 'One moment.' }) }),
    });
    try {
      await caller.say('it is 4321, card 4111 1111 1111 1111');
      await transferCall(
        {
          transfer: async (r) => {
            received.push(r);
            return { ok: true, mode: r.mode, to: r.to };
          },
        },
        { to: '+1555', mode: 'warm', summary: 'help', session: caller.session },
      );
      const lines = received[0]?.history?.items.map((i) =>
        i.type === 'message' ? `${i.role}: ${i.textContent}` : i.type,
      );
      expect(lines).toEqual([
        'assistant: Please enter your PIN.',
        'user: it is ****, card **** **** **** 1111',
        'assistant: One moment.',
      ]);
    } finally {
      clearSecrets();
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
