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

/**
 * What a jitter buffer does to a late stream on a loaded machine: 10 ms frames dropped
 * (squeezed) or played twice (stretched), each with probability `rate`, on a phone line.
 */
function jittered(pcm: Pcm, rate: number, seed: number): Pcm {
  const rand = random(seed);
  const line = phoneLine(pcm, 0, seed).samples;
  const out: number[] = [];
  for (let at = 0; at < line.length; at += 480) {
    const frame = Array.from(line.subarray(at, at + 480));
    const r = rand();
    if (r < rate) continue;
    out.push(...frame);
    if (r > 1 - rate) out.push(...frame);
  }
  return { samples: Int16Array.from(out), sampleRate: 48_000 };
}

/** Long sentences, and two of one length that share their first two thirds. */
const LONG = [
  "Hi, it's Sam in room 1204. I'm vegetarian, please remember that.",
  'Dinner at the Grill was 120 dollars for the four of us. With a 20 percent tip, how much each?',
  'four one five, five five five, zero one nine nine',
  'four one five, five five five, zero one two three',
];

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

  it('hears a long sentence a jitter buffer stretched and squeezed, and not one that only starts alike', async () => {
    // Through the real server under load, "Hi, it's Sam in room 1204…" scored 0.74 when the
    // sentence was aligned in three parts; it is aligned in half seconds now.
    const spoken: Pcm[] = [];
    for (const text of LONG) spoken.push(await synthesize(text, { sampleRate: 48_000 }));
    for (const [i, text] of LONG.entries()) {
      for (const seed of [1, 2, 3, 4]) {
        const fresh = new CodecSurvivingOracle();
        for (const [k, t] of LONG.entries()) fresh.register(t, spoken[k]!);
        expect(fresh.transcribe(jittered(spoken[i]!, 0.03, seed * 7 + i)), text).toBe(text);
        const { scores } = fresh.hearings[0]!;
        for (const other of LONG.filter((t) => t !== text)) {
          expect(scores[other], `${text} vs ${other}`).toBeLessThan(MATCH_THRESHOLD);
        }
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
