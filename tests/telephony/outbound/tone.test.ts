// The beep detector on audio made with sox and espeak-ng: a voicemail's beep is found (at
// 16 kHz, through an 8 kHz μ-law phone line, quiet, right after speech), and nothing that is
// not a steady single tone is taken for one — speech, DTMF, noise, music, a tone too short,
// too high or too quiet.
import { describe, expect, it } from 'vitest';
import { ToneDetector, type ToneEvent } from '../../../src/telephony/outbound/tone.js';
import { type Pcm, synthesize } from '../../../src/testing/espeak.js';
import { concat, phoneLine, soxMissing, synth, voicemailAudio } from './sox.js';

const missing = await soxMissing();

function tones(pcm: Pcm, chunk = 160): ToneEvent[] {
  const detector = new ToneDetector(pcm.sampleRate);
  const out: ToneEvent[] = [];
  // In 10 ms frames, as a room delivers audio.
  for (let at = 0; at < pcm.samples.length; at += chunk) {
    out.push(...detector.push(pcm.samples.subarray(at, at + chunk)));
  }
  return [...out, ...detector.flush()];
}

describe.skipIf(missing)('ToneDetector', () => {
  it('finds the beep after a voicemail greeting, once, at its frequency and length', async () => {
    const audio = await voicemailAudio({
      greeting: "Hi, you've reached Sam. Please leave a message after the tone.",
      beepHz: 1000,
      beepS: 0.4,
    });
    const found = tones(audio);
    expect(found).toHaveLength(1);
    expect(found[0]!.hz).toBeGreaterThan(990);
    expect(found[0]!.hz).toBeLessThan(1010);
    expect(found[0]!.durationMs).toBeGreaterThanOrEqual(380);
    expect(found[0]!.durationMs).toBeLessThanOrEqual(420);
  });

  it('finds beeps of other pitches and lengths, through an 8 kHz μ-law phone line too', async () => {
    for (const [hz, seconds] of [
      [440, 0.25],
      [850, 0.3],
      [1400, 1.0],
      [1950, 0.5],
    ] as const) {
      const beep = await synth(seconds, ['sine', String(hz), 'vol', '0.3']);
      const line = await phoneLine(beep);
      for (const pcm of [beep, line]) {
        const found = tones(pcm, pcm.sampleRate / 100);
        expect(found, `${hz} Hz at ${pcm.sampleRate} Hz`).toHaveLength(1);
        expect(Math.abs(found[0]!.hz - hz)).toBeLessThan(20);
      }
    }
  });

  it('finds a quiet beep (-40 dBFS) right after speech with no gap', async () => {
    const speech = await synthesize('Leave your message now', { sampleRate: 16_000 });
    const beep = await synth(0.3, ['sine', '1000', 'vol', '0.01']);
    expect(tones(concat(speech, beep))).toHaveLength(1);
  });

  it('takes nothing else for a beep: speech, DTMF, noise, a chord, music, short/high/faint tones', async () => {
    const cases: Array<[string, Pcm]> = [
      [
        'speech',
        await synthesize('Hello? Hellooo? Is anyone there? Please call me back.', {
          sampleRate: 16_000,
        }),
      ],
      [
        'a DTMF key (697 + 1209 Hz)',
        await synth(0.5, ['sine', '697', 'sine', '1209', 'remix', '-']),
      ],
      ['ringback (440 + 480 Hz)', await synth(2, ['sine', '440', 'sine', '480', 'remix', '-'])],
      ['pink noise', await synth(3, ['pinknoise', 'vol', '0.3'])],
      ['a plucked chord', await synth(3, ['pluck', 'C4', 'pluck', 'E4', 'pluck', 'G4'])],
      ['a 150 ms tone', await synth(0.15, ['sine', '1000'])],
      ['a 3 kHz tone', await synth(0.5, ['sine', '3000'])],
      ['a 200 Hz hum', await synth(1, ['sine', '200'])],
      ['a tone at -60 dBFS', await synth(0.5, ['sine', '1000', 'vol', '0.001'])],
    ];
    for (const [what, pcm] of cases) expect(tones(pcm), what).toEqual([]);
  });

  it('keeps constant state whatever the length of the stream', async () => {
    const noise = await synth(1, ['whitenoise', 'vol', '0.2']);
    const detector = new ToneDetector(16_000);
    for (let i = 0; i < 120; i++) expect(detector.push(noise.samples)).toEqual([]);
    expect(() => new ToneDetector(4000)).toThrow(
      'ToneDetector: sampleRate must be a whole number from 8000 to 192000 (got 4000).',
    );
  });
});

/** A steady sine in silence, made here (no sox): `ms` of tone after 200 ms of quiet. */
function sine(sampleRate: number, hz: number, ms: number): Int16Array {
  const quiet = Math.round(sampleRate * 0.2);
  const out = new Int16Array(quiet * 2 + Math.round((sampleRate * ms) / 1000));
  for (let i = quiet; i < out.length - quiet; i++) {
    out[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  }
  return out;
}

describe('ToneDetector options', () => {
  it('refuses a bad sample rate or option, naming it and its range; the boundaries pass', () => {
    const refused = (sampleRate: unknown, options: object, message: string) =>
      expect(() => new ToneDetector(sampleRate as number, options)).toThrow(
        expect.objectContaining({ code: 'invalid_argument', message }),
      );
    refused(
      44_100.5,
      {},
      'ToneDetector: sampleRate must be a whole number from 8000 to 192000 (got 44100.5).',
    );
    refused(
      '16000',
      {},
      'ToneDetector: sampleRate must be a whole number from 8000 to 192000 (got "16000").',
    );
    refused(16_000, { minHz: -1 }, 'ToneDetector: minHz must be between 50 and 8000 (got -1).');
    refused(
      16_000,
      { maxHz: Number.NaN },
      'ToneDetector: maxHz must be between 50 and 8000 (got NaN).',
    );
    refused(16_000, { minMs: 10 }, 'ToneDetector: minMs must be between 20 and 10000 ms (got 10).');
    refused(
      16_000,
      { minMs: 30 * 86_400_000 },
      'ToneDetector: minMs must be between 20 and 10000 ms (got 2592000000).',
    );
    refused(
      16_000,
      { tonality: 1.5 },
      'ToneDetector: tonality must be between 0.5 and 1 (got 1.5).',
    );
    refused(
      16_000,
      { minLevelDb: '-45' },
      'ToneDetector: minLevelDb must be between -90 and 0 (got "-45").',
    );
    refused(
      16_000,
      { minHz: 1200, maxHz: 1000 },
      'ToneDetector: minHz (1200) cannot be above maxHz (1000).',
    );
    for (const rate of [8_000, 192_000]) expect(new ToneDetector(rate).sampleRate).toBe(rate);
    const widest = { minHz: 50, maxHz: 8_000, minMs: 20, tonality: 0.5, minLevelDb: -90 };
    const detector = new ToneDetector(16_000, widest);
    const found = [...detector.push(sine(16_000, 1000, 300)), ...detector.flush()];
    expect(found).toHaveLength(1);
    expect(found[0]!.hz).toBeGreaterThan(990);
    expect(found[0]!.hz).toBeLessThan(1010);
    const strictest = new ToneDetector(16_000, { minMs: 10_000, tonality: 1, minLevelDb: 0 });
    expect([...strictest.push(sine(16_000, 1000, 300)), ...strictest.flush()]).toEqual([]);
  });
});
