// Calling out by audio: the far end is a recording made with sox and espeak-ng at test time
// (a voicemail greeting, its beep, silence), played in real time into a session running
// upstream's voice pipeline. The beep is found in the audio itself; the message starts after
// it. Also: a greeting with no beep (spoken after the line goes quiet), a full mailbox (no
// message), and a person saying "hello?" (never a voicemail).
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import * as silero from '@livekit/agents-plugin-silero';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { attachCall } from '../../../src/core/call.js';
import { AgentSpeaker } from '../../../src/scenarios/audio/agent-speaker.js';
import { CallerLine } from '../../../src/scenarios/audio/caller-line.js';
import { localTts } from '../../../src/scenarios/audio/local-tts.js';
import { RecordingKeySender } from '../../../src/telephony/outbound/key-sender.js';
import { type IvrOutcome, navigateIvr } from '../../../src/telephony/outbound/navigator.js';
import { type Pcm, synthesize } from '../../../src/testing/espeak.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../../src/testing/openai-server.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';
import { CallerSpeech, speechEndpoints } from '../../../src/testing/speech-endpoints.js';
import { audioMissing } from '../../scenarios/helpers.js';
import { MESSAGE, Reminder } from './helpers.js';
import { soxMissing, synth, voicemailAudio } from './sox.js';

const missing = (await audioMissing()) ?? (await soxMissing());

