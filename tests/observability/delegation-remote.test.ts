// A voice call delegates to a worker in ANOTHER process (shared SQLite file, NATS JetStream):
// the delegation span on the voice side, the worker's execution span in the child process
// (its own tracer provider) in the same trace as its child, and the spoken delivery.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/delegation/manager.js';
import { ATTR, METRIC, SPAN, TRACE_CONTEXT_FIELD } from '../../src/observability/index.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { createDelegationSender } from '../../src/service/bus/sender.js';
import { remoteSubAgent } from '../../src/service/remote.js';
import { SqliteDelegationStore } from '../../src/service/stores/sqlite.js';
import { ScriptedLLM, SimulatedCaller } from '../../src/testing/index.js';
import { Desk, systemText, taskCall, whenSpoken } from '../delegation/helpers.js';
import { spawnScript } from '../delegation/store-suite.js';
import { NATS_URL, serviceMissing } from '../services.js';
import { installTelemetry } from './otel.js';
import type { PrintedSpan } from './traced-worker.js';

const skip = (await serviceMissing('nats')) !== undefined;
const prefix = `otel_${process.pid}_${randomBytes(3).toString('hex')}`;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  if (skip) return;
  const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix });
  await bus.deleteStream().catch(() => {});
  await bus.close();
});

describe('a traced delegation to a worker process', { skip }, () => {
  it('one trace: voice delegation span → worker execution span (other process) → spoken delivery', {
    timeout: 90_000,
  }, async () => {
    const otel = installTelemetry();
    closers.push(() => otel.close());
    const dbPath = join(mkdtempSync(join(tmpdir(), 'taskline-otel-')), 'delegations.db');
    const store = await SqliteDelegationStore.open({ path: dbPath });
    closers.push(() => store.close());
    const bus = await NatsDelegationBus.connect({
      servers: NATS_URL,
      prefix,
      contract: { prefix: `${prefix}.contract` },
    });
    closers.push(() => bus.close());
    // A plain NATS subscriber (as a client in another language) sees W3C headers on the
    // contract's delegation_task message.
    const nc = await connect({ servers: NATS_URL });
    closers.push(() => nc.close());
    const contractHeaders = new Promise<string | undefined>((resolve) => {
      nc.subscribe(`${prefix}.contract.back-office`, {
        callback: (_err, msg) => resolve(msg.headers?.get('traceparent')),
      });
    });
    await nc.flush();

    const worker = pathToFileURL(join(import.meta.dirname, 'traced-worker.ts')).href;
    const child = spawnScript(`
      const { main } = await import(${JSON.stringify(worker)});
      await main(${JSON.stringify({ dbPath, natsUrl: NATS_URL, prefix })});
    `);
    closers.push(async () => {
      child.kill('SIGTERM');
      await child.exited;
    });
    await child.waitForLine(/^ready$/);

    const sender = await createDelegationSender({ agentId: 'voice-bot', bus, store });
    closers.push(() => sender.close());
    const manager = new TaskManager({
      subagents: [
        remoteSubAgent({
          name: 'booking',
          description: 'Checks flight availability in the back office.',
          sender,
          target: 'back-office',
        }),
      ],
    });
    const model = new ScriptedLLM().for(Desk, [
      taskCall({
        subagent_type: 'booking',
        description: 'Check Monday flights',
        prompt: 'Is LX318 on Monday available?',
        run_in_background: true,
      }),
      { say: 'Let me check that with our booking team.' },
      (req) => ({
        say: systemText(req).includes('LX318 on Monday is available')
          ? 'Good news: LX318 is available.'
          : '??',
      }),
    ]);
    const caller = await SimulatedCaller.start({ agent: new Desk(manager), llm: model });
    closers.push(() => caller.close());
    await caller.say('Can I fly to Zurich on Monday?');
    await whenSpoken(caller, manager, 't1');
    expect(caller.agentLines.at(-1)).toBe('Good news: LX318 is available.');

    // Voice side: the delegation span, from start to the spoken delivery.
    const delegation = otel.find(SPAN.delegation, ATTR.delegationTask, 't1');
    expect(delegation.attributes).toMatchObject({
      [ATTR.subagentType]: 'booking',
      [ATTR.delegationMode]: 'background',
      [ATTR.delegationStatus]: 'completed',
      [ATTR.deliveryVia]: 'spoken',
    });
    const traceId = delegation.spanContext().traceId;
    const [deliver] = otel.named(SPAN.delivery);
    expect(deliver?.parentSpanContext?.spanId).toBe(delegation.spanContext().spanId);
    expect(deliver?.spanContext().traceId).toBe(traceId);
    // The delegation was started in the caller's turn: it nests under upstream's turn span.
    expect(otel.ancestors(delegation)).toContain('agent_turn');

    // The record carries the delegation span's context (an additive sub_task_data key).
    const { items } = await store.query({ target_subject_id: 'back-office' });
    expect(items).toHaveLength(1);
    const carried = items[0]!.sub_task_data[TRACE_CONTEXT_FIELD] as { traceparent: string };
    expect(carried.traceparent).toBe(`00-${traceId}-${delegation.spanContext().spanId}-01`);
    expect(items[0]!.sub_task_data).toMatchObject({ prompt: 'Is LX318 on Monday available?' });
    expect(await contractHeaders).toBe(carried.traceparent);

    // Worker side, another process with its own provider: the execution continues the trace.
    const line = await child.waitForLine(/^SPAN .*"taskline\.delegation\.execute"/);
    const executed = JSON.parse(line.slice('SPAN '.length)) as PrintedSpan;
    expect(executed.pid).not.toBe(process.pid);
    // The handler gets sub_task_data as the sender wrote it.
    const data = await child.waitForLine(/^DATA /);
    expect(JSON.parse(data.slice('DATA '.length))).toEqual({
      prompt: 'Is LX318 on Monday available?',
      description: 'Check Monday flights',
      call_id: caller.call.callId,
    });
    expect(executed.traceId).toBe(traceId);
    expect(executed.parentSpanId).toBe(delegation.spanContext().spanId);
    expect(executed.attributes).toMatchObject({
      [ATTR.workerAgent]: 'back-office',
      [ATTR.delegationType]: 'booking',
      [ATTR.workerStage]: 'execution',
      [ATTR.workerAttempt]: 1,
    });

    expect(await otel.metric(METRIC.delegationOutcomes, { status: 'completed' })).toBe(1);
    expect(
      (await otel.histogram(METRIC.delegationLatency, { subagent_type: 'booking' })).count,
    ).toBe(1);
    expect(await otel.metric(METRIC.delegationQueueDepth)).toBe(0);
  });
});
