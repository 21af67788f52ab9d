import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { llm, voice, workflows } from '@livekit/agents';
import {
  CONSENT_QUESTION,
  EMAIL_QUESTION,
  REFERRAL_QUESTION,
  SCORE_QUESTION,
  SurveyCall,
} from '../examples/survey/index.js';
import { AnnounceTask, announce } from '../src/flows/announce.js';
import { flow } from '../src/flows/builder.js';
import type { CheckpointStore } from '../src/flows/checkpoints/index.js';
import { SqliteCheckpointStore } from '../src/flows/checkpoints/sqlite.js';
import type { Outcome } from '../src/outcome.js';
import { email, number, yesNo } from '../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../src/testing/simulated-caller.js';
import {
  argNumber,
  collectGarbage,
  compareTimings,
  interleave,
  median,
  round3,
  type Sample,
  stopwatch,
} from './interleave.js';
import type { BenchResult } from './result.js';

/** Sizes of the flows benchmark. */
export interface FlowsBenchOptions {
  /** Timed rounds of the 10-step comparison; the median is reported (default 15). */
  runs?: number;
  /** Untimed warm-up rounds (default 2). */
  warmup?: number;
  /** Simultaneous calls in the concurrency run (default 100, at most 1,000). */
  calls?: number;
  /** Rounds of the concurrency run per contender (default 3). */
  concurrentRounds?: number;
}

const STEPS = 10;
const steps = Array.from({ length: STEPS }, (_, i) =>
  yesNo({ name: `q${i}`, question: `Question ${i + 1}?` }),
);

/** The flow under test: the 10 tasks in a row, no branching. */
const tenSteps = steps.reduce(
  (f, task, i) => f.step(`q${i}`, task) as unknown as ReturnType<typeof flow>,
  flow('ten'),
);

/** What a LiveKit user writes today: upstream's TaskGroup with the same 10 tasks. */
function taskGroup() {
  const group = new workflows.TaskGroup({ summarizeChatCtx: false });
  steps.forEach((task, i) => {
    group.add(() => task.create(), { id: `q${i}`, description: `Question ${i + 1}` });
  });
  return group.run();
}

/** The parent agent: its `survey` tool runs the 10 questions one way or the other. */
class Desk extends voice.Agent {
  readonly results: unknown[] = [];

  constructor(run: () => Promise<unknown>) {
    super({
      id: 'desk',
      instructions: 'Front desk.',
      tools: {
        survey: llm.tool({
          description: 'Run the ten questions.',
          execute: async () => {
            this.results.push(await run());
            return 'done';
          },
        }),
      },
    });
  }
}

function deskModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) =>
      req.lastToolOutput?.name === 'survey'
        ? { say: 'Thanks.' }
        : { toolCalls: [{ name: 'survey' }] },
  });
}

const SAID = 'Thank you, that is noted.';

/** Questions each followed by a spoken line: `say(i)` makes the line's step. */
function questionsAndLines(name: string, say: (i: number) => unknown) {
  let f = flow(name) as unknown as { step(id: string, source: unknown): unknown };
  for (let i = 0; i < STEPS; i++) {
    f = f.step(`q${i}`, steps[i]) as typeof f;
    f = f.step(`said${i}`, say(i)) as typeof f;
  }
  return f as unknown as ReturnType<typeof flow>;
}

/** Lines said by the flow itself (`announce`): no task switch for one sentence. */
const saidByFlow = questionsAndLines('said_by_flow', (i) => announce(SAID, `said${i}`));
/** The same lines as one-sentence tasks (how `announce` ran before). */
const saidByTask = questionsAndLines(
  'said_by_task',
  (i) => () => new AnnounceTask(SAID, `said${i}`),
);

