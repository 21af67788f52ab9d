/**
 * A steady single tone in far-end audio — the beep after a voicemail greeting — found with
 * an FFT over 20 ms windows. A window is tonal when one narrow band (the main lobe of its
 * strongest bin) holds most of its energy and its envelope is flat (two close tones, like a
 * ringback's 440 + 480 Hz, share a band but beat); a tone is a run of tonal windows at one
 * frequency and one level, lasting at least `minMs`. Speech is not a steady single tone:
 * its energy spreads over harmonics and its pitch and loudness move, so a run breaks
 * within a few windows. State is a few numbers per detector: memory and CPU are bounded
 * whatever the stream's length.
 */
import { TasklineError } from '../../core/errors.js';
import { checkOptions, checkRange, type OptionTable, whole } from '../../core/options.js';

/** A tone that ended in the audio. Times are in ms from the start of the audio pushed. */
export interface ToneEvent {
  /** Its frequency (mean of its windows' peaks). */
  hz: number;
  durationMs: number;
  startMs: number;
  endMs: number;
}

/** What one 20 ms window held (for callers that also watch for sound without speech). */
export interface ToneWindow {
  /** Start of the window in ms from the start of the audio. */
  atMs: number;
  /** Root-mean-square level in dBFS. */
  levelDb: number;
  /** True when one narrow band holds most of the energy. */
  tonal: boolean;
  /** The strongest frequency in the search band. */
  hz: number;
}

/** Options for {@link ToneDetector}. */
export interface ToneDetectorOptions {
  /** Lowest tone frequency: 50 to 8,000 Hz, at most `maxHz` (default 400 Hz). */
  minHz?: number;
  /** Highest tone frequency: 50 to 8,000 Hz (default 2,000 Hz; capped at half the sample rate). */
  maxHz?: number;
  /** Shortest tone reported: 20 to 10,000 ms (one 20 ms window at least; default 200 ms). */
  minMs?: number;
  /** Share of a window's energy in the peak's band for it to be tonal: 0.5 to 1 (default 0.85). */
  tonality?: number;
  /** Quietest level a tone may have: -90 to 0 dBFS (default -45). */
  minLevelDb?: number;
  /** Called with every window analysed. */
  onWindow?: (window: ToneWindow) => void;
}

/** The numeric options of {@link ToneDetectorOptions}, with their accepted range and default. */
const TONE_OPTIONS = {
  minHz: { range: { min: 50, max: 8_000 }, default: 400 },
  maxHz: { range: { min: 50, max: 8_000 }, default: 2_000 },
  minMs: { range: { min: 20, max: 10_000, ms: true }, default: 200 },
  tonality: { range: { min: 0.5, max: 1 }, default: 0.85 },
  minLevelDb: { range: { min: -90, max: 0 }, default: -45 },
} as const satisfies OptionTable;

/** The sample rates a detector analyses (telephone audio at 8 kHz up to studio rates). */
const SAMPLE_RATE = whole(8_000, 192_000);

const WINDOW_MS = 20;
/** Largest level change between windows of one tone, dB. */
const LEVEL_STEP_DB = 6;
/** Sub-blocks of a window whose levels must agree (a steady envelope). */
const SUB_BLOCKS = 4;
/** Largest spread of the sub-blocks' RMS levels, relative to the window's, for a steady tone. */
const MAX_RIPPLE = 0.5;

interface Run {
  startMs: number;
  windows: number;
  hzSum: number;
  bin: number;
  levelDb: number;
}

/** Finds steady tones in a stream of 16-bit mono samples at one sample rate. */
export class ToneDetector {
  readonly sampleRate: number;
  private readonly size: number;
  private readonly fftSize: number;
  private readonly hann: Float64Array;
  private readonly re: Float64Array;
  private readonly im: Float64Array;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly lowBin: number;
  private readonly highBin: number;
  private readonly lobe: number;
  private readonly minWindows: number;
  private readonly tonality: number;
  private readonly minLevelDb: number;
  private readonly onWindow: ((window: ToneWindow) => void) | undefined;
  private readonly pending: Int16Array;
  private filled = 0;
  private windows = 0;
  private run: Run | undefined;

  /**
   * Throws a TasklineError (`invalid_argument`) for a sample rate or an option outside its
   * range, or `minHz` above `maxHz`.
   */
  constructor(sampleRate: number, options: ToneDetectorOptions = {}) {
    checkRange('sampleRate', sampleRate, SAMPLE_RATE, { owner: 'ToneDetector' });
    const { minHz, maxHz, minMs, tonality, minLevelDb } = checkOptions(TONE_OPTIONS, options, {
      owner: 'ToneDetector',
    });
    if (minHz > maxHz) {
      throw new TasklineError(
        'invalid_argument',
        `ToneDetector: minHz (${minHz}) cannot be above maxHz (${maxHz}).`,
        { option: 'minHz' },
      );
    }
    this.sampleRate = sampleRate;
    this.size = Math.round((sampleRate * WINDOW_MS) / 1000);
    let fft = 1;
    while (fft < this.size) fft *= 2;
    this.fftSize = fft;
    this.hann = new Float64Array(this.size);
    for (let i = 0; i < this.size; i++) {
      this.hann[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (this.size - 1));
    }
    this.re = new Float64Array(fft);
    this.im = new Float64Array(fft);
    this.cos = new Float64Array(fft / 2);
    this.sin = new Float64Array(fft / 2);
    for (let i = 0; i < fft / 2; i++) {
      this.cos[i] = Math.cos((2 * Math.PI * i) / fft);
      this.sin[i] = -Math.sin((2 * Math.PI * i) / fft);
    }
    const binHz = sampleRate / fft;
    this.lowBin = Math.max(1, Math.floor(minHz / binHz));
    this.highBin = Math.min(fft / 2 - 1, Math.ceil(maxHz / binHz));
    // Half the width of a Hann window's main lobe (2 bins of the unpadded window), in bins.
    this.lobe = Math.ceil((2 * fft) / this.size);
    this.minWindows = Math.ceil(minMs / WINDOW_MS);
    this.tonality = tonality;
    this.minLevelDb = minLevelDb;
    this.onWindow = options.onWindow;
    this.pending = new Int16Array(this.size);
  }

