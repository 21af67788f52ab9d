/**
 * One side of the soak bench, in a process of its own (so RSS is this side's alone):
 * `warmup` then `calls` sequential text-mode calls through upstream's real AgentSession
 * machinery in this one process, printing one JSON line of heap and RSS after the warm-up
 * and after every `every` calls (each after a full GC).
 *
 *   node --expose-gc --import tsx bench/soak-loop.ts <taskline|plain> <warmup> <calls> <every>
 */
import { fileURLToPath } from 'node:url';
import { initializeLogger, voice } from '@livekit/agents';
import { resolveScenarioModule, type ScenarioModule } from '../src/scenarios/call-parts.js';
import { parseScenario } from '../src/scenarios/load.js';
import { runScenarioOnce } from '../src/scenarios/run-call.js';
import { textMode } from '../src/scenarios/text-mode.js';
import { ScriptedLLM } from '../src/testing/scripted-llm.js';

initializeLogger({ pretty: false, level: 'silent' });

/** The survey example's call: three structured answers, a checkpoint after each step. */
const SURVEY = `turns:
  - say: "yes"
  - say: nine
  - say: "no"
expect:
  outcome: { status: completed, answers: { consent: true, score: 9, referral: false } }
`;

/** What the plain agent says, in order (the survey's questions and its goodbye). */
const PLAIN_LINES = [
  'From 0 to 10, how likely are you to recommend us?',
  'Would you like us to follow up?',
  'Thank you. Goodbye.',
];

class PlainAgent extends voice.Agent {
  constructor() {
    super({ instructions: 'You are a phone line. Keep every reply short.' });
  }

  override async onEnter(): Promise<void> {
    this.session.say('Do you have a minute for a short survey?');
  }
}

/** A plain upstream agent whose (scripted, in-process) model says the next line each turn. */
function plainCall(): ScenarioModule {
  const createCall = () => ({ agent: new PlainAgent(), result: () => undefined });
  return {
    module: { name: 'plain upstream', description: '', createCall },
    createCall,
    createModel: () => {
      let i = 0;
      return new ScriptedLLM({ respond: () => ({ say: PLAIN_LINES[i++] ?? 'Goodbye.' }) });
    },
    modelLabel: 'scripted, in process',
  };
}

const [side, warmupArg, callsArg, everyArg] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if ((side !== 'taskline' && side !== 'plain') || !gc) {
  throw new Error('usage: node --expose-gc --import tsx bench/soak-loop.ts <taskline|plain> …');
}
const warmup = Number(warmupArg);
const calls = Number(callsArg);
const every = Number(everyArg);
const file = fileURLToPath(new URL('../examples/survey/soak.scenario.yaml', import.meta.url));
const scenario = parseScenario(SURVEY, file);
const plain = side === 'plain';
const spec = plain ? { ...scenario, spec: { ...scenario.spec, expect: undefined } } : scenario;
const parts = plain ? plainCall() : await resolveScenarioModule(scenario);

const memory = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
};

const samples: Array<{ calls: number; rss: number; heapUsed: number }> = [];
const started = performance.now();
for (let i = 1; i <= warmup + calls; i++) {
  const run = await runScenarioOnce(spec, parts, textMode);
  if (!run.ok) {
    throw new Error(`call ${i} failed: ${run.failures.map((f) => f.message).join('; ')}`);
  }
  if (i === warmup || (i > warmup && (i - warmup) % every === 0)) {
    samples.push({ calls: i - warmup, ...memory() });
    // Progress on stderr, so a run cut short still shows its figures so far.
    process.stderr.write(`[soak ${side}] ${JSON.stringify(samples.at(-1))}\n`);
  }
}
const msPerCall = (performance.now() - started) / (warmup + calls);
process.stdout.write(`${JSON.stringify({ side, warmup, calls, msPerCall, samples })}\n`);
