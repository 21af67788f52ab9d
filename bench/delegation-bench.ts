/**
 * Delegation at scale: 1,000 concurrent background tasks with a scripted sub-agent.
 *
 * - Manager overhead per task: the TaskManager (records, workspace, result file, events,
 *   timers) running N tasks vs the same N headless sub-agent runs called directly,
 *   interleaved rounds, median.
 * - Peak memory: heap growth while N tasks are in flight, per task.
 * - Delivery: N tasks started into a live call; every completion must be spoken exactly once.
 *
 *   npx tsx bench/delegation-bench.ts [--tasks 1000] [--runs 9]
 */
import { pathToFileURL } from 'node:url';
import { llm, voice } from '@livekit/agents';
import { z } from 'zod';
import { DEFAULT_COALESCE_MS, TaskManager } from '../src/delegation/manager.js';
import { runHeadless } from '../src/delegation/runner.js';
import { defineSubAgent } from '../src/delegation/subagent.js';
import { createDelegationTools } from '../src/delegation/task-tools.js';
import type { TaskEvent } from '../src/delegation/types.js';
import { ScriptedLLM, SimulatedCaller } from '../src/testing/index.js';
import { argNumber, collectGarbage, interleave, median, round3, stopwatch } from './interleave.js';
import type { BenchResult } from './result.js';

/** Options for {@link runDelegationBench}. */
export interface DelegationBenchOptions {
  /** Concurrent tasks per run (default 1,000; 200 under TASKLINE_BENCH_QUICK). */
  tasks?: number;
  /** Timed rounds of the overhead comparison (default 9). */
  runs?: number;
  /** Untimed warm-up rounds (default 1). */
  warmup?: number;
}

const INSTRUCTIONS = 'Look the question up, then answer in one sentence.';

/** The scripted sub-agent: one lookup, then an answer; any number of concurrent runs. */
function subModel(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) =>
      req.lastToolOutput
        ? { say: `Answer to ${req.lastUserText}: ${req.lastToolOutput.value}.` }
        : { toolCalls: [{ name: 'lookup', args: { query: req.lastUserText ?? '' } }] },
  });
}

const lookup = llm.tool({
  description: 'Look something up.',
  parameters: z.object({ query: z.string() }),
  execute: async ({ query }) => `found ${query.length} notes`,
});

const worker = defineSubAgent({
  name: 'worker',
  description: 'Answers a question after one lookup.',
  instructions: INSTRUCTIONS,
  tools: { lookup },
});

/**
 * A manager for N tasks at once, on the wall clock (as in production) or, once attached,
 * on the call's clock.
 */
function newManager(model: llm.LLM, n: number): TaskManager {
  return new TaskManager({
    subagents: [worker],
    generalPurpose: false,
    llm: model,
    maxParallel: n,
    queueLimit: 0,
    timeoutMs: 3_600_000,
  });
}

/** N headless runs called directly: the baseline the manager adds to. */
async function directTrial(n: number) {
  const model = subModel();
  const watch = stopwatch();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      runHeadless({
        model,
        instructions: INSTRUCTIONS,
        tools: { lookup },
        conversation: llm.ChatContext.empty(),
        prompt: `question ${i}`,
        maxTurns: 4,
        signal: new AbortController().signal,
      }),
    ),
  );
  return watch.stop(n);
}

/** N tasks through the TaskManager, including their record writes. */
async function managerTrial(n: number) {
  const manager = newManager(subModel(), n);
  const watch = stopwatch();
  const tasks = Array.from({ length: n }, (_, i) =>
    manager.start({ subagentType: 'worker', description: `Task ${i}`, prompt: `question ${i}` }),
  );
  const results = await Promise.all(tasks.map((t) => manager.wait(t.id)));
  await manager.flush();
  const sample = watch.stop(n);
  const failed = results.filter((r) => r.status !== 'completed').length;
  if (failed > 0) throw new Error(`${failed} of ${n} tasks did not finish`);
  return { ...sample, cleanup: () => manager.close() };
}

/** Peak heap growth while N tasks are in flight, in bytes. */
async function peakHeap(n: number, viaManager: boolean): Promise<number> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sample = () => {
    const used = process.memoryUsage().heapUsed;
    if (used > peak) peak = used;
  };
  if (viaManager) {
    const manager = newManager(subModel(), n);
    let seen = 0;
    manager.subscribe(() => {
      if (++seen % 50 === 0) sample();
    });
    const tasks = Array.from({ length: n }, (_, i) =>
      manager.start({ subagentType: 'worker', description: `Task ${i}`, prompt: `question ${i}` }),
    );
    sample();
    await Promise.all(tasks.map((t) => manager.wait(t.id)));
    sample();
    await manager.close();
  } else {
    const model = subModel();
    let done = 0;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        runHeadless({
          model,
          instructions: INSTRUCTIONS,
          tools: { lookup },
          conversation: llm.ChatContext.empty(),
          prompt: `question ${i}`,
          maxTurns: 4,
          signal: new AbortController().signal,
        }).then(() => {
          if (++done % 50 === 0) sample();
        }),
      ),
    );
    sample();
  }
  return peak - before;
}

