/**
 * The e2e suite's ears: a transcription oracle that survives the room's codec.
 *
 * In a real room the caller's speech reaches the agent through Opus (48 kHz, lossy) and a
 * resampler, so the samples the agent's STT receives are never the samples the caller sent,
 * and the sample-exact oracle of audio mode (src/testing/speech-endpoints.ts) hears nothing.
 * This one compares what survives a codec — the spectral envelope over time: log energies
 * in 16 bands between 150 Hz and 6 kHz, every 10 ms, each band's mean removed (gain) — and
 * answers with the words behind the registered utterance whose envelope the segment
 * matches (correlation ≥ {@link MATCH_THRESHOLD} over at least 70 % of the voiced frames of
 * both, so a short answer is not heard inside a longer one; the utterance cut in half-second
 * parts, each aligned at its own offset along the best ordered path, so gaps and the
 * stretching of a jitter buffer do not break the match, and a part the segment does not
 * carry counts as missing).
 * Anything else — the agent's own voice, noise, an utterance not registered — is "" (no
 * guess). It is an oracle, not a recogniser: it proves that what the caller said arrived at
 * the agent's STT through the server, not that words can be recognised (see docs/rooms.md).
 */
import { type Pcm, resample } from '../../../src/testing/espeak.js';
import type { Recognition, Recognizer } from '../../../src/testing/recognizer.js';

const RATE = 16_000;
const WINDOW = 512;
const HOP = 160;
const BANDS = 16;
const LOW_HZ = 150;
const HIGH_HZ = 6_000;
/** Minimum correlation of the envelopes for a match. */
export const MATCH_THRESHOLD = 0.8;
/** A match must cover at least this share of the utterance's voiced frames, and of the segment's. */
const MIN_COVERAGE = 0.7;
/** Frames within this many dB of the loudest frame count as voiced. */
const VOICED_DB = 35;

interface Features {
  /** frames × BANDS, band means removed. */
  bands: Float32Array[];
  voiced: boolean[];
  voicedCount: number;
}

interface Utterance {
  text: string;
  features: Features;
  heard: boolean;
}

/** The result of one transcription, for assertions and the suite's log. */
export interface Hearing {
  text: string;
  /** Best correlation found per registered utterance (text → score). */
  scores: Record<string, number>;
  /** Voiced frames (10 ms) of the segment heard. */
  voiced: number;
  /** The segment itself, kept when nothing was heard in it (written out beside the hearings). */
  missed?: Pcm;
}

/** Registered caller speech, matched by envelope: give it to the speech server. */
export class CodecSurvivingOracle implements Recognizer {
  readonly name = 'codec-surviving oracle';
  private utterances: Utterance[] = [];
  /** Every transcription answered, in order. */
  readonly hearings: Hearing[] = [];

  /** Remembers that `pcm` is the caller saying `text` (before it is published). */
  register(text: string, pcm: Pcm): void {
    this.utterances.push({ text, features: featuresOf(pcm), heard: false });
  }

  /** {@link transcribe} behind the local STT endpoint (hints change nothing: it is an oracle). */
  async recognize(audio: Pcm): Promise<Recognition> {
    const started = performance.now();
    const text = this.transcribe(audio);
    return { text, source: 'oracle', ms: performance.now() - started };
  }

  /** Nothing runs in the background. */
  async close(): Promise<void> {}

  /** The words of the registered utterances `segment` carries, each once; "" for anything else. */
  transcribe(segment: Pcm): string {
    const features = featuresOf(segment);
    const scores: Record<string, number> = {};
    const found: Utterance[] = [];
    for (const u of this.utterances) {
      const score = bestMatch(features, u.features);
      scores[u.text] = Math.round(score * 1000) / 1000;
      if (score >= MATCH_THRESHOLD) found.push(u);
    }
    const text = found
      .filter((u) => !u.heard)
      .map((u) => u.text)
      .join(' ');
    for (const u of found) u.heard = true;
    this.hearings.push({
      text,
      scores,
      voiced: features.voicedCount,
      ...(found.length === 0 ? { missed: segment } : {}),
    });
    return text;
  }
}