  /** Analyses `samples` (appended to what came before); returns the tones that ended in them. */
  push(samples: Int16Array): ToneEvent[] {
    const out: ToneEvent[] = [];
    let at = 0;
    while (at < samples.length) {
      const take = Math.min(this.size - this.filled, samples.length - at);
      this.pending.set(samples.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === this.size) {
        const ended = this.analyse();
        if (ended) out.push(ended);
        this.filled = 0;
      }
    }
    return out;
  }

  /** Ends the stream: a tone still running is reported if it is long enough. */
  flush(): ToneEvent[] {
    const ended = this.endRun();
    return ended ? [ended] : [];
  }

  private analyse(): ToneEvent | undefined {
    const atMs = this.windows * WINDOW_MS;
    this.windows += 1;
    const { re, im } = this;
    let energy = 0;
    // The envelope over four sub-blocks: a tone's is flat; two close tones beat (ringback).
    const block = Math.floor(this.size / SUB_BLOCKS);
    let lowest = Number.POSITIVE_INFINITY;
    let highest = 0;
    let blockEnergy = 0;
    for (let i = 0; i < this.size; i++) {
      const s = this.pending[i]! / 32768;
      energy += s * s;
      blockEnergy += s * s;
      if ((i + 1) % block === 0) {
        lowest = Math.min(lowest, blockEnergy);
        highest = Math.max(highest, blockEnergy);
        blockEnergy = 0;
      }
      re[i] = s * this.hann[i]!;
      im[i] = 0;
    }
    const mean = energy / SUB_BLOCKS;
    const steady =
      mean > 0 && (Math.sqrt(highest) - Math.sqrt(lowest)) / Math.sqrt(mean) < MAX_RIPPLE;
    re.fill(0, this.size);
    im.fill(0, this.size);
    const levelDb = 10 * Math.log10(energy / this.size + 1e-12);
    this.fft();
    let total = 0;
    let peak = this.lowBin;
    let peakPower = -1;
    const half = this.fftSize / 2;
    for (let k = 1; k < half; k++) {
      const p = re[k]! * re[k]! + im[k]! * im[k]!;
      re[k] = p; // keep the power spectrum in place
      total += p;
      if (k >= this.lowBin && k <= this.highBin && p > peakPower) {
        peakPower = p;
        peak = k;
      }
    }
    let band = 0;
    for (let k = Math.max(1, peak - this.lobe); k <= Math.min(half - 1, peak + this.lobe); k++) {
      band += re[k]!;
    }
    const tonal =
      steady && levelDb >= this.minLevelDb && total > 0 && band / total >= this.tonality;
    const hz = this.interpolatedHz(peak);
    this.onWindow?.({ atMs, levelDb, tonal, hz });
    const run = this.run;
    if (
      tonal &&
      run &&
      Math.abs(peak - run.bin) <= 1 &&
      Math.abs(levelDb - run.levelDb) <= LEVEL_STEP_DB
    ) {
      run.windows += 1;
      run.hzSum += hz;
      run.levelDb = levelDb;
      return undefined;
    }
    const ended = this.endRun();
    if (tonal) this.run = { startMs: atMs, windows: 1, hzSum: hz, bin: peak, levelDb };
    return ended;
  }

  private endRun(): ToneEvent | undefined {
    const run = this.run;
    this.run = undefined;
    if (!run || run.windows < this.minWindows) return undefined;
    const durationMs = run.windows * WINDOW_MS;
    return {
      hz: Math.round(run.hzSum / run.windows),
      durationMs,
      startMs: run.startMs,
      endMs: run.startMs + durationMs,
    };
  }

  /** The peak's frequency, refined between bins with a parabola through log powers. */
  private interpolatedHz(bin: number): number {
    const binHz = this.sampleRate / this.fftSize;
    const a = Math.log(this.re[bin - 1]! + 1e-20);
    const b = Math.log(this.re[bin]! + 1e-20);
    const c = Math.log(this.re[bin + 1]! + 1e-20);
    const denom = a - 2 * b + c;
    const shift = denom === 0 ? 0 : Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / denom));
    return (bin + shift) * binHz;
  }

  /** In-place iterative radix-2 FFT of `re` + i·`im`. */
  private fft(): void {
    const n = this.fftSize;
    const { re, im } = this;
    for (let i = 1, j = 0; i < n; i++) {
      let bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) {
        [re[i], re[j]] = [re[j]!, re[i]!];
        [im[i], im[j]] = [im[j]!, im[i]!];
      }
    }
    for (let len = 2; len <= n; len <<= 1) {
      const step = n / len;
      const halfLen = len >> 1;
      for (let i = 0; i < n; i += len) {
        for (let k = 0; k < halfLen; k++) {
          const wr = this.cos[k * step]!;
          const wi = this.sin[k * step]!;
          const xr = re[i + k + halfLen]! * wr - im[i + k + halfLen]! * wi;
          const xi = re[i + k + halfLen]! * wi + im[i + k + halfLen]! * wr;
          re[i + k + halfLen] = re[i + k]! - xr;
          im[i + k + halfLen] = im[i + k]! - xi;
          re[i + k] = re[i + k]! + xr;
          im[i + k] = im[i + k]! + xi;
        }
      }
    }
  }
}
