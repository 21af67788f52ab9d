// A delegation worker in its own process with its own tracer provider, for
// delegation-remote.test.ts: every span it ends is printed as one `SPAN {json}` line.
import { telemetry } from '@livekit/agents';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { serveDelegations } from '../../src/service/worker.js';

/** What the printed line of one span holds. */
export interface PrintedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  pid: number;
}

const printer: SpanProcessor = {
  onStart() {},
  onEnd(span: ReadableSpan) {
    const line: PrintedSpan = {
      name: span.name,
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
      attributes: { ...span.attributes },
      pid: process.pid,
    };
    console.log(`SPAN ${JSON.stringify(line)}`);
  },
  async shutdown() {},
  async forceFlush() {},
};

/** Serves `back-office` delegations from the shared SQLite file over NATS, traced. */
export async function main(options: { dbPath: string; natsUrl: string; prefix: string }) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const fanout = new telemetry.FanoutSpanProcessor();
  telemetry.setTracerProvider(new BasicTracerProvider({ spanProcessors: [printer] }), {
    registerSpanProcessor: (p) => fanout.add(p),
  });
  const store = await SqliteDelegationStore.open({ path: options.dbPath });
  const bus = await NatsDelegationBus.connect({ servers: options.natsUrl, prefix: options.prefix });
  const worker = await serveDelegations({
    agentId: 'back-office',
    bus,
    store,
    handler: async ({ data }) => {
      console.log(`DATA ${JSON.stringify(data)}`);
      return 'Flight LX318 on Monday is available.';
    },
  });
  process.on('SIGTERM', async () => {
    await worker.close();
    await bus.close();
    await store.close();
    console.log('stopped');
    process.exit(0);
  });
  console.log('ready');
}