function featuresOf(pcm: Pcm): Features {
  const samples = resample(pcm, RATE).samples;
  const frames: Float32Array[] = [];
  const energy: number[] = [];
  const window = hann(WINDOW);
  const edges = bandEdges();
  const re = new Float64Array(WINDOW);
  const im = new Float64Array(WINDOW);
  for (let start = 0; start + WINDOW <= samples.length; start += HOP) {
    for (let i = 0; i < WINDOW; i++) {
      re[i] = (samples[start + i]! / 32768) * window[i]!;
      im[i] = 0;
    }
    fft(re, im);
    const bands = new Float32Array(BANDS);
    let total = 0;
    for (let b = 0; b < BANDS; b++) {
      let sum = 0;
      for (let k = edges[b]!; k < edges[b + 1]!; k++) sum += re[k]! * re[k]! + im[k]! * im[k]!;
      total += sum;
      bands[b] = Math.log10(sum + 1e-10) * 10;
    }
    frames.push(bands);
    energy.push(Math.log10(total + 1e-10) * 10);
  }
  const loudest = Math.max(-Infinity, ...energy);
  const voiced = energy.map((e) => e >= loudest - VOICED_DB && e > -60);
  // Remove each band's mean over the voiced frames: a gain change shifts every frame alike.
  const means = new Float64Array(BANDS);
  let n = 0;
  frames.forEach((f, i) => {
    if (!voiced[i]) return;
    n += 1;
    for (let b = 0; b < BANDS; b++) means[b]! += f[b]!;
  });
  if (n > 0) for (let b = 0; b < BANDS; b++) means[b]! /= n;
  for (const f of frames) for (let b = 0; b < BANDS; b++) f[b]! -= means[b]!;
  return { bands: frames, voiced, voicedCount: n };
}

/**
 * Frames (10 ms) per part an utterance is cut into, each part aligned on its own: audio
 * through a jitter buffer arrives with gaps and stretches (NetEq on a loaded machine), which
 * one offset per long part cannot follow (a 6.7 s sentence cut in three scored 0.74 through
 * the real server under load, the same audio cut in half seconds 0.96).
 */
const PART_FRAMES = 50;
/** The fewest parts, for a short utterance. */
const MIN_PARTS = 3;
/** A part aligned with less correlation than this is taken as missing from the segment. */
const PART_MIN_CORRELATION = 0.5;
/** How far a part may start before the end of the previous one (jitter), in frames. */
const MAX_BACK = 5;
/** How long a gap between two parts may be (audio held up on the way), in frames. */
const MAX_GAP = 150;

interface Sums {
  n: number;
  sx: number;
  sy: number;
  sxx: number;
  syy: number;
  sxy: number;
  /** Frames voiced in both. */
  pairs: number;
}

const empty = (): Sums => ({ n: 0, sx: 0, sy: 0, sxx: 0, syy: 0, sxy: 0, pairs: 0 });

function correlation(s: Sums): number {
  if (s.n === 0) return 0;
  const cov = s.sxy - (s.sx * s.sy) / s.n;
  const vx = s.sxx - (s.sx * s.sx) / s.n;
  const vy = s.syy - (s.sy * s.sy) / s.n;
  return vx > 0 && vy > 0 ? cov / Math.sqrt(vx * vy) : 0;
}

/** Sums over utterance frames [from, to) lined up with segment frames shifted by `offset`. */
function sumsAt(
  segment: Features,
  utterance: Features,
  from: number,
  to: number,
  offset: number,
): Sums {
  const sums = empty();
  const lo = Math.max(from, -offset);
  const hi = Math.min(to, segment.bands.length - offset);
  for (let i = lo; i < hi; i++) {
    // Frames voiced in both: a frame lost on the way (silence in the segment) is not
    // evidence against a match, only less evidence for one.
    if (!utterance.voiced[i] || !segment.voiced[i + offset]) continue;
    sums.pairs += 1;
    const a = utterance.bands[i]!;
    const b = segment.bands[i + offset]!;
    for (let k = 0; k < BANDS; k++) {
      const x = a[k]!;
      const y = b[k]!;
      sums.n += 1;
      sums.sx += x;
      sums.sy += y;
      sums.sxx += x * x;
      sums.syy += y * y;
      sums.sxy += x * y;
    }
  }
  return sums;
}

/**
 * How well `segment` carries `utterance`. The utterance is cut into parts of about
 * {@link PART_FRAMES} frames (at least {@link MIN_PARTS}); each
 * is aligned at its own best offset, in order, a later part starting at most
 * {@link MAX_GAP} frames after the earlier one (audio held up on a loaded machine or lost
 * on the way arrives with gaps, which a single offset cannot follow). The score is the
 * correlation over every aligned frame voiced in both, and 0 unless those frames cover
 * {@link MIN_COVERAGE} of the voiced frames of the utterance and of the segment (so "yes"
 * is not heard inside "yes, sure").
 */
