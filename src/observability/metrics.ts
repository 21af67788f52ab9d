/**
 * taskline's metric instruments, from the OpenTelemetry API's global meter provider
 * (`metrics.getMeter('taskline')`): a no-op until the app installs a MeterProvider, and
 * re-created when it does, so instruments made before the app's set-up still report.
 */
import {
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  metrics,
  type UpDownCounter,
} from '@opentelemetry/api';
import { METRIC, SCOPE } from './names.js';

/** taskline's instruments; see the tables of docs/observability.md. */
export interface TasklineInstruments {
  taskOutcomes: Counter;
  taskAttempts: Histogram;
  reprompts: Counter;
  modelCallsAvoided: Counter;
  stepDuration: Histogram;
  flowResults: Counter;
  delegationQueueDepth: UpDownCounter;
  delegationLatency: Histogram;
  delegationOutcomes: Counter;
  workerDuration: Histogram;
}

let cachedProvider: MeterProvider | undefined;
let cached: TasklineInstruments | undefined;

/** The instruments on the current global meter provider (created once per provider). */
export function instruments(): TasklineInstruments {
  const provider = metrics.getMeterProvider();
  if (provider === cachedProvider && cached) return cached;
  const meter = provider.getMeter(SCOPE);
  cachedProvider = provider;
  cached = {
    taskOutcomes: meter.createCounter(METRIC.taskOutcomes, {
      description: 'Capture tasks ended, by task name and outcome status.',
      unit: '{task}',
    }),
    taskAttempts: meter.createHistogram(METRIC.taskAttempts, {
      description: 'Attempts a capture task used before its outcome, by task name and status.',
      unit: '{attempt}',
      advice: { explicitBucketBoundaries: [0, 1, 2, 3, 4, 5, 8] },
    }),
    reprompts: meter.createCounter(METRIC.reprompts, {
      description: 'Re-prompts spoken by capture tasks, by task name and kind.',
      unit: '{reprompt}',
    }),
    modelCallsAvoided: meter.createCounter(METRIC.modelCallsAvoided, {
      description: 'Caller turns a parser answered without calling the model, by task name.',
      unit: '{call}',
    }),
    stepDuration: meter.createHistogram(METRIC.stepDuration, {
      description: 'Time one flow step took on the call clock, by flow, step and result.',
      unit: 'ms',
    }),
    flowResults: meter.createCounter(METRIC.flowResults, {
      description: 'Flow runs ended, by flow name and status.',
      unit: '{flow}',
    }),
    delegationQueueDepth: meter.createUpDownCounter(METRIC.delegationQueueDepth, {
      description: 'Delegations waiting for a free slot in a TaskManager.',
      unit: '{delegation}',
    }),
    delegationLatency: meter.createHistogram(METRIC.delegationLatency, {
      description:
        'Time from a delegation being created to its end, by sub-agent, mode and status.',
      unit: 'ms',
    }),
    delegationOutcomes: meter.createCounter(METRIC.delegationOutcomes, {
      description: 'Delegations ended, by sub-agent type and status.',
      unit: '{delegation}',
    }),
    workerDuration: meter.createHistogram(METRIC.workerDuration, {
      description: 'Time a worker spent executing one delegated sub-task, by agent and status.',
      unit: 'ms',
    }),
  };
  return cached;
}

/** Adds to a counter, never throwing into the call (a broken exporter is not the caller's problem). */
export function count(
  pick: (i: TasklineInstruments) => Counter | UpDownCounter,
  value: number,
  attrs: Attributes,
): void {
  try {
    pick(instruments()).add(value, attrs);
  } catch {
    // metrics are best effort
  }
}

/** Records a histogram value (best effort, like {@link count}). */
export function observe(
  pick: (i: TasklineInstruments) => Histogram,
  value: number,
  attrs: Attributes,
): void {
  try {
    pick(instruments()).record(value, attrs);
  } catch {
    // metrics are best effort
  }
}
