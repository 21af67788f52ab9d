/**
 * Response latency as production measures it, in audio mode: end of the caller's speech →
 * first agent audio, through upstream's real pipeline (Silero VAD, endpointing, openai
 * STT/TTS against the local server, espeak-ng callers speaking in real time). Rows, side by
 * side in one run on the same audio:
 *
 * - `latency.structured`: structured answers (yes/no, 4 digits, a menu choice, a score)
 *   with taskline's task-aware end of turn vs the same call on upstream's default VAD and
 *   turn settings; and the answer itself (the first agent audio after the turn ended, after
 *   taskline's acknowledgement) beside it;
 * - `latency.model`: taskline's parser path vs a plain upstream agent whose model answers
 *   the same turns with a realistic delay (first token after 350 ms, then the rest);
 * - `latency/<example>`: the ivr-bank and survey examples vs a plain agent whose model
 *   answers at once (as before);
 * - a per-stage breakdown of the structured turns (VAD end of speech, STT final, end of
 *   turn, TTS first byte, first audio) from upstream's events and metrics.
 *
 *   npm run bench -- --only latency          (TASKLINE_BENCH_QUICK=1: one run per side)
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { audioMode, audioUnavailable } from '../src/scenarios/audio/mode.js';
import type { TurnStages } from '../src/scenarios/audio/stages.js';
import { resolveScenarioModule, type ScenarioModule } from '../src/scenarios/call-parts.js';
import type { CallMode } from '../src/scenarios/driver.js';
import { parseScenario } from '../src/scenarios/load.js';
import { percentile } from '../src/scenarios/report.js';
import { type RunReport, runScenarioOnce } from '../src/scenarios/run-call.js';
import { TURN_TIMING } from '../src/tasks/turn-detector.js';
import { startFakeOpenAI } from '../src/testing/openai-server.js';
import { plainCall, STRUCTURED_LINES, STRUCTURED_TURNS, structuredCall } from './latency-calls.js';
import type { BenchResult } from './result.js';

const examples = fileURLToPath(new URL('../examples/', import.meta.url));
/** The model's first token, for the realistic plain agent. */
const MODEL_FIRST_TOKEN_MS = 350;

/** The example calls measured: caller speech only, every answer on taskline's no-model path. */
const EXAMPLES = {
  'ivr-bank': {
    module: join(examples, 'ivr-bank'),
    yaml: `turns:
  - say: lost
  - say: "yes"
expect:
  outcome: { outcome: card_blocked }
  no_model_call_during: [main_menu, block_card]
`,
  },
  survey: {
    module: join(examples, 'survey'),
    yaml: `turns:
  - say: "yes"
  - say: nine
  - say: "no"
expect:
  outcome: { status: completed, answers: { consent: true, score: 9, referral: false } }
  no_model_call_during: [consent, score, referral]
`,
  },
} as const;

/** Latencies (ms) of the answered speech turns of `runs`. */
function speechLatencies(runs: RunReport[]): number[] {
  return runs
    .flatMap((r) => r.turns)
    .flatMap((t) => (t.input === 'speech' && t.latencyMs !== undefined ? [t.latencyMs] : []))
    .sort((a, b) => a - b);
}

/** A stage of the speech turns of `runs`, sorted. */
function stage(runs: RunReport[], key: keyof TurnStages): number[] {
  return runs
    .flatMap((r) => r.turns)
    .flatMap((t) => (t.input === 'speech' && t.stages?.[key] !== undefined ? [t.stages[key]!] : []))
    .sort((a, b) => a - b);
}

/** The first agent audio after the turn ended (the answer after any acknowledgement). */
function answerLatencies(runs: RunReport[]): number[] {
  return stage(runs, 'answerMs');
}

function row(
  name: string,
  metric: string,
  mine: number[],
  theirs: number[],
  note: string,
): BenchResult | undefined {
  if (!mine.length || !theirs.length) return undefined;
  const q = metric.endsWith('p95') ? 0.95 : 0.5;
  const value = percentile(mine, q);
  const baseline = percentile(theirs, q);
  return {
    name,
    metric,
    value: Math.round(value),
    unit: 'ms',
    baseline: Math.round(baseline),
    ratio: Number((value / baseline).toFixed(3)),
    note,
  };
}

/** The agent lines of a run, without the first (the greeting). */
function answersOf(run: RunReport): { greeting: string; answers: string[] } {
  const lines = run.transcript.filter((l) => l.startsWith('agent: ')).map((l) => l.slice(7));
  const [greeting = '', ...answers] = lines.map((l) => l.replace(/ \(interrupted\)$/, ''));
  return { greeting, answers };
}

async function runChecked(
  what: string,
  yaml: string,
  file: string,
  parts: ScenarioModule,
  mode: CallMode,
  check = true,
): Promise<RunReport> {
  const scenario = parseScenario(yaml, file);
  const spec = check ? scenario : { ...scenario, spec: { ...scenario.spec, expect: undefined } };
  const run = await runScenarioOnce(spec, parts, mode);
  if (check && !run.ok) {
    throw new Error(`${what}: the call failed: ${run.failures.map((f) => f.message).join('; ')}`);
  }
  return run;
}

/** A plain upstream agent's run of the same turns, its model answering after `delayMs`. */
async function plainRun(
  yaml: string,
  file: string,
  lines: { greeting: string; answers: string[] },
  mode: CallMode,
  delayMs: number,
): Promise<RunReport> {
  let i = 0;
  const server = await startFakeOpenAI(async () => {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { content: lines.answers[i++] ?? 'Goodbye.' };
  });
  try {
    return await runChecked(
      'plain',
      yaml,
      file,
      plainCall(lines.greeting, server.url),
      mode,
      false,
    );
  } finally {
    await server.close();
  }
}

