/**
 * Tracing cost: the same scripted call (a 10-step flow of parsed yes/no answers run from a
 * tool) with tracing off (no provider, no context manager: the default) and on (an SDK
 * provider with a no-op exporter and async context, with and without MaskingSpanProcessor),
 * interleaved in one process. CPU per caller turn; ratio = on / off.
 */
import { llm, telemetry, voice } from '@livekit/agents';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { flow } from '../src/flows/builder.js';
import { MaskingSpanProcessor } from '../src/observability/masking.js';
import { ATTR, SPAN } from '../src/observability/names.js';
import { withSpan } from '../src/observability/tracing.js';
import { yesNo } from '../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../src/testing/scripted-llm.js';
import { compareTimings, interleave, round3, type Sample, stopwatch } from './interleave.js';
import type { BenchResult } from './result.js';

const STEPS = 10;
const tenSteps = Array.from({ length: STEPS }, (_, i) =>
  yesNo({ name: `q${i}`, question: `Question ${i + 1}?` }),
).reduce((f, task, i) => f.step(`q${i}`, task) as unknown as ReturnType<typeof flow>, flow('ten'));

/** Counts spans and drops them: what a real exporter's cost would sit on top of. */
class NoopExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (r: { code: ExportResultCode }) => void): void {
    this.spans += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

class Desk extends voice.Agent {
  constructor() {
    super({
      id: 'desk',
      instructions: 'Front desk.',
      tools: {
        survey: llm.tool({
          description: 'Run the ten questions.',
          execute: async () => {
            await tenSteps.run();
            return 'done';
          },
        }),
      },
    });
  }
}

async function callTrial(): Promise<Sample> {
  const model = new ScriptedLLM({
    respond: (req) =>
      req.lastToolOutput?.name === 'survey'
        ? { say: 'Thanks.' }
        : { toolCalls: [{ name: 'survey' }] },
  });
  const session = new voice.AgentSession({ llm: model });
  model.bind(session);
  await session.start({ agent: new Desk() });
  const watch = stopwatch();
  await session.run({ userInput: 'I have time for your questions' }).wait();
  for (let i = 0; i < STEPS; i++) await session.run({ userInput: 'yes' }).wait();
  const time = watch.stop(STEPS + 1);
  return { ...time, cleanup: () => session.close() };
}

/**
 * What one taskline instrumentation point costs with tracing off: `withSpan` around an async
 * function vs calling it bare (best of 5 rounds each, CPU µs per call).
 */
async function spanOverheadOff(n: number): Promise<BenchResult> {
  const fn = async () => 1;
  const time = async (wrapped: boolean) => {
    const watch = stopwatch();
    for (let i = 0; i < n; i++) {
      if (wrapped) await withSpan(SPAN.task, () => ({ [ATTR.taskName]: 'x' }), fn);
      else await fn();
    }
    return watch.stop(n).cpuMs * 1000;
  };
  let bare = Number.POSITIVE_INFINITY;
  let wrapped = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    bare = Math.min(bare, await time(false));
    wrapped = Math.min(wrapped, await time(true));
  }
  return {
    name: 'withSpan, tracing off',
    metric: 'CPU per instrumented call',
    value: round3(wrapped),
    unit: 'µs',
    baseline: round3(bare),
    ratio: round3(wrapped / bare),
    note: `${n} awaited calls, best of 5; the flow call above has ~3 instrumented points per turn`,
  };
}

/** Runs the tracing off/on comparison. */
export async function runTracingBench(
  options: { runs?: number; warmup?: number } = {},
): Promise<BenchResult[]> {
  const quick = process.env.TASKLINE_BENCH_QUICK === '1';
  const runs = options.runs ?? (quick ? 5 : 15);
  const warmup = options.warmup ?? 2;
  const exporter = new NoopExporter();
  const masked = new BasicTracerProvider({
    spanProcessors: [new MaskingSpanProcessor(), new SimpleSpanProcessor(exporter)],
  });
  const plain = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const off = trace.getTracerProvider();
  const contextManager = new AsyncLocalStorageContextManager();
  const setTracing = (provider: BasicTracerProvider | undefined) => {
    context.disable();
    if (provider) context.setGlobalContextManager(contextManager.enable());
    else contextManager.disable();
    telemetry.tracer.setProvider(provider ?? off);
  };
  let spansPerTurn = 0;
  const timings = await interleave(
    {
      off: async () => {
        setTracing(undefined);
        return callTrial();
      },
      unmasked: async () => {
        setTracing(plain);
        return callTrial();
      },
      on: async () => {
        setTracing(masked);
        const before = exporter.spans;
        const sample = await callTrial();
        spansPerTurn = (exporter.spans - before) / (STEPS + 1);
        return sample;
      },
    },
    { warmup, runs },
  );
  setTracing(undefined);
  await masked.shutdown();
  await plain.shutdown();
  const notes = [
    `${STEPS}-step flow of parsed answers from a tool, ${runs} rounds`,
    `on = SDK provider, no-op exporter, async context, MaskingSpanProcessor (~${Math.round(spansPerTurn)} spans/turn incl. upstream's)`,
  ];
  return [
    await spanOverheadOff(quick ? 20_000 : 200_000),
    compareTimings(
      { name: 'tracing on vs off', metric: 'CPU per caller turn', notes },
      timings.on,
      timings.off,
      'cpu',
    ),
    compareTimings(
      {
        name: 'tracing on without MaskingSpanProcessor vs off',
        metric: 'CPU per caller turn',
        notes: ['same call; the difference to the row above is the masking of every span'],
      },
      timings.unmasked,
      timings.off,
      'cpu',
    ),
  ];
}
