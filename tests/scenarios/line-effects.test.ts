// The phone line's effects on the caller's audio: G.711 μ-law, the telephone band, level,
// noise at a signal-to-noise ratio, and the agent's echo.
import { describe, expect, it } from 'vitest';
import {
  activeRms,
  MulawChannel,
  mulawDecode,
  mulawEncode,
  pinkNoise,
  whiteNoise,
} from '../../src/scenarios/audio/line-effects.js';
import { LineProcessor, linePreset, mergeLine } from '../../src/scenarios/audio/phone-line.js';

const rms = (x: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / x.length);
};
const tone = (hz: number, n: number, amp = 8_000) =>
  Int16Array.from({ length: n }, (_, i) =>
    Math.round(amp * Math.sin((2 * Math.PI * hz * i) / 16_000)),
  );

describe('phone line effects', () => {
  it('codes G.711 μ-law as the standard does', () => {
    expect(mulawEncode(0)).toBe(0xff);
    expect(mulawEncode(32_767)).toBe(0x80);
    expect(mulawEncode(-32_768)).toBe(0x00);
    expect(mulawDecode(0xff)).toBe(0);
    for (const x of [100, -100, 1_000, -5_000, 20_000]) {
      const back = mulawDecode(mulawEncode(x));
      expect(Math.abs(back - x) / Math.abs(x)).toBeLessThan(0.07);
    }
  });

  it('passes the telephone band and cuts what lies above 4 kHz', () => {
    const pass = new MulawChannel();
    const cut = new MulawChannel();
    const low = pass.process(Float32Array.from(tone(1_000, 3_200)));
    const high = cut.process(Float32Array.from(tone(6_000, 3_200)));
    expect(rms(low.subarray(200)) / rms(tone(1_000, 3_000))).toBeGreaterThan(0.85);
    expect(rms(high.subarray(200)) / rms(tone(6_000, 3_000))).toBeLessThan(0.05);
  });

  it('makes noise at unit RMS, the same for the same seed', () => {
    expect(rms(whiteNoise(3).next(16_000))).toBeCloseTo(1, 1);
    expect(rms(pinkNoise(3).next(16_000))).toBeGreaterThan(0.5);
    expect(whiteNoise(7).next(8)).toEqual(whiteNoise(7).next(8));
  });

  it('sets noise from the voice at the asked signal-to-noise ratio, and the speech level', async () => {
    const line = await LineProcessor.create(
      { level_db: -6, noise: { kind: 'white', snr_db: 20 } },
      { engine: 'espeak', name: 'en-us' },
    );
    const quiet = line.process(new Int16Array(16_000), undefined);
    const speech = tone(500, 16_000, 10_000);
    const loud = line.process(speech, undefined);
    const noise = rms(quiet);
    expect(noise).toBeGreaterThan(0);
    // the tone comes through 6 dB down (half the amplitude), over the noise
    expect(rms(loud)).toBeCloseTo(Math.sqrt((rms(speech) / 2) ** 2 + noise ** 2), -2);
  });

  it('adds the echo at its level and clips what is too loud', async () => {
    const line = await LineProcessor.create(
      { echo: { delay: '100ms', level_db: -20 }, level_db: 12 },
      { engine: 'espeak', name: 'en-us' },
    );
    expect(line.echoDelayMs).toBe(100);
    const echo = Float32Array.from({ length: 160 }, () => 10_000);
    expect(line.process(new Int16Array(160), echo)[0]).toBe(1_000);
    expect(line.process(new Int16Array(160).fill(20_000), undefined)[0]).toBe(32_767);
  });

  it('merges a scenario line over the named one, and names the lines it knows', () => {
    expect(mergeLine(linePreset('phone'), { level_db: 0 })).toMatchObject({
      level_db: 0,
      noise: { kind: 'pink', snr_db: 35 },
    });
    expect(() => linePreset('tin-can')).toThrow(/use one of clean, phone, g711/);
    expect(activeRms(new Int16Array(10))).toBe(0);
  });
});
