/**
 * Calling out: what listening for the voicemail beep costs. The beep detector's CPU time per
 * second of far-end audio (a greeting-like mix of a modulated voice-band tone, a 1 kHz beep
 * and noise), side by side with a naive reader of the same 20 ms windows: a direct DFT of
 * every bin (no FFT) with the same band-energy ratio. Both must find the beeps the audio
 * holds; the ratio is taskline's cost over the naive one.
 */
import { performance } from 'node:perf_hooks';
import { ToneDetector } from '../src/telephony/outbound/tone.js';
import type { BenchResult } from './result.js';

/** Seconds of greeting-like audio: each second ends its first 400 ms with a 1 kHz beep. */
function audio(rate: number, seconds: number): Int16Array {
  const out = new Int16Array(rate * seconds);
  let seed = 7;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const noise = (seed / 0x7fffffff - 0.5) * 600;
    const t = i / rate;
    const beep = t % 1 < 0.4;
    out[i] = Math.round(
      (beep ? 0 : 6000 * Math.sin(2 * Math.PI * 220 * t) * Math.sin(2 * Math.PI * 3 * t)) +
        (beep ? 8000 * Math.sin(2 * Math.PI * 1000 * t) : 0) +
        noise,
    );
  }
  return out;
}

/** The naive reader: per 20 ms window, a direct DFT and the peak band's share of energy. */
function naiveTonalWindows(samples: Int16Array, rate: number): number {
  const size = Math.round(rate / 50);
  const hann = Float64Array.from(
    { length: size },
    (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (size - 1)),
  );
  const half = Math.floor(size / 2);
  const low = Math.floor(400 / (rate / size));
  const high = Math.ceil(2000 / (rate / size));
  const power = new Float64Array(half);
  const x = new Float64Array(size);
  let tonal = 0;
  for (let at = 0; at + size <= samples.length; at += size) {
    for (let i = 0; i < size; i++) x[i] = (samples[at + i]! / 32768) * hann[i]!;
    let total = 0;
    let peak = low;
    for (let k = 1; k < half; k++) {
      let re = 0;
      let im = 0;
      const w = (2 * Math.PI * k) / size;
      for (let i = 0; i < size; i++) {
        re += x[i]! * Math.cos(w * i);
        im -= x[i]! * Math.sin(w * i);
      }
      power[k] = re * re + im * im;
      total += power[k]!;
      if (k >= low && k <= high && power[k]! > power[peak]!) peak = k;
    }
    const band = power[peak - 1]! + power[peak]! + power[peak + 1]!;
    if (total > 0 && band / total >= 0.85) tonal += 1;
  }
  return tonal;
}

function cpuPerSecond(seconds: number, work: () => number): { ms: number; found: number } {
  const started = performance.now();
  const found = work();
  return { ms: (performance.now() - started) / seconds, found };
}

/**
 * Runs the outbound benchmark: the detector over 10 s of audio (3 s under
 * `TASKLINE_BENCH_QUICK=1`), the naive reader over the first 2 s (it costs about a second per
 * second at 48 kHz).
 */
export async function runOutboundBench(): Promise<BenchResult[]> {
  const seconds = process.env.TASKLINE_BENCH_QUICK === '1' ? 3 : 10;
  const naiveSeconds = 2;
  const results: BenchResult[] = [];
  for (const rate of [16_000, 48_000]) {
    const samples = audio(rate, seconds);
    const frame = rate / 100;
    const detect = () => {
      const detector = new ToneDetector(rate);
      let beeps = 0;
      for (let at = 0; at < samples.length; at += frame) {
        beeps += detector.push(samples.subarray(at, at + frame)).length;
      }
      return beeps + detector.flush().length;
    };
    detect(); // warm-up
    const ours = cpuPerSecond(seconds, detect);
    const naive = cpuPerSecond(naiveSeconds, () =>
      naiveTonalWindows(samples.subarray(0, rate * naiveSeconds), rate),
    );
    if (ours.found !== seconds) {
      throw new Error(
        `beep detector found ${ours.found} beeps in ${seconds} s, expected ${seconds}`,
      );
    }
    results.push({
      name: `outbound.beep_detector.${rate / 1000}k`,
      metric: 'cpu per second of far-end audio',
      value: Number(ours.ms.toFixed(3)),
      unit: 'ms',
      baseline: Number(naive.ms.toFixed(3)),
      ratio: Number((ours.ms / naive.ms).toFixed(4)),
      note: `${seconds} s at ${rate} Hz in 10 ms frames; ${ours.found} beeps found; baseline: direct DFT of each 20 ms window over ${naiveSeconds} s (${naive.found} tonal windows)`,
    });
  }
  return results;
}
