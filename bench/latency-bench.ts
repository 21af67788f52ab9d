/**
 * Response latency in audio mode: end of the caller's speech → first agent audio, through
 * upstream's real pipeline (Silero VAD, endpointing, openai STT/TTS against the local
 * server with espeak-ng audio). taskline's ivr-bank and survey answer on the no-model path
 * (menu synonyms, parsers); the baseline is a plain upstream agent doing the same turns
 * through the model, the local server answering at once with the lines taskline said.
 * Both run in the same process, one after the other, with the same audio timing.
 *
 *   npm run bench -- --only latency          (TASKLINE_BENCH_QUICK=1: one run per side)
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { audioMode, audioUnavailable } from '../src/scenarios/audio/mode.js';
import { resolveScenarioModule, type ScenarioModule } from '../src/scenarios/call-parts.js';
import { parseScenario } from '../src/scenarios/load.js';
import { percentile } from '../src/scenarios/report.js';
import { type RunReport, runScenarioOnce } from '../src/scenarios/run-call.js';
import { startFakeOpenAI } from '../src/testing/openai-server.js';
import type { BenchResult } from './result.js';

const examples = fileURLToPath(new URL('../examples/', import.meta.url));

/** The calls measured: caller speech only, every answer on taskline's no-model path. */
const CALLS = {
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

class PlainAgent extends voice.Agent {
  constructor(private readonly greeting: string) {
    super({ instructions: 'You are a phone line. Keep every reply short.' });
  }

  override async onEnter(): Promise<void> {
    this.session.say(this.greeting);
  }
}

/** Latencies (ms) of the answered speech turns of `runs`. */
function speechLatencies(runs: RunReport[]): number[] {
  return runs
    .flatMap((r) => r.turns)
    .flatMap((t) => (t.input === 'speech' && t.latencyMs !== undefined ? [t.latencyMs] : []));
}

/** The plain-upstream twin of a taskline call: same greeting, the model says taskline's lines. */
async function baselineParts(
  taskline: RunReport,
): Promise<{ parts: ScenarioModule; close: () => Promise<void> }> {
  const agentLines = taskline.transcript
    .filter((l) => l.startsWith('agent: '))
    .map((l) => l.slice(7));
  const [greeting = '', ...answers] = agentLines;
  const server = await startFakeOpenAI(answers.map((content) => ({ content })));
  const parts: ScenarioModule = {
    module: {
      name: 'plain upstream',
      description: '',
      createCall: () => ({ agent: new PlainAgent(greeting), result: () => undefined }),
    },
    createCall: () => ({ agent: new PlainAgent(greeting), result: () => undefined }),
    createModel: () => new openai.LLM({ model: 'local', baseURL: server.url, apiKey: 'local' }),
    modelLabel: 'openai.LLM → local server',
  };
  return { parts, close: () => server.close() };
}

/** Runs the latency comparison; resolves no results (and says why) when audio mode cannot run. */
export async function runLatencyBench(options: { runs?: number } = {}): Promise<BenchResult[]> {
  const missing = await audioUnavailable();
  if (missing) {
    console.warn(`[latency bench skipped] ${missing}`);
    return [];
  }
  const runs = options.runs ?? (process.env.TASKLINE_BENCH_QUICK === '1' ? 1 : 3);
  const mode = await audioMode();
  const results: BenchResult[] = [];
  try {
    for (const [name, call] of Object.entries(CALLS)) {
      const scenario = parseScenario(call.yaml, join(call.module, `bench-${name}.scenario.yaml`));
      const parts = await resolveScenarioModule(scenario);
      const mine: RunReport[] = [];
      const plain: RunReport[] = [];
      for (let i = 0; i < runs; i++) {
        const run = await runScenarioOnce(scenario, parts, mode);
        if (!run.ok)
          throw new Error(
            `${name}: the taskline call failed: ${run.failures.map((f) => f.message).join('; ')}`,
          );
        mine.push(run);
        const baseline = await baselineParts(run);
        try {
          const plainScenario = { ...scenario, spec: { ...scenario.spec, expect: undefined } };
          plain.push(await runScenarioOnce(plainScenario, baseline.parts, mode));
        } finally {
          await baseline.close();
        }
      }
      const a = speechLatencies(mine).sort((x, y) => x - y);
      const b = speechLatencies(plain).sort((x, y) => x - y);
      for (const [metric, q] of [
        ['p50', 0.5],
        ['p95', 0.95],
      ] as const) {
        const value = percentile(a, q);
        const baseline = percentile(b, q);
        results.push({
          name: `latency/${name}`,
          metric: `end of caller speech → first agent audio, ${metric}`,
          value: Math.round(value),
          unit: 'ms',
          baseline: Math.round(baseline),
          ratio: Number((value / baseline).toFixed(3)),
          note: `${a.length} taskline turns (no model) vs ${b.length} plain upstream turns (model via local server); audio mode, ${runs} run(s) each`,
        });
      }
    }
  } finally {
    await mode.close();
  }
  return results;
}
