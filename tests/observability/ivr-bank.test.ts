// The ivr-bank call with tracing on: a span per capture task (menu, PIN) with its outcome, a
// re-prompt span under the PIN task for a wrong PIN, a transfer span, task metrics — and the
// masked PIN in no span at all (taskline's or upstream's).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bankScriptedModel } from '../../examples/ivr-bank/demo.js';
import { createBankCall } from '../../examples/ivr-bank/index.js';
import { ATTR, METRIC, SPAN } from '../../src/observability/index.js';
import { RecordingTransferer } from '../../src/telephony/transfer.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { installTelemetry, spanStrings, type TestTelemetry } from './otel.js';

let otel: TestTelemetry;
let caller: SimulatedCaller | undefined;
beforeEach(() => {
  otel = installTelemetry();
});
afterEach(async () => {
  await caller?.close();
  caller = undefined;
  await otel.close();
});

describe('ivr-bank traced', () => {
  it('menu, a wrong PIN, the right PIN: task spans with outcomes, a re-prompt span, no PIN anywhere', async () => {
    const call = createBankCall({ transferer: new RecordingTransferer() });
    caller = await SimulatedCaller.start({ agent: call.agent, llm: bankScriptedModel() });
    await caller.dtmf('1');
    await caller.dtmf('1357', { mask: true });
    expect(caller.agentLines.at(-1)).toMatch(/doesn't match our records/);
    await caller.dtmf('4321', { mask: true });
    expect(caller.agentLines.at(-1)).toMatch(/Your balance is \$1,234\.56/);
    await caller.close();
    caller = undefined;

    const menu = otel.find(SPAN.task, ATTR.taskName, 'main_menu');
    expect(menu.attributes).toMatchObject({
      [ATTR.status]: 'ok',
      [ATTR.attempts]: 1,
      [ATTR.modality]: 'dtmf',
    });
    const pin = otel.find(SPAN.task, ATTR.taskName, 'pin');
    expect(pin.attributes).toMatchObject({
      [ATTR.status]: 'ok',
      [ATTR.attempts]: 2,
      [ATTR.modality]: 'dtmf',
    });
    const reprompts = otel.named(SPAN.reprompt);
    expect(reprompts.map((s) => s.attributes[ATTR.repromptKind])).toEqual(['invalid']);
    expect(reprompts[0]!.parentSpanContext?.spanId).toBe(pin.spanContext().spanId);
    // One trace: taskline's spans share it with upstream's session spans.
    const traceIds = new Set(otel.spans().map((s) => s.spanContext().traceId));
    expect(traceIds.size).toBe(1);
    expect(otel.ancestors(pin).length).toBeGreaterThan(0);

    // The masked PIN (and the wrong one) appear in no exported span, attribute or event.
    for (const span of otel.spans()) {
      const text = spanStrings(span).join(' ');
      expect(text).not.toContain('4321');
      expect(text).not.toContain('1357');
    }

    expect(await otel.metric(METRIC.taskOutcomes, { task: 'pin', status: 'ok' })).toBe(1);
    expect(await otel.metric(METRIC.taskOutcomes, { task: 'main_menu', status: 'ok' })).toBe(1);
    expect(await otel.histogram(METRIC.taskAttempts, { task: 'pin' })).toEqual({
      sum: 2,
      count: 1,
    });
    expect(await otel.metric(METRIC.reprompts, { task: 'pin', kind: 'invalid' })).toBe(1);
  });

  it('asking for an agent: a transfer span with the outcome, the desk number cut to four digits', async () => {
    const transferer = new RecordingTransferer();
    const call = createBankCall({ transferer });
    caller = await SimulatedCaller.start({ agent: call.agent, llm: bankScriptedModel() });
    await caller.dtmf('3');
    expect(call.result().outcome).toBe('transferred');
    await caller.close();
    caller = undefined;
    const [transfer] = otel.named(SPAN.transfer);
    expect(transfer?.attributes).toMatchObject({
      [ATTR.transferMode]: 'cold',
      [ATTR.transferTo]: '***0100',
      [ATTR.status]: 'transferred',
    });
    expect(JSON.stringify(transfer?.attributes)).not.toContain('5550100');
  });
});
