/**
 * Speech endpoints for the local OpenAI-compatible server (`startFakeOpenAI({ extraRoutes })`),
 * so upstream's real `openai.STT` and `openai.TTS` run offline:
 *
 * - `POST /v1/audio/speech` speaks the text with espeak-ng (real audio, `pcm` or `wav`);
 * - `POST /v1/audio/transcriptions` is an oracle, not a recogniser: it finds the segment's
 *   samples in the caller audio a test registered ({@link CallerSpeech}) and returns the
 *   words that audio was synthesised from — what the caller really said in that segment.
 *   Audio it does not recognise sample for sample transcribes as "" (never a guess).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeWav, encodeWav, type Pcm, resample, synthesize } from './espeak.js';

const SPEECH_PATH = '/v1/audio/speech';
const TRANSCRIPTION_PATH = '/v1/audio/transcriptions';
const MAX_AUDIO_BYTES = 64 * 1024 * 1024;
/** Samples compared per probe; exact 16-bit matches of this length do not happen by chance. */
const PROBE = 48;
const PROBES = 6;
const LOUD = 500;

interface Utterance {
  text: string;
  pcm: Pcm;
  heard: boolean;
}

/**
 * The caller audio a test played, with the words behind it: the transcription oracle.
 * Register each utterance before it is fed to the session.
 */
export class CallerSpeech {
  private utterances: Utterance[] = [];
  /** Every transcription answered, in order. */
  readonly transcripts: string[] = [];

  /** Remembers that `pcm` is the caller saying `text`. */
  register(text: string, pcm: Pcm): void {
    this.utterances.push({ text, pcm, heard: false });
  }

  /** Forgets every utterance (between calls). */
  reset(): void {
    this.utterances = [];
  }

  /**
   * The words of the utterances whose samples appear in `segment`, each returned once (a
   * pause that splits one utterance into two segments does not repeat its words); "" for
   * audio that is not registered caller speech.
   */
  transcribe(segment: Pcm): string {
    const probes = probesOf(segment.samples);
    const found = this.utterances.filter(
      (u) =>
        u.pcm.sampleRate === segment.sampleRate &&
        probes.some((p) => contains(u.pcm.samples, segment.samples, p)),
    );
    const words = found.filter((u) => !u.heard).map((u) => u.text);
    for (const u of found) u.heard = true;
    const text = words.join(' ');
    this.transcripts.push(text);
    return text;
  }
}

/** Options for {@link speechEndpoints}. */
export interface SpeechEndpointOptions {
  /**
   * The caller audio the transcription endpoint knows: a {@link CallerSpeech}, or any
   * oracle that turns a segment into the words behind it ("" when it does not know them).
   */
  callerSpeech: Pick<CallerSpeech, 'transcribe'>;
  /** espeak-ng voice of the agent (default "en-us"). */
  voice?: string;
  /** Agent speech rate, words per minute (default 175). */
  wordsPerMinute?: number;
}

/** The `extraRoutes` hook for `startFakeOpenAI` serving the two speech endpoints. */
export function speechEndpoints(options: SpeechEndpointOptions) {
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (path !== SPEECH_PATH && path !== TRANSCRIPTION_PATH) return false;
    if (req.method !== 'POST') {
      sendError(res, 405, 'method_not_allowed', `Use POST for ${path}.`);
      return true;
    }
    let body: Buffer;
    try {
      body = await readBytes(req);
    } catch (error) {
      sendError(res, 413, 'body_too_large', (error as Error).message);
      return true;
    }
    try {
      if (path === SPEECH_PATH) await speak(body, res, options);
      else await transcribe(req, body, res, options.callerSpeech);
    } catch (error) {
      if (!res.headersSent) sendError(res, 400, 'invalid_request', (error as Error).message);
      else res.destroy();
    }
    return true;
  };
}

async function speak(body: Buffer, res: ServerResponse, options: SpeechEndpointOptions) {
  const request = JSON.parse(body.toString('utf8')) as {
    input?: unknown;
    response_format?: unknown;
  };
  if (typeof request.input !== 'string' || !request.input.trim()) {
    return sendError(res, 400, 'invalid_request', "'input' must be a non-empty string.");
  }
  const format = request.response_format ?? 'mp3';
  if (format !== 'pcm' && format !== 'wav') {
    return sendError(
      res,
      400,
      'unsupported_format',
      `response_format ${String(format)} is not served here: use pcm (24 kHz, 16-bit) or wav.`,
    );
  }
  const pcm = await synthesize(request.input, {
    sampleRate: 24_000,
    voice: options.voice ?? 'en-us',
    wordsPerMinute: options.wordsPerMinute ?? 175,
  });
  const bytes =
    format === 'wav'
      ? encodeWav(pcm)
      : Buffer.from(pcm.samples.buffer, pcm.samples.byteOffset, pcm.samples.byteLength);
  res.writeHead(200, {
    'content-type': format === 'wav' ? 'audio/wav' : 'audio/pcm',
    'content-length': bytes.length,
  });
  res.end(bytes);
}

async function transcribe(
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
  callerSpeech: Pick<CallerSpeech, 'transcribe'>,
) {
  const form = await new Request('http://local/', {
    method: 'POST',
    headers: { 'content-type': req.headers['content-type'] ?? '' },
    body,
  }).formData();
  const file = form.get('file');
  if (!file || typeof file === 'string') {
    return sendError(res, 400, 'invalid_request', "'file' must be an uploaded audio file.");
  }
  const wav = decodeWav(Buffer.from(await file.arrayBuffer()));
  const text = callerSpeech.transcribe(wav.sampleRate === 16_000 ? wav : resample(wav, 16_000));
  const format = form.get('response_format') ?? 'json';
  if (format === 'text') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(text);
    return;
  }
  const json = JSON.stringify(
    format === 'verbose_json'
      ? { text, language: 'english', duration: wav.samples.length / wav.sampleRate, segments: [] }
      : { text },
  );
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(json);
}

/** Start offsets of up to PROBES loud windows spread over the segment. */
function probesOf(samples: Int16Array): number[] {
  const loud: number[] = [];
  for (let i = 0; i + PROBE <= samples.length; i += PROBE) {
    if (Math.abs(samples[i]!) >= LOUD) loud.push(i);
  }
  if (loud.length <= PROBES) return loud;
  const step = loud.length / PROBES;
  return Array.from({ length: PROBES }, (_, k) => loud[Math.floor(k * step)]!);
}

/** True when `haystack` holds `needle[at .. at+PROBE)` at some offset. */
function contains(haystack: Int16Array, needle: Int16Array, at: number): boolean {
  const first = needle[at]!;
  const last = haystack.length - PROBE;
  outer: for (let i = 0; i <= last; i++) {
    if (haystack[i] !== first) continue;
    for (let k = 1; k < PROBE; k++) if (haystack[i + k] !== needle[at + k]) continue outer;
    return true;
  }
  return false;
}

function readBytes(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_AUDIO_BYTES) {
        reject(new Error(`Request body over ${MAX_AUDIO_BYTES} bytes.`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const text = JSON.stringify({
    error: { message, type: 'invalid_request_error', param: null, code },
  });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
