/**
 * Speech audio made offline with espeak-ng (Debian package `espeak-ng`): the simulated
 * caller's voice in audio-mode scenarios and the agent's voice behind the local TTS
 * endpoint. Audio is 16-bit mono PCM, resampled with rtc-node's AudioResampler.
 */
import { execFile } from 'node:child_process';
import { AudioFrame, AudioResampler } from '@livekit/rtc-node';
import { TasklineError } from '../core/errors.js';

/** Mono 16-bit PCM at a sample rate. */
export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
}

/** Options for {@link synthesize}. */
export interface SpeechOptions {
  /** espeak-ng voice (default "en-us"). */
  voice?: string;
  /** Words per minute (default 170). */
  wordsPerMinute?: number;
  /** Output sample rate (default 16 kHz). */
  sampleRate?: number;
  /** Cut leading and trailing silence, so the audio ends where the speech ends (default true). */
  trim?: boolean;
}

const ESPEAK = 'espeak-ng';
const cache = new Map<string, Promise<Pcm>>();

/** Why espeak-ng cannot be used here (a sentence), or undefined when it can. */
export async function espeakUnavailable(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(ESPEAK, ['--version'], { timeout: 10_000 }, (error) => {
      resolve(
        error
          ? `espeak-ng is not installed (${(error as NodeJS.ErrnoException).code ?? error.message}); install it with: apt-get install espeak-ng (scripts/speech-tools.sh)`
          : undefined,
      );
    });
  });
}

/** Speaks `text` with espeak-ng; the same text and options are synthesised once per process. */
export function synthesize(text: string, options: SpeechOptions = {}): Promise<Pcm> {
  const voice = options.voice ?? 'en-us';
  const wpm = options.wordsPerMinute ?? 170;
  const rate = options.sampleRate ?? 16_000;
  const trim = options.trim ?? true;
  const key = JSON.stringify([text, voice, wpm, rate, trim]);
  let pcm = cache.get(key);
  if (!pcm) {
    pcm = runEspeak(text, voice, wpm).then((wav) => {
      const decoded = resample(decodeWav(wav), rate);
      return trim ? trimSilence(decoded) : decoded;
    });
    pcm.catch(() => cache.delete(key));
    cache.set(key, pcm);
  }
  return pcm;
}

function runEspeak(text: string, voice: string, wpm: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      ESPEAK,
      ['-v', voice, '-s', String(wpm), '--stdout', '--', text],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (error, stdout) => {
        if (error) {
          reject(
            new TasklineError(
              'missing_dependency',
              `espeak-ng could not speak ${JSON.stringify(text.slice(0, 40))}: ${error.message}`,
            ),
          );
        } else resolve(stdout);
      },
    );
  });
}

/** Decodes a 16-bit PCM WAV file (the first channel). */
export function decodeWav(wav: Buffer): Pcm {
  if (
    wav.length < 12 ||
    wav.toString('ascii', 0, 4) !== 'RIFF' ||
    wav.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    throw new TasklineError('invalid_argument', 'not a WAV file (no RIFF/WAVE header)');
  }
  let at = 12;
  let sampleRate = 0;
  let channels = 1;
  let bits = 16;
  while (at + 8 <= wav.length) {
    const id = wav.toString('ascii', at, at + 4);
    let size = wav.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') {
      channels = wav.readUInt16LE(body + 2);
      sampleRate = wav.readUInt32LE(body + 4);
      bits = wav.readUInt16LE(body + 14);
    } else if (id === 'data') {
      // espeak-ng writing to a pipe cannot seek back to fill the size in: take the rest.
      if (size === 0 || size === 0xffffffff || body + size > wav.length) size = wav.length - body;
      if (bits !== 16 || !sampleRate) {
        throw new TasklineError(
          'invalid_argument',
          `unsupported WAV: ${bits}-bit at ${sampleRate} Hz`,
        );
      }
      const frames = Math.floor(size / (2 * channels));
      const samples = new Int16Array(frames);
      for (let i = 0; i < frames; i++) samples[i] = wav.readInt16LE(body + i * 2 * channels);
      return { samples, sampleRate };
    }
    at = body + size + (size % 2);
  }
  throw new TasklineError('invalid_argument', 'WAV file without a data chunk');
}

/** Encodes mono 16-bit PCM as a WAV file. */
export function encodeWav(pcm: Pcm): Buffer {
  const header = Buffer.alloc(44);
  const bytes = pcm.samples.byteLength;
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + bytes, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(pcm.sampleRate, 24);
  header.writeUInt32LE(pcm.sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(bytes, 40);
  return Buffer.concat([header, Buffer.from(pcm.samples.buffer, pcm.samples.byteOffset, bytes)]);
}

/** `pcm` at `sampleRate` (rtc-node's resampler; a copy when the rate already matches). */
export function resample(pcm: Pcm, sampleRate: number): Pcm {
  if (pcm.sampleRate === sampleRate) return pcm;
  const resampler = new AudioResampler(pcm.sampleRate, sampleRate, 1);
  const input = new AudioFrame(pcm.samples, pcm.sampleRate, 1, pcm.samples.length);
  const frames = [...resampler.push(input), ...resampler.flush()];
  resampler.close();
  const total = frames.reduce((n, f) => n + f.samplesPerChannel, 0);
  const samples = new Int16Array(total);
  let at = 0;
  for (const f of frames) {
    samples.set(f.data.subarray(0, f.samplesPerChannel), at);
    at += f.samplesPerChannel;
  }
  return { samples, sampleRate };
}

const SILENCE_LEVEL = 300;

/** `pcm` without leading and trailing near-silence. */
export function trimSilence(pcm: Pcm): Pcm {
  const s = pcm.samples;
  let start = 0;
  while (start < s.length && Math.abs(s[start]!) < SILENCE_LEVEL) start++;
  let end = s.length;
  while (end > start && Math.abs(s[end - 1]!) < SILENCE_LEVEL) end--;
  return { samples: s.slice(start, end), sampleRate: pcm.sampleRate };
}