class Desk extends voice.Agent {
  constructor(manager: TaskManager) {
    super({ instructions: 'Front desk.', tools: createDelegationTools(manager) });
  }
}

/** N background tasks started into a live (simulated) call: how many were spoken exactly once. */
async function deliveryRun(n: number) {
  const voiceModel = new ScriptedLLM({ respond: () => ({ say: 'Here are your results.' }) });
  const manager = newManager(subModel(), n);
  const caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: voiceModel });
  try {
    manager.attach(caller.session);
    const counts = new Map<string, number>();
    let delivered = 0;
    const allDelivered = new Promise<void>((resolve) => {
      manager.subscribe((e: TaskEvent) => {
        if (e.type !== 'delivered') return;
        counts.set(e.task.id, (counts.get(e.task.id) ?? 0) + 1);
        if (++delivered === n) resolve();
      });
    });
    const watch = stopwatch();
    const tasks = Array.from({ length: n }, (_, i) =>
      manager.start({ subagentType: 'worker', description: `Task ${i}`, prompt: `question ${i}` }),
    );
    await Promise.all(tasks.map((t) => manager.wait(t.id)));
    await caller.clock.advance(DEFAULT_COALESCE_MS, () => caller.settle());
    await allDelivered;
    await caller.settle();
    const elapsed = watch.stop(1).ms;
    const once = tasks.filter((t) => counts.get(t.id) === 1).length;
    const outputs = new Set(
      caller.session.history.items.flatMap((item) =>
        item.type === 'function_call_output' ? (/^Task (t\d+) /.exec(item.output)?.[1] ?? []) : [],
      ),
    );
    const replies = voiceModel.requests.length;
    return { once, inHistory: outputs.size, replies, elapsed };
  } finally {
    await caller.close();
    await manager.close();
  }
}

/** Runs the delegation benchmark; see the module comment. */
export async function runDelegationBench(
  opts: DelegationBenchOptions = {},
): Promise<BenchResult[]> {
  const quick = process.env.TASKLINE_BENCH_QUICK === '1';
  const n = opts.tasks ?? (quick ? 200 : 1000);
  // Rounds vary by ±0.1 ms per task (garbage collection and the JIT recompiling code whose
  // objects the previous round left behind, in both contenders): 9 rounds keep the median steady.
  const runs = opts.runs ?? (quick ? 3 : 9);
  const warmup = opts.warmup ?? 1;

  const timing = await interleave(
    { direct: () => directTrial(n), manager: () => managerTrial(n) },
    { warmup, runs },
  );
  const overheadWall = median(timing.manager.wall.map((m, i) => m - (timing.direct.wall[i] ?? m)));
  const overheadCpu = median(timing.manager.cpu.map((m, i) => m - (timing.direct.cpu[i] ?? m)));
  const size = `${n} concurrent tasks, scripted sub-agent (one lookup, one answer), median of ${runs} interleaved rounds`;

  const heapManager = await peakHeap(n, true);
  const heapDirect = await peakHeap(n, false);
  const delivery = await deliveryRun(n);

  const kb = (bytes: number) => round3(bytes / 1024 / n);
  return [
    {
      name: 'delegation.overhead.wall',
      metric: 'TaskManager wall time per task above the bare headless run',
      value: round3(overheadWall),
      unit: 'ms',
      baseline: round3(median(timing.direct.wall)),
      note: `${size}; goal < 0.2 ms; manager ${round3(median(timing.manager.wall))} ms/task vs direct ${round3(median(timing.direct.wall))} ms/task`,
    },
    {
      name: 'delegation.overhead.cpu',
      metric: 'TaskManager CPU time per task above the bare headless run',
      value: round3(overheadCpu),
      unit: 'ms',
      baseline: round3(median(timing.direct.cpu)),
      note: `${size}; goal < 0.2 ms`,
    },
    {
      name: 'delegation.memory.peak',
      metric: 'peak heap growth per in-flight task',
      value: kb(heapManager),
      unit: 'KB',
      baseline: kb(heapDirect),
      ratio: heapDirect > 0 ? round3(heapManager / heapDirect) : undefined,
      note: `${n} tasks in flight; baseline: the same runs without the manager (records, workspace, result files kept in memory)`,
    },
    {
      name: 'delegation.delivery.once',
      metric: 'background completions spoken into the call exactly once',
      value: delivery.once,
      unit: 'tasks',
      baseline: n,
      ratio: round3(delivery.once / n),
      note: `${delivery.inHistory}/${n} results in the call history; ${delivery.replies} deferred repl${delivery.replies === 1 ? 'y' : 'ies'} (coalesced); ${round3(delivery.elapsed)} ms from start to the last reply`,
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { initializeLogger } = await import('@livekit/agents');
  initializeLogger({ pretty: false, level: 'silent' });
  const results = await runDelegationBench({ tasks: argNumber('tasks'), runs: argNumber('runs') });
  console.log(JSON.stringify(results, null, 2));
  process.exit(0);
}
