// In-memory OpenTelemetry for tests: spans into an InMemorySpanExporter on upstream's tracer
// provider (as an app would set it), metrics into a reader collected on demand.
import { telemetry } from '@livekit/agents';
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

class CollectingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** One test's telemetry. */
export interface TestTelemetry {
  exporter: InMemorySpanExporter;
  spans(): ReadableSpan[];
  /** Spans named `name`. */
  named(name: string): ReadableSpan[];
  /** The single span named `name` whose attribute `key` equals `value`. */
  find(name: string, key: string, value: unknown): ReadableSpan;
  /** The chain of span names from `span` up to the root (within this process's spans). */
  ancestors(span: ReadableSpan): string[];
  /** Sum of a counter's points (or histogram counts) whose attributes include `match`. */
  metric(name: string, match?: Record<string, unknown>): Promise<number>;
  /** Histogram points of a metric whose attributes include `match`. */
  histogram(name: string, match?: Record<string, unknown>): Promise<{ sum: number; count: number }>;
  reset(): void;
  close(): Promise<void>;
}

/** Installs tracing (upstream's provider + async context) and a global meter provider. */
export function installTelemetry(): TestTelemetry {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const fanout = new telemetry.FanoutSpanProcessor();
  telemetry.setTracerProvider(provider, {
    registerSpanProcessor: (p) => fanout.add(p),
  });
  metrics.disable();
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);

  const collect = async (): Promise<ResourceMetrics> => (await reader.collect()).resourceMetrics;
  const points = async (name: string, match: Record<string, unknown>) => {
    const rm = await collect();
    const out: Array<{ value: unknown }> = [];
    for (const scope of rm.scopeMetrics) {
      for (const m of scope.metrics) {
        if (m.descriptor.name !== name) continue;
        for (const dp of m.dataPoints) {
          if (Object.entries(match).every(([k, v]) => dp.attributes[k] === v)) out.push(dp);
        }
      }
    }
    return out;
  };
  const api: TestTelemetry = {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    find(name, key, value) {
      const found = api.named(name).filter((s) => s.attributes[key] === value);
      if (found.length !== 1) {
        throw new Error(
          `expected one ${name} span with ${key}=${String(value)}, got ${found.length}`,
        );
      }
      return found[0]!;
    },
    ancestors(span) {
      const byId = new Map(exporter.getFinishedSpans().map((s) => [s.spanContext().spanId, s]));
      const chain: string[] = [];
      let cur: ReadableSpan | undefined = span;
      for (let i = 0; cur && i < 50; i++) {
        const parentId: string | undefined = cur.parentSpanContext?.spanId;
        cur = parentId ? byId.get(parentId) : undefined;
        if (cur) chain.push(cur.name);
      }
      return chain;
    },
    async metric(name, match = {}) {
      let total = 0;
      for (const dp of await points(name, match)) {
        const v = dp.value as number | { count: number };
        total += typeof v === 'number' ? v : v.count;
      }
      return total;
    },
    async histogram(name, match = {}) {
      let sum = 0;
      let count = 0;
      for (const dp of await points(name, match)) {
        const v = dp.value as { sum: number; count: number };
        sum += v.sum;
        count += v.count;
      }
      return { sum, count };
    },
    reset: () => exporter.reset(),
    async close() {
      await provider.shutdown();
      await meterProvider.shutdown();
      metrics.disable();
      trace.disable();
      manager.disable();
      context.disable();
    },
  };
  return api;
}

/** Every string in a span's attributes and events (for "never appears" checks). */
export function spanStrings(span: ReadableSpan): string[] {
  const out: string[] = [span.name, span.status.message ?? ''];
  const add = (attrs: Record<string, unknown> | undefined) => {
    for (const [k, v] of Object.entries(attrs ?? {})) out.push(k, JSON.stringify(v));
  };
  add(span.attributes);
  for (const e of span.events) {
    out.push(e.name);
    add(e.attributes);
  }
  return out;
}
