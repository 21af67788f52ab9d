/**
 * Task-aware end of turn in audio mode (real Silero VAD, upstream's pipeline, espeak-ng
 * callers speaking in real time): callers who pause inside an answer are never cut off,
 * and what a caller adds after the agent started answering joins the same utterance, so a
 * value from a cut utterance is never kept.
 * Every capture publishes what it expects itself; the turn detector asks it.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { voice } from '@livekit/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome.js';
import { audioMode, audioUnavailable } from '../../src/scenarios/audio/mode.js';
import type { ScenarioModule } from '../../src/scenarios/call-parts.js';
import type { CallMode } from '../../src/scenarios/driver.js';
import { parseScenario } from '../../src/scenarios/load.js';
import { type RunReport, runScenarioOnce } from '../../src/scenarios/run-call.js';
import { number, phone, yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';

const missing = await audioUnavailable();
const here = fileURLToPath(new URL('.', import.meta.url));

const CAPTURES = {
  score: number({
    name: 'score',
    question: 'From 0 to 10, how was your visit?',
    min: 0,
    max: 10,
    integer: true,
  }),
  phone: phone({ name: 'phone', question: 'What number can we call you back on?' }),
  consent: yesNo({ name: 'consent', question: 'May we call you back?' }),
  approve: yesNo({ name: 'approve', question: 'Shall I block your card now?' }),
} as const;

type Step = keyof typeof CAPTURES;

/** One question after the other, each capture publishing its expectation while it listens. */
class Questions extends voice.Agent {
  readonly answers: Record<string, unknown> = {};
  readonly statuses: Record<string, string> = {};

  constructor(private readonly steps: Step[]) {
    super({ instructions: 'Ask the questions.' });
  }

  override async onEnter(): Promise<void> {
    for (const step of this.steps) {
      const outcome = (await CAPTURES[step].run()) as Outcome<unknown>;
      this.statuses[step] = outcome.status;
      if (outcome.status === 'ok') this.answers[step] = outcome.value;
      else return;
    }
    this.session.say('Thank you. Goodbye.');
  }
}

function partsFor(steps: Step[]): ScenarioModule {
  const createCall = () => {
    const agent = new Questions(steps);
    return { agent, result: () => ({ answers: agent.answers, statuses: agent.statuses }) };
  };
  return {
    module: { name: 'turns', description: '', createCall },
    createCall,
    // The answers here are all read without a model: any model call answers nothing.
    createModel: () => new ScriptedLLM(),
    modelLabel: 'none',
  };
}

async function call(mode: CallMode, steps: Step[], yaml: string): Promise<RunReport> {
  const scenario = parseScenario(yaml, join(here, 'turns.scenario.yaml'));
  return runScenarioOnce(scenario, partsFor(steps), mode);
}

function explain(run: RunReport): string {
  return [...run.failures.map((f) => f.message), ...run.transcript].join('\n');
}

describe.skipIf(missing)('task-aware end of turn, audio mode', () => {
  let mode: CallMode;
  beforeAll(async () => {
    mode = await audioMode();
  });
  afterAll(async () => {
    await mode?.close();
  });

  it('waits while a caller pauses inside a phone number', async () => {
    const run = await call(
      mode,
      ['phone'],
      `turns:
  - say: my number is four one five five five five zero one nine nine
    pause: [{ after: 6, for: 900ms }, { after: 9, for: 900ms }]
  - say: "yes"
expect:
  outcome: { answers: { phone: "+14155550199" }, statuses: { phone: ok } }
`,
    );
    expect(run.ok, explain(run)).toBe(true);
    // One caller utterance became one answer: the agent never spoke inside it.
    expect(run.turns[0]!.interruptions).toBe(0);
  });

  it('five… no, six: the correction joins the answer, 5 is never kept', async () => {
    const run = await call(
      mode,
      ['score'],
      `turns:
  - say: five no six
    pause: { after: 1, for: 700ms }
expect:
  outcome: { answers: { score: 6 } }
`,
    );
    expect(run.ok, explain(run)).toBe(true);
  });

  it('yes … but only after six is not a clear yes to an action', async () => {
    const run = await call(
      mode,
      ['approve'],
      `turns:
  - say: yes but only after six
    pause: { after: 1, for: 450ms }
  - silence: 1s
expect:
  never_said: Thank you. Goodbye.
`,
    );
    expect(run.ok, explain(run)).toBe(true);
    const result = (run.result ?? {}) as { answers?: Record<string, unknown> };
    expect(result.answers?.approve).toBeUndefined();
  });

  it('a plain yes is answered at once and kept', async () => {
    const run = await call(
      mode,
      ['consent', 'score'],
      `turns:
  - say: "yes"
  - say: seven
expect:
  outcome: { answers: { consent: true, score: 7 } }
`,
    );
    expect(run.ok, explain(run)).toBe(true);
  });
});