/** One session running the 10 questions, each answered "yes" (parsed, no model call). */
async function sequenceTrial(run: () => Promise<unknown>, results: unknown[][]): Promise<Sample> {
  const model = deskModel();
  const session = new voice.AgentSession({ llm: model });
  model.bind(session);
  const desk = new Desk(run);
  await session.start({ agent: desk });
  const watch = stopwatch();
  await session.run({ userInput: 'I have time for your questions' }).wait();
  for (let i = 0; i < STEPS; i++) await session.run({ userInput: 'yes' }).wait();
  const time = watch.stop(STEPS);
  results.push(desk.results);
  return { ...time, cleanup: () => session.close() };
}

const SURVEY_TURNS = ['yes', 'nine', 'yes please', 'jane at example dot com', 'yes'];

/** The baseline of the concurrency run: a plain upstream agent answering the same turns. */
class PlainAgent extends voice.Agent {
  constructor() {
    super({ id: 'plain', instructions: 'You run a short survey.' });
  }

  override async onEnter(): Promise<void> {
    this.session.say('Hi! Do you have a minute for a two-question survey about your visit?');
  }
}

/** The survey's tasks for this script's path, as a LiveKit user would chain them today. */
class GroupSurvey extends voice.Agent {
  result: workflows.TaskGroupResult | undefined;
  constructor() {
    super({ id: 'group_survey', instructions: 'You run a short survey.' });
  }

  override async onEnter(): Promise<void> {
    const group = new workflows.TaskGroup({ summarizeChatCtx: false });
    for (const [id, task] of GROUP_TASKS) group.add(() => task.create(), { id, description: id });
    this.result = await group.run();
  }
}

const GROUP_TASKS = [
  ['consent', yesNo({ name: 'consent', question: CONSENT_QUESTION })],
  ['score', number({ name: 'score', question: SCORE_QUESTION, min: 0, max: 10, integer: true })],
  ['referral', yesNo({ name: 'referral', question: REFERRAL_QUESTION })],
  ['email', email({ name: 'email', question: EMAIL_QUESTION })],
] as const;

type Kind = 'survey' | 'plain' | 'group';

interface Concurrent {
  cpuMsPerTurn: number;
  wallMs: number;
  bytesPerCall: number;
  completed: number;
}

/**
 * N sessions at once in this process, each doing the survey's five caller turns (the
 * survey with SQLite checkpoints, or a plain upstream agent whose scripted model answers
 * each turn). CPU over everything / turns; memory with all N calls alive, after a GC.
 */
async function concurrentRun(
  kind: Kind,
  calls: number,
  store: CheckpointStore,
  tag: string,
): Promise<Concurrent> {
  collectGarbage();
  const before = memory();
  const watch = stopwatch();
  const t0 = performance.now();
  const sessions = await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const model =
        kind === 'plain'
          ? new ScriptedLLM({ respond: () => ({ say: 'Thanks, next question.' }) })
          : new ScriptedLLM();
      const agent =
        kind === 'survey'
          ? new SurveyCall({ checkpoints: store, callId: `${tag}-${i}` })
          : kind === 'group'
            ? new GroupSurvey()
            : new PlainAgent();
      // The same driver for both: a caller who waits for each question before answering.
      const caller = await SimulatedCaller.start({ agent, llm: model });
      return { caller, agent };
    }),
  );
  for (const turn of SURVEY_TURNS) {
    await Promise.all(sessions.map((s) => s.caller.say(turn)));
  }
  const cpu = watch.stop(calls * SURVEY_TURNS.length).cpuMs;
  const wallMs = performance.now() - t0;
  collectGarbage();
  const bytes = memory() - before;
  const completed = sessions.filter(({ agent }) =>
    agent instanceof SurveyCall
      ? agent.result?.status === 'completed'
      : agent instanceof GroupSurvey
        ? Object.keys(agent.result?.taskResults ?? {}).length === GROUP_TASKS.length
        : agent instanceof PlainAgent,
  ).length;
  await Promise.all(sessions.map((s) => s.caller.close()));
  return { cpuMsPerTurn: cpu, wallMs, bytesPerCall: bytes / calls, completed };
}

