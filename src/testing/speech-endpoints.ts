/**
 * Speech endpoints for the local OpenAI-compatible server (`startFakeOpenAI({ extraRoutes })`),
 * so upstream's real `openai.STT` and `openai.TTS` run offline:
 *
 * - `POST /v1/audio/speech` speaks the text with espeak-ng (real audio, `pcm` or `wav`);
 * - `POST /v1/audio/transcriptions` hands the segment to a {@link Recognizer}: by default the
 *   oracle ({@link CallerSpeech}), which finds the segment's samples in the caller audio a
 *   test registered and returns the words that audio was synthesised from (audio it does
 *   not recognise sample for sample transcribes as "", never a guess); or a real recogniser
 *   ({@link PocketsphinxRecognizer}). A `prompt` made by taskline's `transcriptionPrompt()`
 *   (hints per question) reaches the recogniser as {@link RecognitionHints}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseTranscriptionPrompt } from '../core/recognizer-hints.js';
import { decodeWav, encodeWav, type Pcm, resample, synthesize } from './espeak.js';
import type { Recognition, RecognitionHints, Recognizer } from './recognizer.js';

/**
 * `/v1/audio/speech` and `/v1/audio/transcriptions`, optionally under `/v1/calls/{id}/`: a
 * client pointed at `…/v1/calls/{id}` has its transcriptions reported with that call id.
 */
const ROUTE = /^\/v1(?:\/calls\/([A-Za-z0-9_.:-]{1,128}))?\/audio\/(speech|transcriptions)$/;
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
export class CallerSpeech implements Recognizer {
  readonly name = 'oracle';
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

  /** {@link transcribe} as a {@link Recognizer} (hints change nothing: the oracle knows). */
  async recognize(audio: Pcm): Promise<Recognition> {
    const started = performance.now();
    const text = this.transcribe(audio.sampleRate === 16_000 ? audio : resample(audio, 16_000));
    return { text, source: 'oracle', ms: performance.now() - started };
  }

  async close(): Promise<void> {}
}

/** One transcription the endpoint answered (for reports: what the agent heard). */
export interface TranscriptionEvent {
  /** The call id of the request path (`/v1/calls/{id}/audio/transcriptions`), if any. */
  call?: string;
  /** When the request arrived (performance.now()): the end of the audio segment, give or take. */
  receivedAt: number;
  /** Length of the audio segment, ms. */
  audioMs: number;
  /** Hints the request carried (from its prompt), if any. */
  hints?: RecognitionHints;
  recognition: Recognition;
}

/** Options for {@link speechEndpoints}. */
export interface SpeechEndpointOptions {
  /** The caller audio the transcription oracle knows (used when `recognizer` is not given). */
  callerSpeech?: CallerSpeech;
  /** Who transcribes: a real recogniser, or the oracle (default: `callerSpeech`). */
  recognizer?: Recognizer;
  /** Called after each transcription with what was heard. */
  onTranscription?: (event: TranscriptionEvent) => void;
  /** Called when a transcription request arrives, with its call id (see {@link TranscriptionEvent}). */
  onTranscriptionStart?: (call: string | undefined) => void;
  /** espeak-ng voice of the agent (default "en-us"). */
  voice?: string;
  /** Agent speech rate, words per minute (default 175). */
  wordsPerMinute?: number;
}

/** The `extraRoutes` hook for `startFakeOpenAI` serving the two speech endpoints. */
export function speechEndpoints(options: SpeechEndpointOptions) {
  const recognizer = options.recognizer ?? options.callerSpeech;
  if (!recognizer) throw new TypeError('speechEndpoints needs a recognizer or callerSpeech');
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    const route = ROUTE.exec(path);
    if (!route) return false;
    const receivedAt = performance.now();
    const call = route[1];
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
      if (route[2] === 'speech') await speak(body, res, options);
      else {
        options.onTranscriptionStart?.(call);
        let answered = false;
        try {
          await transcribe(req, body, res, recognizer, (event) => {
            answered = true;
            options.onTranscription?.({ ...(call ? { call } : {}), receivedAt, ...event });
          });
        } finally {
          // every start is paired with an end: a failed request reports an empty transcription
          if (!answered) {
            options.onTranscription?.({
              ...(call ? { call } : {}),
              receivedAt,
              audioMs: 0,
              recognition: { text: '', source: 'language-model', ms: 0 },
            });
          }
        }
      }
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
  recognizer: Recognizer,
  onTranscription: (event: Omit<TranscriptionEvent, 'call' | 'receivedAt'>) => void,
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
  const prompt = form.get('prompt');
  const hints = typeof prompt === 'string' ? parseTranscriptionPrompt(prompt) : undefined;
  let recognition: Recognition;
  try {
    recognition = await recognizer.recognize(wav, hints);
  } catch (error) {
    // A recogniser that failed heard nothing: a server error, never an empty transcript.
    return sendError(res, 500, 'recognizer_failed', (error as Error).message);
  }
  onTranscription({
    audioMs: (wav.samples.length / wav.sampleRate) * 1000,
    ...(hints ? { hints } : {}),
    recognition,
  });
  const text = recognition.text;
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