describe.skipIf(missing)('calling out, by audio', () => {
  const speech = new CallerSpeech();
  let server: FakeOpenAIServer;
  let vad: Awaited<ReturnType<typeof silero.VAD.load>>;
  let call: { session: voice.AgentSession; line: CallerLine; speaker: AgentSpeaker } | undefined;

  beforeAll(async () => {
    vad = await silero.VAD.load();
    server = await startFakeOpenAI([], { extraRoutes: speechEndpoints({ callerSpeech: speech }) });
  });
  afterEach(async () => {
    if (call) {
      await call.session.close().catch(() => undefined);
      await call.line.close();
    }
    call = undefined;
    speech.reset();
  });
  afterAll(() => server?.close());

  async function start(agent: voice.Agent) {
    const session = new voice.AgentSession({
      vad,
      stt: new openai.STT({
        useRealtime: false,
        model: 'whisper-1',
        baseURL: server.url,
        apiKey: 'k',
      }),
      tts: localTts(openai, server.url),
      llm: new ScriptedLLM(),
    });
    const callCtx = attachCall(session, { callerIdentity: 'callee' });
    const line = new CallerLine();
    const speaker = new AgentSpeaker();
    session.input.audio = line;
    session.output.audio = speaker;
    const closed = new Promise<void>((r) =>
      session.once(voice.AgentSessionEventTypes.Close, () => r()),
    );
    await session.start({ agent });
    line.start();
    call = { session, line, speaker };
    // The far end speaks once the call is answered and the bot has listened for a moment (as
    // on a phone line, where the greeting starts after the answer).
    let since: number | undefined;
    await until(
      () => {
        const listening = callCtx.isWaitingForCaller && session.agentState === 'listening';
        since = listening ? (since ?? performance.now()) : undefined;
        return since !== undefined && performance.now() - since >= 600;
      },
      closed,
      10_000,
    );
    return { session, line, speaker, closed };
  }

  /** Plays `pcm` (the words `text` for the transcription oracle) and resolves when it ended. */
  async function play(line: CallerLine, text: string, pcm: Pcm): Promise<number> {
    speech.register(text, pcm);
    return (await line.speak(pcm)).endedAt;
  }

  /** Waits for `done()` or the session closing, bounded. */
  async function until(done: () => boolean, closed: Promise<void>, ms = 40_000) {
    const deadline = performance.now() + ms;
    let over = false;
    void closed.then(() => {
      over = true;
    });
    while (!done() && !over) {
      if (performance.now() > deadline) throw new Error(`not done within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('leaves the message after the beep found in the audio (greeting + beep + silence, sox)', async () => {
    const greeting = "Hi, you've reached Sam. Please leave a message after the tone.";
    const audio = await voicemailAudio({ greeting, beepHz: 1000, beepS: 0.4, gapS: 0.6, tailS: 4 });
    const agent = new Reminder();
    const { line, speaker, closed } = await start(agent);
    const playing = play(line, greeting, audio);
    await until(() => agent.voicemail !== undefined, closed);
    await closed;
    const ended = await playing;
    expect(agent.answered).toMatchObject({ status: 'voicemail', canLeaveMessage: true });
    expect(agent.voicemail).toMatchObject({ status: 'left', message: MESSAGE });
    const beep = agent.voicemail?.status === 'left' ? agent.voicemail.beep : undefined;
    expect(Math.abs((beep?.hz ?? 0) - 1000)).toBeLessThan(15);
    expect(beep?.durationMs).toBeGreaterThanOrEqual(380);
    // The message started after the beep had ended (the recording's last 4 s are silence). The
    // beep set it off: `left` with the beep, where a greeting's end without one is `no_beep`
    // (how soon the audio starts depends on the machine's TTS, so it is not asserted here).
    const beepEnded = ended - 4000;
    expect(speaker.played).toHaveLength(1);
    expect(speaker.played[0]!.startedAt).toBeGreaterThan(beepEnded - 50);
  }, 60_000);

  it('with no beep, speaks once the greeting has ended and the line stayed quiet', async () => {
    const greeting = "Hello, you've reached Sam Taylor. I can't take your call right now.";
    const audio = await voicemailAudio({ greeting, beepS: 0, gapS: 0.2, tailS: 5 });
    const agent = new Reminder({ voicemail: { quietMs: 2500 } });
    const { line, speaker, closed } = await start(agent);
    void play(line, greeting, audio);
    await until(() => agent.voicemail !== undefined, closed);
    await closed;
    expect(agent.voicemail).toMatchObject({ status: 'no_beep', message: MESSAGE });
    expect(speaker.played).toHaveLength(1);
  }, 60_000);

  it('a full mailbox gets no message', async () => {
    const greeting = 'The mailbox is full and cannot accept new messages. Goodbye.';
    const audio = await voicemailAudio({ greeting, beepS: 0, tailS: 1 });
    const agent = new Reminder();
    const { line, speaker, closed } = await start(agent);
    void play(line, greeting, audio);
    await until(() => agent.voicemail !== undefined, closed);
    await closed;
    expect(agent.voicemail).toMatchObject({ status: 'mailbox_full' });
    expect(speaker.played).toEqual([]);
  }, 60_000);

  it('a person saying "hello?" is a person: no voicemail, no beep wait', async () => {
    const hello = await synthesize('Hello?', { sampleRate: 16_000 });
    const agent = new Reminder();
    const { line, speaker, closed } = await start(agent);
    void play(line, 'Hello?', hello);
    await until(() => agent.answered !== undefined, closed);
    expect(agent.answered).toMatchObject({ status: 'human', greeting: 'Hello?' });
    expect(agent.voicemail).toBeUndefined();
    expect(speaker.played).toEqual([]);
  }, 60_000);

  it('hold music (a chord, no words) is a wait; the person who then answers is reached', async () => {
    class Hold extends voice.Agent {
      route: IvrOutcome | undefined;
      readonly keys = new RecordingKeySender();
      override async onEnter() {
        this.route = await navigateIvr(this.session, {
          reach: 'billing',
          keys: this.keys,
          holdAfterMs: 2500,
          useModel: false,
        });
      }
    }
    const agent = new Hold({ instructions: 'x' });
    const { line, closed } = await start(agent);
    await play(line, 'For billing, press 1.', await synthesize('For billing, press 1.'));
    await until(() => agent.keys.sent.length > 0, closed);
    await line.speak(await synth(5, ['sine', '330', 'sine', '415', 'sine', '494', 'vol', '0.3']));
    const dana = 'Thanks for holding, this is Dana, how can I help?';
    await play(line, dana, await synthesize(dana));
    await until(() => agent.route !== undefined, closed);
    expect(agent.keys.sent).toEqual(['1']);
    expect(agent.route).toMatchObject({
      status: 'human',
      heard: dana,
      path: [
        { did: 'keys', value: '1' },
        { did: 'waited', why: 'hold', heard: '(hold music)' },
      ],
    });
  }, 60_000);
});
