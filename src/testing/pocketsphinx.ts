/**
 * A real speech recogniser for tests and audio mode: Debian's pocketsphinx (US English
 * acoustic model, 130k-word language model) in one warm Python process, so an utterance costs
 * its decoding only (the model takes ~1 s to load; a `pocketsphinx_continuous` run per
 * utterance paid 0.4–0.7 s of it each time). With hints for a closed answer (digits, yes/no,
 * a menu) it also decodes against a grammar of the expected phrases and keeps the grammar's
 * words only where the free decode heard the same sounds (see hint-grammar.ts).
 *
 * Needs `apt-get install pocketsphinx-en-us python3-pocketsphinx` (scripts/speech-tools.sh).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { TasklineError } from '../core/errors.js';
import { type Pcm, resample } from './espeak.js';
import {
  agreement,
  grammarPhrases,
  jsgfOf,
  type PhonedWord,
  trustGrammar,
  wantsGrammar,
} from './hint-grammar.js';
import { POCKETSPHINX_WORKER } from './pocketsphinx-worker.js';
import type { Recognition, RecognitionHints, Recognizer } from './recognizer.js';

/** Where Debian's `pocketsphinx-en-us` puts the US English model. */
export const DEBIAN_EN_US_MODEL = '/usr/share/pocketsphinx/model/en-us';

/** Options for {@link PocketsphinxRecognizer.start}. */
export interface PocketsphinxOptions {
  /** Python 3 with Debian's pocketsphinx bindings (default /usr/bin/python3, else python3). */
  python?: string;
  /** Model folder holding `en-us/`, `en-us.lm.bin` and `cmudict-en-us.dict`. */
  model?: string;
  /** Longest one utterance may take to decode before the worker is restarted (default 30 s). */
  timeoutMs?: number;
  /** Longest the model may take to load (default 60 s). */
  startTimeoutMs?: number;
  /** Utterances waiting at most (default 16); more are refused with `limit_exceeded`. */
  maxQueued?: number;
  /** Hint grammars kept loaded before the decoder is rebuilt (default 64). */
  maxGrammars?: number;
}

type WireWord = [
  word: string,
  startFrame: number,
  endFrame: number,
  posterior: number,
  phones: string,
];
interface WireDecode {
  text: string;
  score: number | null;
  words: WireWord[];
}
interface WireReply {
  id?: number;
  error?: string;
  ready?: boolean;
  loadMs?: number;
  frames?: number;
  lm?: WireDecode;
  grammar?: WireDecode | null;
  phones?: Record<string, string | null>;
}

interface Pending {
  resolve: (reply: WireReply) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const SAMPLE_RATE = 16_000;

function defaultPython(): string {
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

/**
 * Why pocketsphinx cannot run here (one sentence with the fix), or undefined when it can.
 */
export async function pocketsphinxUnavailable(
  options: Pick<PocketsphinxOptions, 'python' | 'model'> = {},
): Promise<string | undefined> {
  const model = options.model ?? DEBIAN_EN_US_MODEL;
  if (!existsSync(`${model}/en-us.lm.bin`)) {
    return `the pocketsphinx US English model is not at ${model}; install it with: apt-get install pocketsphinx-en-us (scripts/speech-tools.sh)`;
  }
  const python = options.python ?? defaultPython();
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', 'from pocketsphinx import pocketsphinx'],
      { timeout: 20_000 },
      (error) =>
        resolve(
          error
            ? `${python} cannot load the pocketsphinx bindings (${(error as NodeJS.ErrnoException).code ?? error.message.split('\n')[0]}); install them with: apt-get install python3-pocketsphinx (scripts/speech-tools.sh)`
            : undefined,
        ),
    );
  });
}

/** The pocketsphinx recogniser (one warm worker process; utterances decoded in order). */
export class PocketsphinxRecognizer implements Recognizer {
  readonly name = 'pocketsphinx';
  /** Milliseconds the worker took to load its model. */
  loadMs = 0;
  private child: ChildProcess | undefined;
  private starting: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** Requests accepted and not yet answered (counted before the worker is even ready). */
  private inFlight = 0;
  private closed = false;
  private readonly phones = new Map<string, string[] | null>();
  private readonly options: Required<PocketsphinxOptions>;

  private constructor(options: PocketsphinxOptions) {
    this.options = {
      python: options.python ?? defaultPython(),
      model: options.model ?? DEBIAN_EN_US_MODEL,
      timeoutMs: options.timeoutMs ?? 30_000,
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
      maxQueued: options.maxQueued ?? 16,
      maxGrammars: options.maxGrammars ?? 64,
    };
  }

  /** Starts the worker and waits until its model is loaded. */
  static async start(options: PocketsphinxOptions = {}): Promise<PocketsphinxRecognizer> {
    const missing = await pocketsphinxUnavailable(options);
    if (missing) throw new TasklineError('missing_dependency', missing);
    const recognizer = new PocketsphinxRecognizer(options);
    await recognizer.ensureWorker();
    return recognizer;
  }