function bestMatch(segment: Features, utterance: Features): number {
  if (segment.voicedCount === 0 || utterance.voicedCount === 0) return 0;
  const need = Math.max(
    10,
    utterance.voicedCount * MIN_COVERAGE,
    segment.voicedCount * MIN_COVERAGE,
  );
  // Coverage can never be reached when one side has too few voiced frames for the other.
  if (Math.min(utterance.voicedCount, segment.voicedCount) < need) return 0;
  const length = utterance.bands.length;
  const parts = Math.max(MIN_PARTS, Math.round(length / PART_FRAMES));
  // The best path so far, per offset of the last part aligned: its weighted evidence
  // (correlation × frames, which adds up along a path) and its summed statistics.
  let paths = new Map<number, Path>();
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((length * p) / parts);
    const to = Math.floor((length * (p + 1)) / parts);
    // Each path may pass this part by at its own offset: audio lost on the way (silence in
    // the segment) costs nothing there, other audio counts against the match.
    const next = new Map<number, Path>();
    for (const [q, path] of paths) {
      const here = sumsAt(segment, utterance, from, to, q);
      next.set(q, here.pairs === 0 ? path : extend(path, here, false));
    }
    const starts = [...paths.keys()];
    const lowest = paths.size === 0 ? -to : Math.min(...starts) - MAX_BACK;
    const highest = paths.size === 0 ? segment.bands.length : Math.max(...starts) + MAX_GAP;
    for (let offset = lowest; offset <= highest; offset++) {
      const sums = sumsAt(segment, utterance, from, to, offset);
      if (sums.pairs < Math.max(3, (to - from) * 0.25)) continue;
      // A part aligned this poorly is not this part: it is passed by (above) instead.
      if (correlation(sums) < PART_MIN_CORRELATION) continue;
      // The best earlier path this part may follow: it starts at most MAX_BACK frames
      // before that path's offset, at most MAX_GAP after.
      let before: Path | undefined = paths.size === 0 ? START : undefined;
      for (let q = offset - MAX_GAP; paths.size > 0 && q <= offset + MAX_BACK; q++) {
        const path = paths.get(q);
        if (path && (!before || path.evidence > before.evidence)) before = path;
      }
      if (!before) continue;
      const path = extend(before, sums, true);
      const kept = next.get(offset);
      if (!kept || path.evidence > kept.evidence) next.set(offset, path);
    }
    paths = next;
  }
  let best = 0;
  for (const { sums } of paths.values()) {
    if (sums.pairs >= need) best = Math.max(best, correlation(sums));
  }
  return best;
}

/** A way of lining the utterance's parts up with the segment, so far. */
interface Path {
  /** Correlation × voiced pairs, summed over the parts: what the DP maximises. */
  evidence: number;
  sums: Sums;
}

const START: Path = { evidence: 0, sums: empty() };

/**
 * `path` followed by `part`; a part passed by (`covers` false) weighs in the correlation but
 * does not count towards coverage: different audio there is evidence against, never for.
 */
function extend(path: Path, part: Sums, covers: boolean): Path {
  const sums = { ...path.sums };
  for (const key of Object.keys(sums) as Array<keyof Sums>) {
    if (key !== 'pairs' || covers) sums[key] += part[key];
  }
  // Passing a part by never earns evidence (the path would prefer it to aligning the part).
  const r = correlation(part);
  return { evidence: path.evidence + (covers ? r : Math.min(0, r)) * part.pairs, sums };
}

function bandEdges(): number[] {
  // Mel-spaced band edges, as FFT bin indices.
  const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const lo = mel(LOW_HZ);
  const hi = mel(HIGH_HZ);
  const edges: number[] = [];
  for (let b = 0; b <= BANDS; b++) {
    const f = hz(lo + ((hi - lo) * b) / BANDS);
    edges.push(Math.max(1, Math.round((f * WINDOW) / RATE)));
  }
  for (let b = 1; b < edges.length; b++) edges[b] = Math.max(edges[b]!, edges[b - 1]! + 1);
  return edges;
}

function hann(n: number): Float64Array {
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
  return w;
}

/** In-place radix-2 FFT (n a power of two). */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
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
    const angle = (-2 * Math.PI) / len;
    const wr = Math.cos(angle);
    const wi = Math.sin(angle);
    for (let i = 0; i < n; i += len) {
      let cr = 1;
      let ci = 0;
      for (let k = 0; k < len / 2; k++) {
        const a = i + k;
        const b = a + len / 2;
        const tr = re[b]! * cr - im[b]! * ci;
        const ti = re[b]! * ci + im[b]! * cr;
        re[b] = re[a]! - tr;
        im[b] = im[a]! - ti;
        re[a]! += tr;
        im[a]! += ti;
        const ncr = cr * wr - ci * wi;
        ci = cr * wi + ci * wr;
        cr = ncr;
      }
    }
  }
}
