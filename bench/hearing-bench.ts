/**
 * What a phone line does to hearing the caller, measured:
 *
 * 1. Recognition: call answers spoken by the four flite voices, through each line setting
 *    (offline, frame by frame as the caller line does), heard by pocketsphinx with and without
 *    hints for the question. Word accuracy, and captures: the answer parsed by taskline's own
 *    parsers, right / wrong / no match, against what the caller meant. One decode gives both
 *    figures: the recogniser always runs its free decode, and with hints the grammar's too.
 * 2. Silero VAD on the line with no caller speech (noise, babble, the agent's echo): how many
 *    seconds it calls speech; and with caller speech, how long after the words end it says the
 *    speech ended.
 *
 *   npx tsx bench/hearing-bench.ts [--quick] [--only recognition|vad]
 *   (JSON to stdout and bench/results/hearing[-part].json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { VADEventType } from '@livekit/agents';
import * as silero from '@livekit/agents-plugin-silero';
import { AudioFrame } from '@livekit/rtc-node';
import { ensureLogger } from '../src/core/log.js';
import { LINE_PRESETS } from '../src/scenarios/audio/line-presets.js';
import { LineProcessor } from '../src/scenarios/audio/phone-line.js';
import type { LineSpec } from '../src/scenarios/schema.js';
import { choice, digits, number, phone, yesNo } from '../src/tasks/parsers/index.js';
import { synthesize } from '../src/testing/espeak.js';
import { phraseWords } from '../src/testing/hint-grammar.js';
import { PocketsphinxRecognizer } from '../src/testing/pocketsphinx.js';
import type { RecognitionHints } from '../src/testing/recognizer.js';
import { DEFAULT_REAL_VOICES, speak, type Voice } from '../src/testing/voices.js';

const quick = process.argv.includes('--quick');
const only = process.argv.includes('--only')
  ? process.argv[process.argv.indexOf('--only') + 1]
  : undefined;

interface Question {
  kind: RecognitionHints['kind'];
  phrases: string[];
  parse: (text: string) => { kind: string; value?: unknown };
}

const YES_NO: Question = {
  kind: 'yesNo',
  phrases: [
    'yes',
    'no',
    'yeah',
    'yep',
    'nope',
    'sure',
    'okay',
    'yes please',
    'no thanks',
    'not now',
  ],
  parse: yesNo,
};
const SCORE: Question = {
  kind: 'number',
  phrases: Array.from({ length: 11 }, (_, i) => String(i)),
  parse: (t) => number(t, { min: 0, max: 10, integer: true }),
};
const PIN: Question = {
  kind: 'digits',
  phrases: [],
  parse: (t) => digits(t, { minLength: 4, maxLength: 4 }),
};
const PHONE: Question = {
  kind: 'phone',
  phrases: [],
  parse: (t) => phone(t, { defaultRegion: 'US' }),
};
const MENU_OPTIONS = [
  { value: 'balance', label: 'your balance', synonyms: ['balance'] },
  { value: 'lost_card', label: 'a lost or stolen card', synonyms: ['lost', 'stolen'] },
  { value: 'agent', label: 'an agent', synonyms: ['person', 'human', 'someone', 'representative'] },
];
const MENU: Question = {
  kind: 'choice',
  phrases: MENU_OPTIONS.flatMap((o) => [o.label, ...o.synonyms]),
  parse: (t) => choice(t, MENU_OPTIONS),
};

/** What the caller says, at which question, meaning what (undefined: no answer to it). */
const ANSWERS: Array<[string, Question, unknown]> = [
  ['yes', YES_NO, true],
  ['no', YES_NO, false],
  ['yes please', YES_NO, true],
  ['no thanks', YES_NO, false],
  ['yes, sure', YES_NO, true],
  ['okay', YES_NO, true],
  ['four', SCORE, 4],
  ['nine', SCORE, 9],
  ['seven', SCORE, 7],
  ['ten', SCORE, 10],
  ['four three two one', PIN, '4321'],
  ['nine eight seven six', PIN, '9876'],
  ['four one five, five five five, zero one nine nine', PHONE, '+14155550199'],
  ['balance', MENU, 'balance'],
  ['representative', MENU, 'agent'],
  ['I lost my wallet', YES_NO, undefined],
];

const LINES = quick ? ['clean', 'phone'] : ['clean', 'phone', 'noisy', 'babble', 'quiet', 'g711'];