  async recognize(audio: Pcm, hints?: RecognitionHints): Promise<Recognition> {
    const started = performance.now();
    const pcm = audio.sampleRate === SAMPLE_RATE ? audio : resample(audio, SAMPLE_RATE);
    const grammar = hints && wantsGrammar(hints) ? await this.grammarFor(hints) : undefined;
    const reply = await this.request({
      op: 'recognize',
      audio: Buffer.from(
        pcm.samples.buffer,
        pcm.samples.byteOffset,
        pcm.samples.byteLength,
      ).toString('base64'),
      grammar: grammar ?? null,
    });
    const free = reply.lm ?? { text: '', score: null, words: [] };
    const ms = performance.now() - started;
    const constrained = reply.grammar;
    if (!constrained?.text) {
      return { text: free.text, source: 'language-model', ms };
    }
    const a = agreement(phoned(constrained.words), phoned(free.words));
    const confidence = Math.round(a.score * 100) / 100;
    if (trustGrammar(a)) {
      return {
        text: constrained.text,
        confidence,
        source: 'grammar',
        ...(free.text !== constrained.text ? { alternative: free.text } : {}),
        ms,
      };
    }
    return {
      text: free.text,
      confidence,
      source: 'language-model',
      alternative: constrained.text,
      ms,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    this.failAll(new TasklineError('cancelled', 'the recogniser was closed'));
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin?.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      await exited;
      clearTimeout(killer);
    }
  }

  /** The hint grammar for `hints`, keeping only phrases whose every word is in the dictionary. */
  private async grammarFor(
    hints: RecognitionHints,
  ): Promise<{ name: string; jsgf: string } | undefined> {
    const phrases = grammarPhrases(hints);
    const unknown = [...new Set(phrases.flat())].filter((w) => !this.phones.has(w));
    if (unknown.length) {
      const reply = await this.request({ op: 'lookup', words: unknown });
      for (const w of unknown) this.phones.set(w, reply.phones?.[w]?.split(' ') ?? null);
    }
    const known = phrases.filter((p) => p.every((w) => this.phones.get(w)));
    return known.length ? jsgfOf(known) : undefined;
  }

  private async request(body: Record<string, unknown>): Promise<WireReply> {
    if (this.closed) throw new TasklineError('session_closed', 'the recogniser was closed');
    if (this.inFlight >= this.options.maxQueued) {
      throw new TasklineError(
        'limit_exceeded',
        `the recogniser already has ${this.inFlight} requests waiting (maxQueued ${this.options.maxQueued})`,
      );
    }
    this.inFlight += 1;
    try {
      return await this.send(body);
    } finally {
      this.inFlight -= 1;
    }
  }

  private async send(body: Record<string, unknown>): Promise<WireReply> {
    await this.ensureWorker();
    const child = this.child!;
    const id = this.nextId++;
    const reply = await new Promise<WireReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new TasklineError(
            'timeout',
            `pocketsphinx took over ${this.options.timeoutMs} ms on one utterance; its worker was restarted`,
          ),
        );
        this.restart(child);
      }, this.options.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      child.stdin!.write(`${JSON.stringify({ ...body, id })}\n`);
    });
    if (reply.error) {
      throw new TasklineError('call_failed', `pocketsphinx could not decode: ${reply.error}`);
    }
    return reply;
  }

  private ensureWorker(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      return this.starting ?? Promise.resolve();
    }
    this.starting = this.spawnWorker().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private spawnWorker(): Promise<void> {
    const { python, model, maxGrammars, startTimeoutMs } = this.options;
    const child = spawn(python, ['-u', '-c', POCKETSPHINX_WORKER, model, String(maxGrammars)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      // swig prints leak notices at exit; keep the tail for error messages only
      stderr = (stderr + chunk).slice(-2_000);
    });
    child.stdin!.on('error', () => {
      // the worker died: its exit handler fails what was waiting
    });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new TasklineError(
            'timeout',
            `pocketsphinx did not load its model within ${startTimeoutMs} ms`,
          ),
        );
      }, startTimeoutMs);
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        let reply: WireReply;
        try {
          reply = JSON.parse(line) as WireReply;
        } catch {
          return;
        }
        if (reply.ready) {
          clearTimeout(timer);
          this.loadMs = reply.loadMs ?? 0;
          resolve();
          return;
        }
        const waiting = reply.id === undefined ? undefined : this.pending.get(reply.id);
        if (!waiting) return;
        this.pending.delete(reply.id!);
        clearTimeout(waiting.timer);
        waiting.resolve(reply);
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new TasklineError('missing_dependency', `cannot run ${python}: ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        const why = `the pocketsphinx worker exited (${signal ?? `code ${code}`})${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`;
        reject(new TasklineError('call_failed', why));
        if (this.child === child) {
          this.child = undefined;
          this.failAll(new TasklineError('call_failed', why));
        }
      });
    });
  }

  private restart(child: ChildProcess): void {
    if (this.child === child) this.child = undefined;
    child.kill('SIGKILL');
  }

  private failAll(error: Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(error);
      this.pending.delete(id);
    }
  }
}

function phoned(words: readonly WireWord[]): PhonedWord[] {
  return words.map(([word, , , , phones]) => ({ word, phones: phones ? phones.split(' ') : [] }));
}
