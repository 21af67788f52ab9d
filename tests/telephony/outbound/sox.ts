// Audio fixtures made at test time with sox (Debian `sox`; scripts/speech-tools.sh installs
// it): tones, noise, chords, a phone line's μ-law round trip, and a voicemail greeting
// (espeak-ng speech) followed by a beep and silence. Nothing binary is committed.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeWav, encodeWav, type Pcm, synthesize } from '../../../src/testing/espeak.js';

/** Why sox cannot run here, or undefined; under CI=true a missing sox fails instead. */
export async function soxMissing(): Promise<string | undefined> {
  const problem = await new Promise<string | undefined>((resolve) => {
    execFile('sox', ['--version'], { timeout: 10_000 }, (error) =>
      resolve(
        error ? `sox is not installed (apt-get install sox; scripts/speech-tools.sh)` : undefined,
      ),
    );
  });
  if (problem && process.env.CI === 'true') throw new Error(`CI=true and ${problem}`);
  if (problem) console.warn(`[skipped: needs sox] ${problem}`);
  return problem;
}

function run(args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'sox',
      args,
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 30_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

/** Runs sox with `args` (output to stdout as WAV) and decodes the result. */
export async function sox(args: string[]): Promise<Pcm> {
  return decodeWav(await run(args));
}

/** A generated signal: `sox -n -r RATE -b 16 -c 1 -t wav - synth SECONDS …effects`. */
export function synth(seconds: number, what: string[], rate = 16_000): Promise<Pcm> {
  return sox([
    '-n',
    '-r',
    String(rate),
    '-b',
    '16',
    '-c',
    '1',
    '-t',
    'wav',
    '-',
    'synth',
    String(seconds),
    ...what,
  ]);
}

/** `pcm` through a phone line: 8 kHz μ-law and back to 16-bit. */
export async function phoneLine(pcm: Pcm): Promise<Pcm> {
  const dir = mkdtempSync(join(tmpdir(), 'taskline-sox-'));
  try {
    const input = join(dir, 'in.wav');
    writeFileSync(input, encodeWav(pcm));
    const ulaw = join(dir, 'line.wav');
    await run([input, '-r', '8000', '-e', 'u-law', ulaw]);
    return await sox([ulaw, '-e', 'signed-integer', '-b', '16', '-t', 'wav', '-']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A voicemail recording at `rate`: the greeting spoken by espeak-ng, `gapS` of silence, a
 * `beepHz` tone for `beepS` (none when 0), then `tailS` of silence — joined by sox.
 */
export async function voicemailAudio(options: {
  greeting: string;
  beepHz?: number;
  beepS?: number;
  gapS?: number;
  tailS?: number;
  rate?: number;
}): Promise<Pcm> {
  const rate = options.rate ?? 16_000;
  const dir = mkdtempSync(join(tmpdir(), 'taskline-sox-'));
  try {
    const greeting = join(dir, 'greeting.wav');
    writeFileSync(greeting, encodeWav(await synthesize(options.greeting, { sampleRate: rate })));
    const parts = [greeting];
    const make = async (name: string, seconds: number, what: string[]) => {
      const path = join(dir, name);
      writeFileSync(path, encodeWav(await synth(seconds, what, rate)));
      parts.push(path);
    };
    await make('gap.wav', options.gapS ?? 0.6, ['sine', '1000', 'vol', '0']);
    if ((options.beepS ?? 0.4) > 0) {
      await make('beep.wav', options.beepS ?? 0.4, [
        'sine',
        String(options.beepHz ?? 1000),
        'vol',
        '0.5',
      ]);
    }
    await make('tail.wav', options.tailS ?? 3, ['sine', '1000', 'vol', '0']);
    return await sox([...parts, '-t', 'wav', '-']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Joins PCM pieces of one rate. */
export function concat(...pieces: Pcm[]): Pcm {
  const total = pieces.reduce((n, p) => n + p.samples.length, 0);
  const samples = new Int16Array(total);
  let at = 0;
  for (const p of pieces) {
    samples.set(p.samples, at);
    at += p.samples.length;
  }
  return { samples, sampleRate: pieces[0]!.sampleRate };
}
