// The local speech endpoints that let upstream's real openai STT and TTS run offline: TTS
// speaks with espeak-ng; the transcription oracle returns the words behind the caller audio
// a test registered (each once), and "" for audio it does not know — never a guess.

import * as openai from '@livekit/agents-plugin-openai';
import { AudioFrame } from '@livekit/rtc-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { synthesize } from '../../src/testing/espeak.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../../src/testing/openai-server.js';
import { CallerSpeech, speechEndpoints } from '../../src/testing/speech-endpoints.js';
import { audioMissing } from './helpers.js';

const missing = await audioMissing();

describe.skipIf(missing)('speech endpoints on the local OpenAI-compatible server', () => {
  const callerSpeech = new CallerSpeech();
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAI([], { extraRoutes: speechEndpoints({ callerSpeech }) });
  });
  afterAll(() => server.close());

  const stt = () =>
    new openai.STT({ useRealtime: false, model: 'whisper-1', baseURL: server.url, apiKey: 'k' });
  const frameOf = (samples: Int16Array) => new AudioFrame(samples, 16_000, 1, samples.length);

  it('transcribes a segment of registered caller audio as the words it was made from, once', async () => {
    const pcm = await synthesize('I lost my card yesterday', { sampleRate: 16_000 });
    callerSpeech.register('I lost my card yesterday', pcm);
    const other = await synthesize('four three two one', { sampleRate: 16_000 });
    callerSpeech.register('four three two one', other);
    // VAD cuts segments anywhere: silence before, part of the utterance, no alignment.
    const segment = new Int16Array(8_000 + pcm.samples.length - 1_001);
    segment.set(pcm.samples.subarray(1_001), 8_000);
    const first = await stt().recognize(frameOf(segment));
    expect(first.alternatives?.[0]?.text).toBe('I lost my card yesterday');
    // The rest of the same utterance (a pause split it in two) adds no words twice.
    const again = await stt().recognize(frameOf(pcm.samples.slice(5_000)));
    expect(again.alternatives?.[0]?.text).toBe('');
    const digits = await stt().recognize(frameOf(other.samples));
    expect(digits.alternatives?.[0]?.text).toBe('four three two one');
  });

  it('transcribes audio it did not register as nothing', async () => {
    const unknown = await synthesize('something nobody registered', { sampleRate: 16_000 });
    const r = await stt().recognize(frameOf(unknown.samples));
    expect(r.alternatives?.[0]?.text).toBe('');
  });

  it('speaks text with espeak-ng as 24 kHz PCM for upstream TTS', async () => {
    const tts = new openai.TTS({ model: 'tts-1', baseURL: server.url, apiKey: 'k' });
    let samples = 0;
    let rate = 0;
    for await (const ev of tts.synthesize('Please enter your 4-digit PIN.')) {
      samples += ev.frame.samplesPerChannel;
      rate = ev.frame.sampleRate;
    }
    expect(rate).toBe(24_000);
    const seconds = samples / rate;
    // espeak-ng at 175 words a minute: six words take well over a second, under four.
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(4);
  });

  it('refuses an audio format it does not serve, saying which it does', async () => {
    const res = await fetch(`${server.url}/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: 'hi', voice: 'alloy', response_format: 'mp3' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('unsupported_format');
    expect(body.error.message).toMatch(/use pcm \(24 kHz, 16-bit\) or wav/);
  });
});
