import { pathToFileURL } from 'node:url';
import { llm, voice } from '@livekit/agents';
import { z } from 'zod';
import { defineTask, type TaskDefinition } from '../src/tasks/define.js';
import { email } from '../src/tasks/prebuilt.js';
import { ScriptedLLM, type ScriptStep } from '../src/testing/scripted-llm.js';
import { argNumber, compareTimings, interleave, type Sample, stopwatch } from './interleave.js';
import type { BenchResult } from './result.js';

/** Sizes of the capture benchmark. */
export interface TasksBenchOptions {
  /** Captures per session (default 10). */
  captures?: number;
  /** Timed rounds; the median is reported (default 15). */
  runs?: number;
  /** Untimed warm-up rounds (default 2). */
  warmup?: number;
}

const PROMPT = 'What is your email address?';
const INSTRUCTIONS = 'Get the caller email address.';
const VALUE = 'john@example.com';
/** The caller line of the model path: nothing a parser resolves, so the model submits. */
const VAGUE = 'the one I always use';
/** The caller line of the parser path: the email parser resolves it with no model call. */
const SPOKEN = 'john at example dot com';

/** The parent agent: its `capture` tool awaits one capture and keeps what came back. */
class Desk extends voice.Agent {
  readonly results: unknown[] = [];

  constructor(capture: () => Promise<unknown>) {
    super({
      id: 'desk',
      instructions: 'Front desk.',
      tools: {
        capture: llm.tool({
          description: 'Capture the caller email.',
          execute: async () => {
            this.results.push(await capture());
            return 'done';
          },
        }),
      },
    });
  }
}

/** The baseline: what a LiveKit user writes by hand today for the same capture. */
class HandEmailTask extends voice.AgentTask<string> {
  constructor() {
    super({
      id: 'email',
      instructions: INSTRUCTIONS,
      tools: {
        submit: llm.tool({
          description: "Submit the caller's answer (email) once you have it.",
          parameters: z.object({ email: z.string() }),
          execute: async ({ email }) => {
            this.complete(email);
          },
        }),
      },
    });
  }

  override async onEnter(): Promise<void> {
    this.session.say(PROMPT);
  }
}

/** The same capture as a typed task: `Outcome<{ email: string }>`. */
const typedEmail = defineTask({
  name: 'email',
  instructions: INSTRUCTIONS,
  prompt: PROMPT,
  schema: z.object({ email: z.string() }),
});

/** The prebuilt email task, answered by its parser (confirmation off, like the others). */
const prebuiltEmail: TaskDefinition<string> = email({ question: PROMPT, confirm: 'never' });

/** The model's side of every capture, keyed by the active agent: no prompt text involved. */
function respond(request: { agentId: string; lastToolOutput?: { name: string } }): ScriptStep {
  if (request.agentId === 'email') {
    return { toolCalls: [{ name: 'submit', args: { email: VALUE } }] };
  }
  if (request.lastToolOutput?.name === 'capture') return { say: 'Thanks.' };
  return { toolCalls: [{ name: 'capture' }] };
}

interface Check {
  results: unknown[];
  modelCallsInTask: number;
}

/**
 * One session doing `captures` captures back to back, driven with plain `session.run`
 * (no testing-kit caller, so only the task differs). Returns ms per capture.
 */
async function captureTrial(
  captures: number,
  capture: () => Promise<unknown>,
  answer: string,
  checks: Check[],
): Promise<Sample> {
  const model = new ScriptedLLM({ respond });
  const session = new voice.AgentSession({ llm: model });
  model.bind(session);
  const desk = new Desk(capture);
  await session.start({ agent: desk });
  const watch = stopwatch();
  for (let i = 0; i < captures; i++) {
    await session.run({ userInput: 'I want to update my email' }).wait();
    await session.run({ userInput: answer }).wait();
  }
  const time = watch.stop(captures);
  checks.push({ results: desk.results, modelCallsInTask: model.requestsFor('email').length });
  return { ...time, cleanup: () => session.close() };
}

function verify(checks: Check[], expected: unknown, modelCalls: number): string[] {
  const problems = new Set<string>();
  for (const c of checks) {
    for (const r of c.results) {
      if (JSON.stringify(r) !== JSON.stringify(expected)) {
        problems.add(`MISMATCH: got ${JSON.stringify(r)}`);
      }
    }
    if (c.modelCallsInTask !== modelCalls * c.results.length) {
      problems.add(`MISMATCH: ${c.modelCallsInTask} model calls in the task`);
    }
  }
  return [...problems];
}

/**
 * A typed task (defineTask) vs a hand-written upstream AgentTask doing the same scripted
 * capture — the parent's tool starts the task, the model calls submit, the task completes
 * and the value reaches the tool — timed per capture, interleaved in one process. Also the
 * prebuilt email task answered by its parser (no model call in the task).
 */
export async function runTasksBench(opts: TasksBenchOptions = {}): Promise<BenchResult[]> {
  const captures = opts.captures ?? 10;
  const runs = opts.runs ?? 15;
  const warmup = opts.warmup ?? 2;
  const checks = { hand: [] as Check[], typed: [] as Check[], parser: [] as Check[] };
  const timing = await interleave(
    {
      hand: () => captureTrial(captures, () => new HandEmailTask().run(), VAGUE, checks.hand),
      typed: () => captureTrial(captures, () => typedEmail.run(), VAGUE, checks.typed),
      parser: () => captureTrial(captures, () => prebuiltEmail.run(), SPOKEN, checks.parser),
    },
    { warmup, runs },
  );
  const size = `${captures} captures per session, median of ${runs} interleaved rounds after ${warmup} warm-up`;
  const okTyped = { status: 'ok', value: { email: VALUE }, attempts: 1, modality: 'text' };
  const okParser = { status: 'ok', value: VALUE, attempts: 1, modality: 'text' };
  const modelNotes = [...verify(checks.hand, VALUE, 1), ...verify(checks.typed, okTyped, 1)];
  const parserNotes = verify(checks.parser, okParser, 0);
  const { hand, typed, parser } = timing;
  const vsHand =
    'baseline: the hand-written task with a zero-latency scripted model (a real model adds 300+ ms per call)';
  const model = { notes: [size, 'goal ratio <= 1.05', ...modelNotes] };
  const parsed = { notes: [size, vsHand, ...parserNotes] };
  return [
    compareTimings(
      { ...model, name: 'tasks.capture.model', metric: `wall time per capture: ${MODEL_PATH}` },
      typed,
      hand,
      'wall',
    ),
    compareTimings(
      { ...model, name: 'tasks.capture.model.cpu', metric: `CPU time per capture: ${MODEL_PATH}` },
      typed,
      hand,
      'cpu',
    ),
    compareTimings(
      { ...parsed, name: 'tasks.capture.parser', metric: `wall time per capture: ${PARSER_PATH}` },
      parser,
      hand,
      'wall',
    ),
    compareTimings(
      {
        ...parsed,
        name: 'tasks.capture.parser.cpu',
        metric: `CPU time per capture: ${PARSER_PATH}`,
      },
      parser,
      hand,
      'cpu',
    ),
  ];
}

const MODEL_PATH = 'defineTask vs hand-written AgentTask (model calls submit)';
const PARSER_PATH = 'prebuilt email resolved by its parser (no model call in the task)';

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { initializeLogger } = await import('@livekit/agents');
  initializeLogger({ pretty: false, level: 'silent' });
  const results = await runTasksBench({
    captures: argNumber('captures'),
    runs: argNumber('runs'),
    warmup: argNumber('warmup'),
  });
  console.log(JSON.stringify(results, null, 2));
}