/**
 * (a) A 10-step flow vs upstream TaskGroup running the same 10 tasks on the same script
 * (wall and CPU per step, interleaved rounds; also the flow with SQLite checkpoints), and
 * (b) N simultaneous survey calls in one process vs plain upstream sessions doing the
 * same caller turns: CPU ms per turn and memory per call.
 */
export async function runFlowsBench(opts: FlowsBenchOptions = {}): Promise<BenchResult[]> {
  const quick = process.env.TASKLINE_BENCH_QUICK === '1';
  const runs = opts.runs ?? (quick ? 5 : 15);
  const warmup = opts.warmup ?? (quick ? 1 : 2);
  const calls = Math.min(1_000, Math.max(1, Math.floor(opts.calls ?? (quick ? 20 : 100))));
  const rounds = opts.concurrentRounds ?? (quick ? 1 : 3);
  const dir = mkdtempSync(join(tmpdir(), 'taskline-flows-bench-'));
  const store = await SqliteCheckpointStore.open({ path: join(dir, 'checkpoints.db') });
  let run = 0;
  try {
    const results = {
      flow: [] as unknown[][],
      group: [] as unknown[][],
      sqlite: [] as unknown[][],
    };
    const timing = await interleave(
      {
        group: () => sequenceTrial(taskGroup, results.group),
        flow: () => sequenceTrial(() => tenSteps.run(), results.flow),
        sqlite: () =>
          sequenceTrial(
            () => tenSteps.run({ checkpoints: store, callId: `seq-${++run}` }),
            results.sqlite,
          ),
      },
      { warmup, runs },
    );
    const lines = { flow: [] as unknown[][], task: [] as unknown[][] };
    const spoken = await interleave(
      {
        task: () => sequenceTrial(() => saidByTask.run(), lines.task),
        flow: () => sequenceTrial(() => saidByFlow.run(), lines.flow),
      },
      { warmup, runs },
    );
    const problems = verifySequence(results);
    for (const r of [...lines.flow.flat(), ...lines.task.flat()]) {
      if ((r as { status?: string }).status !== 'completed') {
        problems.push('MISMATCH: a flow with spoken lines did not complete');
        break;
      }
    }
    const size = `${STEPS} yes/no steps answered by their parser, median of ${runs} interleaved rounds after ${warmup} warm-up`;
    const notes = [
      size,
      'baseline: workflows.TaskGroup (summarizeChatCtx off)',
      'goal ratio <= 1.05',
      ...problems,
    ];
    const out: BenchResult[] = [
      compareTimings(
        { name: 'flows.sequence', metric: 'wall time per step: 10-step flow vs TaskGroup', notes },
        timing.flow,
        timing.group,
        'wall',
      ),
      compareTimings(
        {
          name: 'flows.sequence.cpu',
          metric: 'CPU time per step: 10-step flow vs TaskGroup',
          notes,
        },
        timing.flow,
        timing.group,
        'cpu',
      ),
      compareTimings(
        {
          name: 'flows.sequence.sqlite',
          metric: 'wall time per step: 10-step flow with SQLite checkpoints vs TaskGroup',
          notes: [size, 'one WAL transaction per step'],
        },
        timing.sqlite,
        timing.group,
        'wall',
      ),
    ];

    out.push(
      compareTimings(
        {
          name: 'flows.announce',
          metric: 'wall time per question + spoken line: said by the flow vs a one-sentence task',
          notes: [
            `${STEPS} yes/no questions each followed by an announce line, median of ${runs} interleaved rounds after ${warmup} warm-up`,
            'baseline: the same line as its own AgentTask (a task switch there and back)',
          ],
        },
        spoken.flow,
        spoken.task,
        'wall',
      ),
    );

    const conc: Record<Kind, Concurrent[]> = { plain: [], group: [], survey: [] };
    const kinds: Kind[] = ['plain', 'group', 'survey'];
    for (let r = 0; r < rounds; r++) {
      // Rotate the order so no contender always runs first.
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(r + k) % kinds.length]!;
        conc[kind].push(await concurrentRun(kind, calls, store, `conc-${r}`));
      }
    }
    const cpu = (k: Kind) => median(conc[k].map((c) => c.cpuMsPerTurn));
    const mb = (k: Kind) => median(conc[k].map((c) => c.bytesPerCall)) / 1024 / 1024;
    const incomplete = kinds.filter((k) => conc[k].some((c) => c.completed !== calls));
    const concNotes = [
      `${calls} simultaneous calls x ${SURVEY_TURNS.length} caller turns, median of ${rounds} round(s), all driven by the testing kit's SimulatedCaller`,
      'survey: the example flow with SQLite checkpoints, answers parsed (no model call)',
      ...incomplete.map((k) => `MISMATCH: not every ${k} call completed`),
    ];
    const plainNote =
      'baseline: a plain upstream Agent whose zero-latency scripted model answers each turn (no task switch per question)';
    const groupNote =
      'baseline: upstream TaskGroup running the same capture tasks for this path (same task switch per question)';
    const row = (
      name: string,
      metric: string,
      unit: string,
      value: number,
      base: number,
      goal: string,
      note: string,
    ): BenchResult => ({
      name,
      metric,
      value: round3(value),
      unit,
      baseline: round3(base),
      ratio: round3(value / base),
      note: [`delta ${round3(value - base)} ${unit} (${goal})`, note, ...concNotes].join('; '),
    });
    out.push(
      row(
        'flows.concurrent.cpu',
        'CPU ms per caller turn: survey calls vs plain upstream sessions',
        'ms',
        cpu('survey'),
        cpu('plain'),
        'goal <= +0.5',
        plainNote,
      ),
      row(
        'flows.concurrent.cpu.taskgroup',
        'CPU ms per caller turn: survey calls vs TaskGroup sessions',
        'ms',
        cpu('survey'),
        cpu('group'),
        'flow runner overhead',
        groupNote,
      ),
      row(
        'flows.concurrent.memory',
        'memory per call (heap + external, all calls alive, after GC): survey vs plain upstream',
        'MB',
        mb('survey'),
        mb('plain'),
        'goal <= +1',
        plainNote,
      ),
      row(
        'flows.concurrent.memory.taskgroup',
        'memory per call (heap + external, all calls alive, after GC): survey vs TaskGroup',
        'MB',
        mb('survey'),
        mb('group'),
        'flow runner overhead',
        groupNote,
      ),
    );
    return out;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function verifySequence(results: Record<'flow' | 'group' | 'sqlite', unknown[][]>): string[] {
  const problems: string[] = [];
  const yes: Outcome<boolean> = { status: 'ok', value: true, attempts: 1, modality: 'text' };
  const expectedGroup = JSON.stringify({
    taskResults: Object.fromEntries(steps.map((_, i) => [`q${i}`, yes])),
  });
  const expectedFlow = JSON.stringify(Object.fromEntries(steps.map((_, i) => [`q${i}`, true])));
  for (const r of results.group.flat()) {
    if (JSON.stringify(r) !== expectedGroup) problems.push('MISMATCH: TaskGroup result');
  }
  for (const r of [...results.flow.flat(), ...results.sqlite.flat()]) {
    const value = (r as { status?: string; value?: unknown }).value;
    if (JSON.stringify(value) !== expectedFlow) problems.push('MISMATCH: flow result');
  }
  return [...new Set(problems)];
}

function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { initializeLogger } = await import('@livekit/agents');
  initializeLogger({ pretty: false, level: 'silent' });
  const results = await runFlowsBench({
    runs: argNumber('runs'),
    warmup: argNumber('warmup'),
    calls: argNumber('calls'),
    concurrentRounds: argNumber('rounds'),
  });
  console.log(JSON.stringify(results, null, 2));
}
