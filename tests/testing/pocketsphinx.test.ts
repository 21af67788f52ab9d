// The real recogniser: Debian pocketsphinx in a warm worker, behind the local STT endpoint
// upstream's openai plugin calls, hearing flite callers — with and without hints per question.

import { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { AudioFrame } from '@livekit/rtc-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachCall } from '../../src/core/call.js';
import type { Expectation } from '../../src/core/expectation.js';
import { ensureLogger } from '../../src/core/log.js';
import {
  applyRecognizerHints,
  promptHints,
  transcriptionPrompt,
} from '../../src/core/recognizer-hints.js';
import type { Pcm } from '../../src/testing/espeak.js';
import { PocketsphinxRecognizer, pocketsphinxUnavailable } from '../../src/testing/pocketsphinx.js';
import type { TranscriptionEvent } from '../../src/testing/speech-endpoints.js';
import { type SpeechServer, startSpeechServer } from '../../src/testing/speech-server.js';
import { parseVoice, speak, voiceUnavailable } from '../../src/testing/voices.js';

async function realSpeechMissing(): Promise<string | undefined> {
  const problem =
    (await pocketsphinxUnavailable()) ?? (await voiceUnavailable(parseVoice('flite:slt')));
  if (!problem) return undefined;
  if (process.env.CI === 'true') throw new Error(`CI=true and pocketsphinx cannot run: ${problem}`);
  console.warn(`[skipped: needs flite and pocketsphinx] ${problem}`);
  return problem;
}

const missing = await realSpeechMissing();

/** The speech with 200 ms of silence either side, as a VAD segment holds it. */
function padded(pcm: Pcm): Int16Array {
  const out = new Int16Array(pcm.samples.length + 6_400);
  out.set(pcm.samples, 3_200);
  return out;
}

const expecting = (kind: Expectation['kind'], phrases: string[]): Expectation => ({
  task: 'test',
  kind,
  phrases,
  judge: () => 'unknown',
});

describe.skipIf(missing)('pocketsphinx behind the local STT endpoint', () => {
  let speech: SpeechServer;
  const heard: TranscriptionEvent[] = [];
  beforeAll(async () => {
    speech = await startSpeechServer({
      recognizer: 'pocketsphinx',
      onTranscription: (e) => heard.push(e),
    });
  }, 90_000);
  afterAll(() => speech?.close());

  const hear = async (text: string, voice: string, prompt?: string) => {
    const segment = padded(await speak(text, parseVoice(voice)));
    const stt = new openai.STT({ ...speech.sttOptions, ...(prompt ? { prompt } : {}) });
    const event = await stt.recognize(new AudioFrame(segment, 16_000, 1, segment.length));
    return event.alternatives?.[0]?.text ?? '';
  };

  it('hears a flite caller through upstream openai.STT, and reports what it heard', async () => {
    expect(await hear('yes please', 'flite:slt')).toBe('yes please');
    const last = heard.at(-1)!;
    expect(last.recognition).toMatchObject({ text: 'yes please', source: 'language-model' });
    expect(last.hints).toBeUndefined();
    expect(last.audioMs).toBeGreaterThan(300);
  }, 60_000);

  it('mishears without hints what a digits grammar hears right (awb: "five" → "fight")', async () => {
    const said = 'four one five, five five five, zero one nine nine';
    expect(await hear(said, 'flite:awb')).toContain('fight');
    const prompt = transcriptionPrompt(expecting('phone', []));
    expect(await hear(said, 'flite:awb', prompt)).toBe(
      'four one five five five five zero one nine nine',
    );
    expect(heard.at(-1)!.recognition).toMatchObject({ source: 'grammar' });
    expect(heard.at(-1)!.recognition.alternative).toContain('fight');
  }, 60_000);

  it('never forces an unexpected answer into the grammar: a menu request at a yes/no question', async () => {
    const prompt = transcriptionPrompt(
      expecting('yesNo', ['yes', 'no', 'yeah', 'nope', 'no thanks']),
    );
    expect(await hear('I lost my wallet', 'flite:kal16', prompt)).toBe('i lost my wallet');
    expect(heard.at(-1)!.recognition.source).toBe('language-model');
  }, 60_000);

  it("takes its hints from the capture the call publishes, through the plugin's own options", async () => {
    ensureLogger();
    const stt = new openai.STT(speech.sttOptions);
    const call = attachCall(new voice.AgentSession({ stt }));
    const stop = applyRecognizerHints(call, promptHints(stt));
    const release = call.expect(expecting('digits', []));
    const segment = padded(
      await speak('four one five, five five five, zero one nine nine', parseVoice('flite:awb')),
    );
    const event = await stt.recognize(new AudioFrame(segment, 16_000, 1, segment.length));
    expect(event.alternatives?.[0]?.text).toBe('four one five five five five zero one nine nine');
    expect(heard.at(-1)!.hints).toEqual({ kind: 'digits', phrases: [] });
    release();
    stop();
    await stt.recognize(new AudioFrame(segment, 16_000, 1, segment.length));
    expect(heard.at(-1)!.hints).toBeUndefined();
  }, 60_000);

  it('keeps no digit the grammar made up ("four" is not heard as "eight four")', async () => {
    const prompt = transcriptionPrompt(expecting('number', ['0', '5', '10']));
    const text = await hear('four', 'flite:slt', prompt);
    expect(text).not.toMatch(/eight/);
  }, 60_000);
});

describe.skipIf(missing)('the pocketsphinx worker', () => {
  it('restarts after its process dies, failing only what it was decoding', async () => {
    const r = await PocketsphinxRecognizer.start();
    try {
      const pcm = {
        samples: padded(await speak('no thanks', parseVoice('flite:rms'))),
        sampleRate: 16_000,
      };
      const child = (r as unknown as { child: import('node:child_process').ChildProcess }).child;
      const pending = r.recognize(pcm);
      child.kill('SIGKILL');
      await expect(pending).rejects.toMatchObject({ code: 'call_failed' });
      expect((await r.recognize(pcm)).text).toBe('no thanks');
    } finally {
      await r.close();
    }
    await expect(
      r.recognize({ samples: new Int16Array(160), sampleRate: 16_000 }),
    ).rejects.toMatchObject({
      code: 'session_closed',
    });
  }, 90_000);

  it('refuses more waiting utterances than its queue holds', async () => {
    const r = await PocketsphinxRecognizer.start({ maxQueued: 1 });
    try {
      const pcm = {
        samples: padded(await speak('yes', parseVoice('flite:slt'))),
        sampleRate: 16_000,
      };
      const first = r.recognize(pcm);
      await expect(r.recognize(pcm)).rejects.toMatchObject({ code: 'limit_exceeded' });
      expect((await first).text).toBe('yes');
    } finally {
      await r.close();
    }
  }, 90_000);
});
