// Agent to agent, by audio: taskline's navigator dials the ivr-bank example and both run
// upstream's real voice pipeline (Silero VAD, openai STT and TTS on the local speech server:
// espeak-ng voices, the transcription oracle). The bank's menu is spoken, heard and read by
// the navigator's rules; keys go across as DTMF; the PIN prompt is heard and the PIN keyed;
// the balance is heard. Real time, waits bounded by events, not sleeps.

import { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../../examples/ivr-bank/index.js';
import { AudioLink } from '../../../src/scenarios/audio/link.js';
import { localTts } from '../../../src/scenarios/audio/local-tts.js';
import { type CallOutOutcome, callOut } from '../../../src/telephony/outbound/call-out.js';
import type { Dialer } from '../../../src/telephony/outbound/dialer.js';
import { type IvrOutcome, navigateIvr } from '../../../src/telephony/outbound/navigator.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../../src/testing/openai-server.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';
import { CallerSpeech, speechEndpoints } from '../../../src/testing/speech-endpoints.js';
import { audioMissing } from '../../scenarios/helpers.js';

const missing = await audioMissing();

class BalanceFinder extends voice.Agent {
  answered: CallOutOutcome | undefined;
  route: IvrOutcome | undefined;
  constructor(private readonly dialer: Dialer) {
    super({ instructions: 'You call banks for your user.' });
  }
  override async onEnter(): Promise<void> {
    this.answered = await callOut(this.session, { dialer: this.dialer, to: '+15550100' });
    if (this.answered.status !== 'ivr') return;
    this.route = await navigateIvr(this.session, {
      reach: 'balance',
      greeting: this.answered.greeting,
      answers: [{ when: 'PIN', keys: '4321', secret: true }],
      reachedWhen: /your balance is/i,
    });
  }
}

describe.skipIf(missing)('navigator → ivr-bank (audio)', () => {
  const speech = new CallerSpeech();
  let server: FakeOpenAIServer;
  let vad: Awaited<ReturnType<typeof silero.VAD.load>>;
  let link: AudioLink | undefined;
  beforeAll(async () => {
    vad = await silero.VAD.load();
    server = await startFakeOpenAI([], { extraRoutes: speechEndpoints({ callerSpeech: speech }) });
  });
  afterEach(async () => {
    await link?.close();
    link = undefined;
  });
  afterAll(() => server?.close());

  it('hears the menu, keys 1, keys the PIN when asked, and hears the balance', async () => {
    let finder: BalanceFinder | undefined;
    const model = new ScriptedLLM();
    const bank = createBankCall();
    link = await AudioLink.start({
      speech,
      sessionOptions: async () => ({
        vad,
        stt: new openai.STT({
          useRealtime: false,
          model: 'whisper-1',
          baseURL: server.url,
          apiKey: 'local',
        }),
        tts: localTts(openai, server.url),
      }),
      caller: (dialer) => {
        finder = new BalanceFinder(dialer);
        return { agent: finder, llm: model };
      },
      callee: () => ({ agent: bank.agent, llm: bankScriptedModel() }),
    });
    await link.ended(90_000);
    expect(
      finder!.answered,
      JSON.stringify([finder!.answered, link.lines, speech.transcripts]),
    ).toMatchObject({
      status: 'ivr',
    });
    expect(finder!.route).toMatchObject({
      status: 'reached',
      heard: /^Your balance is \$1,234\.56/,
      path: [
        { did: 'keys', value: '1', why: 'menu', option: 'your balance' },
        { did: 'keys', value: '****', why: 'answer' },
      ],
    });
    expect(model.requests).toEqual([]);
    expect(bank.result()).toMatchObject({ outcome: 'balance_read' });
    expect(link.lines).toEqual([
      expect.stringMatching(/^callee: Welcome to Taskline Bank\. For your balance, press 1\./),
      'caller: [keys 1]',
      'callee: Please enter your 4-digit PIN.',
      'caller: [keys ****]',
      'callee: Your balance is $1,234.56. Thank you for calling. Goodbye.',
      'callee: (hangs up)',
    ]);
  }, 120_000);
});