/** Runs the latency comparisons; resolves no results (and says why) when audio mode cannot run. */
export async function runLatencyBench(options: { runs?: number } = {}): Promise<BenchResult[]> {
  const missing = await audioUnavailable();
  if (missing) {
    console.warn(`[latency bench skipped] ${missing}`);
    return [];
  }
  const runs = options.runs ?? (process.env.TASKLINE_BENCH_QUICK === '1' ? 1 : 3);
  const taskline = await audioMode();
  const upstream = await audioMode({ turnTaking: 'upstream' });
  const results: BenchResult[] = [];
  const push = (r: BenchResult | undefined) => r && results.push(r);
  const settings = `taskline: VAD silence ${TURN_TIMING.vadMinSilenceMs} ms, complete → "${TURN_TIMING.acknowledgement}" then the turn ends, incomplete ${TURN_TIMING.incompleteDelayMs} ms, else ${TURN_TIMING.unknownDelayMs} ms; upstream: its defaults (VAD 550 ms, auto turn detector)`;
  try {
    // Structured answers: the same call, the same audio, taskline's turns vs upstream's.
    const file = join(examples, 'bench-structured.scenario.yaml');
    const mine: RunReport[] = [];
    const theirs: RunReport[] = [];
    const plainSlow: RunReport[] = [];
    for (let i = 0; i < runs; i++) {
      const run = await runChecked(
        'structured (taskline)',
        STRUCTURED_TURNS,
        file,
        structuredCall(),
        taskline,
      );
      mine.push(run);
      theirs.push(
        await runChecked(
          'structured (upstream settings)',
          STRUCTURED_TURNS,
          file,
          structuredCall(),
          upstream,
        ),
      );
      plainSlow.push(
        await plainRun(
          STRUCTURED_TURNS,
          file,
          { greeting: STRUCTURED_LINES[0]!, answers: STRUCTURED_LINES.slice(1) },
          upstream,
          MODEL_FIRST_TOKEN_MS,
        ),
      );
    }
    const n = (r: RunReport[]) => speechLatencies(r).length;
    const base = `${n(mine)} vs ${n(theirs)} turns (yes/no, 4 digits, menu, score), ${runs} run(s); ${settings}`;
    for (const metric of [
      'end of caller speech → first agent audio, p50',
      'end of caller speech → first agent audio, p95',
    ] as const) {
      push(row('latency.structured', metric, speechLatencies(mine), speechLatencies(theirs), base));
    }
    push(
      row(
        'latency.structured',
        'end of caller speech → the answer (first audio after the turn ended), p50',
        answerLatencies(mine),
        answerLatencies(theirs),
        `taskline's acknowledgement keeps the turn open while it plays; the answer follows it. ${base}`,
      ),
    );
    for (const metric of [
      'end of caller speech → first agent audio, p50',
      'end of caller speech → first agent audio, p95',
    ] as const) {
      push(
        row(
          'latency.model',
          metric,
          speechLatencies(mine),
          speechLatencies(plainSlow),
          `taskline's parser path (no model) vs a plain upstream agent (upstream defaults) whose local model's first token comes after ${MODEL_FIRST_TOKEN_MS} ms, same turns; ${runs} run(s)`,
        ),
      );
    }
    push(
      row(
        'latency.model',
        'end of caller speech → the answer, p50',
        answerLatencies(mine),
        answerLatencies(plainSlow),
        `the answer itself (after taskline's acknowledgement) vs the plain agent's reply (model first token ${MODEL_FIRST_TOKEN_MS} ms)`,
      ),
    );
    // Where the time goes (p50 of each stage, ms after the end of the caller's speech).
    for (const [side, reports] of [
      ['taskline', mine],
      ['upstream settings', theirs],
      ['plain agent, model 350 ms', plainSlow],
    ] as const) {
      for (const key of [
        'vadMs',
        'sttMs',
        'turnEndMs',
        'ttsFirstByteMs',
        'firstAudioMs',
        'answerMs',
      ] as const) {
        const values = stage([...reports], key);
        if (!values.length) continue;
        results.push({
          name: `latency.stages/${side}`,
          metric: `${key.replace(/Ms$/, '')} p50`,
          value: Math.round(percentile(values, 0.5)),
          unit: 'ms',
          note: `${values.length} turns; ms after the end of caller speech (tts 1st byte: a duration), from upstream's turn events and metrics`,
        });
      }
    }

    // The examples vs a plain agent whose model answers at once (the earlier rows).
    for (const [name, call] of Object.entries(EXAMPLES)) {
      const exampleFile = join(call.module, `bench-${name}.scenario.yaml`);
      const parts = await resolveScenarioModule(parseScenario(call.yaml, exampleFile));
      const a: RunReport[] = [];
      const b: RunReport[] = [];
      for (let i = 0; i < runs; i++) {
        const run = await runChecked(name, call.yaml, exampleFile, parts, taskline);
        a.push(run);
        b.push(await plainRun(call.yaml, exampleFile, answersOf(run), upstream, 0));
      }
      for (const metric of [
        'end of caller speech → first agent audio, p50',
        'end of caller speech → first agent audio, p95',
      ] as const) {
        push(
          row(
            `latency/${name}`,
            metric,
            speechLatencies(a),
            speechLatencies(b),
            `${n(a)} taskline turns (no model) vs ${n(b)} plain upstream turns (model via local server, answering at once, upstream defaults); ${runs} run(s)`,
          ),
        );
      }
    }
  } finally {
    await taskline.close();
    await upstream.close();
  }
  return results;
}
