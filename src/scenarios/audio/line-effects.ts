/**
 * What a phone line does to the caller's audio, as streaming effects on 16 kHz frames:
 * G.711 μ-law at 8 kHz (the telephone band and its 8-bit companding), a level change,
 * background noise (white, pink, or babble of other talkers) at a signal-to-noise ratio, and
 * the agent's own audio echoed back. Deterministic: noise comes from a seeded generator.
 */

/** G.711 μ-law: one 16-bit sample to its 8-bit code (ITU-T G.711, with the 0x84 bias). */
export function mulawEncode(sample: number): number {
  const BIAS = 0x84;
  const CLIP = 32_635;
  let s = Math.max(-32_768, Math.min(32_767, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** G.711 μ-law: an 8-bit code back to a 16-bit sample. */
export function mulawDecode(code: number): number {
  const u = ~code & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << exponent) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}

/** `10^(db/20)`. */
export function dbGain(db: number): number {
  return 10 ** (db / 20);
}

/** Root mean square of the samples louder than near-silence (the active speech level). */
export function activeRms(samples: Int16Array): number {
  let sum = 0;
  let n = 0;
  for (const s of samples) {
    if (Math.abs(s) < 200) continue;
    sum += s * s;
    n++;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

/** A small seeded generator (mulberry32), so every run of a scenario hears the same noise. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A steady noise source: `next(n)` gives the next n samples at unit RMS (floats). */
export interface NoiseSource {
  next(n: number): Float32Array;
}

/** White noise at unit RMS. */
export function whiteNoise(seed = 1): NoiseSource {
  const random = seededRandom(seed);
  return {
    next(n) {
      const out = new Float32Array(n);
      // uniform in [-√3, √3] has unit RMS
      for (let i = 0; i < n; i++) out[i] = (random() * 2 - 1) * Math.sqrt(3);
      return out;
    },
  };
}

/** Pink (1/f) noise at about unit RMS (Paul Kellet's economy filter over white noise). */
export function pinkNoise(seed = 1): NoiseSource {
  const white = whiteNoise(seed);
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  return {
    next(n) {
      const w = white.next(n);
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        b0 = 0.99765 * b0 + w[i]! * 0.099046;
        b1 = 0.963 * b1 + w[i]! * 0.2965164;
        b2 = 0.57 * b2 + w[i]! * 1.0526913;
        out[i] = (b0 + b1 + b2 + w[i]! * 0.1848) * 0.38;
      }
      return out;
    },
  };
}

/**
 * Babble: several recorded talkers at once, looped — the noise of a call centre or a café.
 * `talkers` are speech recordings (16 kHz); each starts at a different offset.
 */
export function babbleNoise(talkers: readonly Int16Array[]): NoiseSource {
  const length = Math.max(...talkers.map((t) => t.length));
  const mix = new Float32Array(length);
  talkers.forEach((t, k) => {
    const offset = Math.floor((k * length) / talkers.length);
    for (let i = 0; i < length; i++) mix[i] = mix[i]! + t[(i + offset) % t.length]!;
  });
  let sum = 0;
  for (const s of mix) sum += s * s;
  const scale = sum ? 1 / Math.sqrt(sum / length) : 0;
  let at = 0;
  return {
    next(n) {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        out[i] = mix[at]! * scale;
        at = (at + 1) % length;
      }
      return out;
    },
  };
}

/** A streaming FIR low-pass (windowed sinc) over float samples, keeping its history. */
class LowPass {
  private readonly taps: Float32Array;
  private readonly history: Float32Array;
  private at = 0;

  constructor(cutoffHz: number, sampleRate: number, size = 63, gain = 1) {
    this.taps = new Float32Array(size);
    this.history = new Float32Array(size);
    const fc = cutoffHz / sampleRate;
    const mid = (size - 1) / 2;
    let sum = 0;
    for (let i = 0; i < size; i++) {
      const x = i - mid;
      const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
      const window = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (size - 1));
      this.taps[i] = sinc * window;
      sum += this.taps[i]!;
    }
    for (let i = 0; i < size; i++) this.taps[i] = (this.taps[i]! / sum) * gain;
  }

  step(x: number): number {
    const n = this.taps.length;
    this.history[this.at] = x;
    let y = 0;
    let k = this.at;
    for (let i = 0; i < n; i++) {
      y += this.taps[i]! * this.history[k]!;
      k = k === 0 ? n - 1 : k - 1;
    }
    this.at = (this.at + 1) % n;
    return y;
  }
}

/**
 * The telephone channel: 16 kHz in, band-limited to 3.4 kHz, sampled at 8 kHz, companded with
 * G.711 μ-law and decoded, and brought back to 16 kHz (what a wideband recogniser is given
 * for a narrowband call). Streaming: feed frames of even length in order.
 */
export class MulawChannel {
  private readonly down = new LowPass(3_400, 16_000);
  private readonly up = new LowPass(3_400, 16_000, 63, 2);

  process(frame: Float32Array): Float32Array {
    const out = new Float32Array(frame.length);
    for (let i = 0; i < frame.length; i += 2) {
      this.down.step(frame[i]!);
      const narrow = this.down.step(frame[i + 1] ?? 0);
      const coded = mulawDecode(mulawEncode(narrow));
      out[i] = this.up.step(coded);
      out[i + 1] = this.up.step(0);
    }
    return out;
  }
}

/** Float samples to 16-bit, clipping at full scale as a line does. */
export function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32_768, Math.min(32_767, Math.round(samples[i]!)));
  }
  return out;
}