/** The utterance as the caller line carries it: 300 ms of line either side, frame by frame. */
async function overLine(samples: Int16Array, spec: LineSpec, voice: Voice): Promise<Int16Array> {
  const line = await LineProcessor.create(spec, voice, 7);
  const pad = 4_800;
  const padded = new Int16Array(
    samples.length + 2 * pad + (160 - ((samples.length + 2 * pad) % 160)),
  );
  padded.set(samples, pad);
  const out = new Int16Array(padded.length);
  for (let at = 0; at < padded.length; at += 160) {
    out.set(line.process(padded.subarray(at, at + 160), undefined), at);
  }
  return out;
}

function wordErrors(said: string[], heard: string[]): number {
  let prev = Array.from({ length: heard.length + 1 }, (_, j) => j);
  for (let i = 1; i <= said.length; i++) {
    const row = [i];
    for (let j = 1; j <= heard.length; j++) {
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (said[i - 1] === heard[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return prev[heard.length]!;
}

interface Tally {
  words: number;
  errors: number;
  right: number;
  wrong: number;
  nomatch: number;
  wrongs: string[];
}
const tally = (): Tally => ({ words: 0, errors: 0, right: 0, wrong: 0, nomatch: 0, wrongs: [] });

function score(t: Tally, said: string, heard: string, question: Question, meant: unknown): void {
  const s = phraseWords(said);
  t.words += s.length;
  t.errors += wordErrors(s, phraseWords(heard));
  const parsed = question.parse(heard);
  if (parsed.kind !== 'match') t.nomatch++;
  else if (meant !== undefined && JSON.stringify(parsed.value) === JSON.stringify(meant)) t.right++;
  else {
    t.wrong++;
    t.wrongs.push(`"${said}" heard "${heard}" → ${JSON.stringify(parsed.value)}`);
  }
}

async function recognition() {
  // a generous bound: the figures are about what is heard, on a machine that may be busy
  const recognizer = await PocketsphinxRecognizer.start({ timeoutMs: 180_000 });
  const out: Record<string, { hints: Tally; noHints: Tally; ms: number[] }> = {};
  try {
    for (const lineName of LINES) {
      const spec = LINE_PRESETS[lineName]!;
      const row = { hints: tally(), noHints: tally(), ms: [] as number[] };
      for (const voice of quick ? DEFAULT_REAL_VOICES.slice(0, 2) : DEFAULT_REAL_VOICES) {
        for (const [said, question, meant] of ANSWERS) {
          const pcm = await speak(said, voice);
          const audio = { samples: await overLine(pcm.samples, spec, voice), sampleRate: 16_000 };
          let r: Awaited<ReturnType<typeof recognizer.recognize>>;
          try {
            r = await recognizer.recognize(audio, {
              ...(question.kind ? { kind: question.kind } : {}),
              phrases: question.phrases,
            });
          } catch (error) {
            // a decode that failed or ran out of time heard nothing
            process.stderr.write(`[hearing] ${lineName} "${said}": ${(error as Error).message}\n`);
            r = { text: '', source: 'language-model', ms: 30_000 };
          }
          const free = r.source === 'grammar' ? (r.alternative ?? r.text) : r.text;
          score(row.hints, said, r.text, question, meant);
          score(row.noHints, said, free, question, meant);
          row.ms.push(Math.round(r.ms));
        }
      }
      out[lineName] = row;
      process.stderr.write(
        `[hearing] ${lineName}: ${JSON.stringify({ withHints: summary(row.hints), withoutHints: summary(row.noHints) })}\n`,
      );
    }
  } finally {
    await recognizer.close();
  }
  return Object.fromEntries(
    Object.entries(out).map(([line, r]) => [
      line,
      {
        withHints: summary(r.hints),
        withoutHints: summary(r.noHints),
        decodeMsP50: r.ms.sort((a, b) => a - b)[Math.floor(r.ms.length / 2)],
      },
    ]),
  );
}

function summary(t: Tally) {
  return {
    wordAccuracy: Math.round((1 - t.errors / t.words) * 1000) / 10,
    captures: { right: t.right, wrong: t.wrong, noMatch: t.nomatch },
    wrong: t.wrongs,
  };
}

/** Seconds Silero calls speech in `samples`, and when its last speech ended (s). */
async function vadOn(
  vad: Awaited<ReturnType<typeof silero.VAD.load>>,
  samples: Int16Array,
): Promise<{ speechS: number; lastEndS?: number }> {
  const stream = vad.stream();
  for (let at = 0; at + 160 <= samples.length; at += 160) {
    stream.pushFrame(new AudioFrame(samples.slice(at, at + 160), 16_000, 1, 160));
  }
  // trailing silence so a pending segment can end
  for (let i = 0; i < 200; i++)
    stream.pushFrame(new AudioFrame(new Int16Array(160), 16_000, 1, 160));
  let speech = 0;
  let started: number | undefined;
  let lastEnd: number | undefined;
  const total = samples.length + 200 * 160;
  for (;;) {
    const r = await stream.next();
    if (r.done) break;
    const ev = r.value;
    if (ev.type === VADEventType.START_OF_SPEECH) started = ev.samplesIndex;
    if (ev.type === VADEventType.END_OF_SPEECH) {
      speech += ev.samplesIndex - (started ?? ev.samplesIndex);
      lastEnd = ev.samplesIndex / 16_000;
      started = undefined;
    }
    if (ev.type === VADEventType.INFERENCE_DONE && ev.samplesIndex >= total - 1_600) break;
  }
  stream.close();
  return {
    speechS: Math.round((speech / 16_000) * 100) / 100,
    ...(lastEnd !== undefined ? { lastEndS: lastEnd } : {}),
  };
}

async function vadFigures() {
  const vad = await silero.VAD.load();
  const caller: Voice = { engine: 'flite', name: 'slt' };
  const silence = new Int16Array(16_000 * 5);
  const agent = await synthesize(
    'Please enter your four digit PIN, or say the number one digit at a time.',
    {
      sampleRate: 16_000,
    },
  );
  const words = await speak('four one five, five five five, zero one nine nine', caller);
  const conditions: Record<string, LineSpec> = {
    'pink noise, 25 dB SNR': { noise: { kind: 'pink', snr_db: 25 } },
    'pink noise, 10 dB SNR': { noise: { kind: 'pink', snr_db: 10 } },
    'white noise, 15 dB SNR': { noise: { kind: 'white', snr_db: 15 } },
    'babble, 20 dB SNR': { noise: { kind: 'babble', snr_db: 20 } },
    'babble, 10 dB SNR': { noise: { kind: 'babble', snr_db: 10 } },
    'G.711 μ-law': { codec: 'mulaw' },
  };
  const noCaller: Record<string, unknown> = {};
  const withCaller: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(conditions)) {
    noCaller[name] = await vadOn(vad, await overLine(silence, spec, caller));
    const speech = new Int16Array(words.samples.length + 16_000 * 3);
    speech.set(words.samples, 0);
    const heard = await vadOn(vad, await overLine(speech, spec, caller));
    // how long after the words ended (0.3 s of line before them) speech was said to end
    const wordsEnd = 0.3 + words.samples.length / 16_000;
    withCaller[name] = {
      ...heard,
      endAfterWordsS:
        heard.lastEndS === undefined ? null : Math.round((heard.lastEndS - wordsEnd) * 100) / 100,
    };
  }
  for (const db of [-10, -24, -40]) {
    const echo = new Int16Array(agent.samples.length + 16_000);
    const g = 10 ** (db / 20);
    for (let i = 0; i < agent.samples.length; i++)
      echo[i + 1_920] = Math.round(agent.samples[i]! * g);
    noCaller[`agent echo at ${db} dB, 120 ms`] = await vadOn(vad, echo);
  }
  const clean = new Int16Array(words.samples.length + 16_000 * 3);
  clean.set(words.samples, 0);
  const base = await vadOn(vad, clean);
  withCaller['clean line'] = {
    ...base,
    endAfterWordsS:
      base.lastEndS === undefined
        ? null
        : Math.round((base.lastEndS - words.samples.length / 16_000) * 100) / 100,
  };
  return { speechSecondsWithoutCaller: noCaller, callerDigits: withCaller };
}

ensureLogger();
const result = {
  name: 'hearing',
  machine: { cores: (await import('node:os')).availableParallelism() },
  ...(only !== 'vad' ? { recognition: await recognition() } : {}),
  ...(only !== 'recognition' ? { vad: await vadFigures() } : {}),
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL(`./results/hearing${only ? `-${only}` : ''}.json`, import.meta.url),
  `${JSON.stringify(result, null, 2)}\n`,
);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
process.exit(0);
