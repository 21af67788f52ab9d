/**
 * The simulated caller's voices: Debian `flite` (kal16, slt, rms, awb — voices a recogniser
 * trained on real speech hears far better than espeak-ng: 79 % vs 9 % word accuracy with
 * pocketsphinx, measured) or espeak-ng. A voice is written `engine:name`, e.g. `flite:slt`
 * or `espeak:en-us`. Audio is 16-bit mono PCM, trimmed to the speech, cached per process.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TasklineError } from '../core/errors.js';
import { decodeWav, type Pcm, resample, synthesize, trimSilence } from './espeak.js';

/** A caller voice: a synthesiser and one of its voices. */
export interface Voice {
  engine: 'flite' | 'espeak';
  name: string;
}

/** flite's full-quality (16 kHz) voices shipped by Debian's `flite` package. */
export const FLITE_VOICES = ['kal16', 'slt', 'rms', 'awb'] as const;
/** The callers of a real-recogniser run: every flite voice, in turn. */
export const DEFAULT_REAL_VOICES: readonly Voice[] = FLITE_VOICES.map((name) => ({
  engine: 'flite',
  name,
}));
/** The oracle's caller voice (espeak-ng, as audio mode always used). */
export const ESPEAK_VOICE: Voice = { engine: 'espeak', name: 'en-us' };

const VOICE = /^(flite|espeak):([A-Za-z0-9_+-]+)$/;

/** Reads `flite:slt` / `espeak:en-us`; a bad spec is an `invalid_argument` error. */
export function parseVoice(spec: string): Voice {
  const m = VOICE.exec(spec.trim());
  if (!m) {
    throw new TasklineError(
      'invalid_argument',
      `"${spec}" is not a voice: write engine:name, e.g. flite:slt, flite:kal16, flite:rms, flite:awb or espeak:en-us`,
    );
  }
  const voice = { engine: m[1] as Voice['engine'], name: m[2]! };
  // flite falls back to its default voice, silently, for a name it does not know.
  if (voice.engine === 'flite' && !FLITE_NAMES.has(voice.name)) {
    throw new TasklineError(
      'invalid_argument',
      `flite has no voice "${voice.name}": use ${[...FLITE_NAMES].join(', ')} (kal is 8 kHz)`,
    );
  }
  return voice;
}

const FLITE_NAMES = new Set<string>([...FLITE_VOICES, 'kal']);

/** `flite:slt`. */
export function voiceLabel(voice: Voice): string {
  return `${voice.engine}:${voice.name}`;
}

const cache = new Map<string, Promise<Pcm>>();

/** Speaks `text` in `voice` at `sampleRate` (default 16 kHz), trimmed to the speech. */
export function speak(text: string, voice: Voice, sampleRate = 16_000): Promise<Pcm> {
  if (voice.engine === 'espeak') return synthesize(text, { voice: voice.name, sampleRate });
  const key = JSON.stringify([text, voice.name, sampleRate]);
  let pcm = cache.get(key);
  if (!pcm) {
    pcm = runFlite(text, voice.name).then((wav) =>
      trimSilence(resample(decodeWav(wav), sampleRate)),
    );
    pcm.catch(() => cache.delete(key));
    cache.set(key, pcm);
  }
  return pcm;
}

/** Why `voice` cannot speak here (a sentence with the fix), or undefined when it can. */
export async function voiceUnavailable(voice: Voice): Promise<string | undefined> {
  if (voice.engine === 'espeak') {
    const { espeakUnavailable } = await import('./espeak.js');
    return espeakUnavailable();
  }
  try {
    await runFlite('ok', voice.name);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * flite writes a WAV file (it cannot open /dev/stdout when Node's stdio is a socket pair),
 * so it speaks into a temporary file that is read and removed.
 */
async function runFlite(text: string, voice: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'taskline-flite-'));
  const file = join(dir, 'speech.wav');
  try {
    await fliteTo(file, text, voice);
    const wav = await readFile(file);
    if (wav.length < 44)
      throw new TasklineError('missing_dependency', `flite wrote no audio with voice ${voice}`);
    return wav;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function fliteTo(file: string, text: string, voice: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'flite',
      ['-voice', voice, '-t', text, '-o', file],
      { timeout: 30_000 },
      (error, _stdout, stderr) => {
        if (error) {
          const code = (error as NodeJS.ErrnoException | null)?.code;
          reject(
            new TasklineError(
              'missing_dependency',
              code === 'ENOENT'
                ? 'flite is not installed; install it with: apt-get install flite (scripts/speech-tools.sh)'
                : `flite could not speak with voice ${voice}: ${String(stderr).trim() || error.message}`,
            ),
          );
        } else resolve();
      },
    );
  });
}
