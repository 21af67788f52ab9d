/**
 * The e2e suite's ears (harness/fingerprint.ts), without a server: each phrase is heard
 * through what a room or a phone line does to it — 48 kHz to 8 kHz and back, a gain change,
 * noise, a delay, lost frames — and no phrase is heard as another, nor a short answer inside
 * a longer one, nor the same utterance twice.
 */
import { describe, expect, it } from 'vitest';
import { espeakUnavailable, type Pcm, resample, synthesize } from '../../src/testing/espeak.js';
import { CodecSurvivingOracle, MATCH_THRESHOLD } from './harness/fingerprint.js';

const PHRASES = [
  'how much money is in my account?',
  'I need to talk to someone',
  'yes, sure',
  'yes please',
  'yes',
  'jane dot doe at example dot com',
  'my balance please',
  'Welcome to Taskline Bank. For your balance, press 1.',
];

/** A deterministic pseudo-random sequence (the test must not depend on luck). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/** A phone line: 8 kHz, quieter, noisy, half a second late, `lost` of its 20 ms frames gone. */
function phoneLine(pcm: Pcm, lost: number, seed: number): Pcm {
  const rand = random(seed);
  const narrow = resample(resample(pcm, 8_000), 48_000).samples;
  const out = new Int16Array(narrow.length + 48_000);
  for (let i = 0; i < narrow.length; i++) {
    out[i + 24_000] = Math.round(narrow[i]! * 0.6 + (rand() - 0.5) * 200);
  }
  for (let at = 24_000; at < out.length; at += 960) if (rand() < lost) out.fill(0, at, at + 960);
  return { samples: out, sampleRate: 48_000 };
}

describe.skipIf(await espeakUnavailable())('the codec-surviving oracle', () => {
  it('hears each phrase through a phone line, and no phrase as another', async () => {
    const spoken: Pcm[] = [];
    for (const text of PHRASES) spoken.push(await synthesize(text, { sampleRate: 48_000 }));
    for (const [i, text] of PHRASES.entries()) {
      // A fresh oracle per hearing, so "heard once" does not hide a wrong match.
      const fresh = new CodecSurvivingOracle();
      for (const [k, t] of PHRASES.entries()) fresh.register(t, spoken[k]!);
      expect(fresh.transcribe(phoneLine(spoken[i]!, 0.1, i + 1))).toBe(text);
      const { scores } = fresh.hearings[0]!;
      for (const other of PHRASES.filter((t) => t !== text)) {
        expect(scores[other], `${text} vs ${other}`).toBeLessThan(MATCH_THRESHOLD);
      }
    }
  });

  it('says "" for audio it was not told about, and hears an utterance once', async () => {
    const oracle = new CodecSurvivingOracle();
    const yes = await synthesize('yes please', { sampleRate: 48_000 });
    oracle.register('yes please', yes);
    const other = await synthesize('I would like a table for two tonight', { sampleRate: 48_000 });
    expect(oracle.transcribe(phoneLine(other, 0, 7))).toBe('');
    expect(oracle.transcribe(phoneLine(yes, 0, 8))).toBe('yes please');
    expect(oracle.transcribe(phoneLine(yes, 0, 9))).toBe('');
  });
});
