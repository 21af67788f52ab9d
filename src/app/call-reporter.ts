/**
 * Feeds the live console's Calls and Flows tabs from a voice process: each change of a call
 * (step started, step done, call ended) is POSTed to `taskline delegations serve` at
 * `/calls/events`. It never blocks or fails a call: `send` returns at once, only the latest
 * state of each call waits (older ones are replaced), at most a few requests are in flight,
 * each bounded by a timeout, and failures are counted, not thrown.
 */
import { TasklineError } from '../core/errors.js';
import { checkOptions, checkRange, millis, type OptionTable, whole } from '../core/options.js';
import { toMermaid } from '../flows/mermaid.js';
import { buildReport } from '../flows/report.js';
import type { FlowTask } from '../flows/runner.js';
import type { CallEvent } from './call-event.js';

export type { CallEvent } from './call-event.js';

/** Options of {@link CallReporter}. */
export interface CallReporterOptions {
  /** Base URL of `taskline delegations serve` (`http://127.0.0.1:8787`). */
  url: string;
  /** An API key of the server (an agent key: the console shows its calls to it and admins). */
  apiKey: string;
  /** Longest wait for one POST: 100 to 60,000 ms (default 2,000 ms). */
  timeoutMs?: number;
  /**
   * Most calls with an unsent update, 1 to 100,000; past it the oldest update is dropped
   * (default 200).
   */
  maxPending?: number;
  /** Most POSTs in flight at once: 1 to 64 (default 4). */
  maxInFlight?: number;
}

/** The bounds of {@link CallReporterOptions}, with their accepted range and default. */
const REPORTER_BOUNDS = {
  timeoutMs: { range: millis(100, 60_000), default: 2_000 },
  maxPending: { range: whole(1, 100_000), default: 200 },
  maxInFlight: { range: whole(1, 64), default: 4 },
} as const satisfies OptionTable;

/** How long {@link CallReporter.flush} may wait: up to 10 minutes. */
const FLUSH_WAIT = millis(0, 600_000);

/** Posts call events to the console's server, bounded and best effort (see the module). */
export class CallReporter {
  private readonly pending = new Map<string, CallEvent>();
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private readonly idle: Array<() => void> = [];
  /** Updates sent and accepted, refused or failed, and replaced or dropped unsent. */
  readonly stats = { sent: 0, failed: 0, dropped: 0 };
  /** The last failure, for a health line or a log. */
  lastError?: string;

  constructor(private readonly options: CallReporterOptions) {
    let base: URL | undefined;
    try {
      base = new URL(options.url);
    } catch {}
    if (base?.protocol !== 'http:' && base?.protocol !== 'https:') {
      throw new TasklineError(
        'invalid_argument',
        `CallReporter url must be the server's base URL (http://host:port); got ${options.url}.`,
      );
    }
    if (!options.apiKey) {
      throw new TasklineError(
        'invalid_argument',
        'CallReporter needs apiKey (a key of the server).',
      );
    }
    // NaN would leave the queue uncapped or nothing ever sent: refused, with the range.
    const bounds = checkOptions(REPORTER_BOUNDS, options, { owner: 'CallReporter' });
    this.endpoint = new URL('/calls/events', base).toString();
    this.timeoutMs = bounds.timeoutMs;
    this.maxPending = bounds.maxPending;
    this.maxInFlight = bounds.maxInFlight;
  }

  /** Queues a call's new state (replacing its unsent one) and returns at once. */
  send(event: CallEvent): void {
    if (this.pending.has(event.call_id)) {
      this.pending.delete(event.call_id);
      this.stats.dropped += 1;
    }
    this.pending.set(event.call_id, event);
    while (this.pending.size > this.maxPending) {
      this.pending.delete(this.pending.keys().next().value as string);
      this.stats.dropped += 1;
    }
    this.pump();
  }

  /**
   * Resolves when nothing is queued or in flight, or after `timeoutMs` (0 to 600,000; default
   * 5 s); a `timeoutMs` outside that range rejects (`invalid_argument`).
   */
  async flush(timeoutMs = 5_000): Promise<void> {
    checkRange('timeoutMs', timeoutMs, FLUSH_WAIT, { owner: 'CallReporter.flush' });
    if (this.inFlight === 0 && this.pending.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.idle.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.pending.size > 0) {
      const [id, event] = this.pending.entries().next().value as [string, CallEvent];
      this.pending.delete(id);
      this.inFlight += 1;
      void this.post(event).finally(() => {
        this.inFlight -= 1;
        this.pump();
        if (this.inFlight === 0 && this.pending.size === 0) {
          for (const resolve of this.idle.splice(0)) resolve();
        }
      });
    }
  }

  private async post(event: CallEvent): Promise<void> {
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(event),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) this.stats.sent += 1;
      else {
        this.stats.failed += 1;
        this.lastError = `HTTP ${response.status} from ${this.endpoint}`;
      }
    } catch (error) {
      this.stats.failed += 1;
      this.lastError = error instanceof Error ? error.message : String(error);
    }
  }
}

/**
 * Reports a running flow to the console: its current step, each step's outcome, the flow's
 * Mermaid diagram with the call's trace so far, and its per-step report. Returns `stop`, which
 * reports the call as ended (with a final outcome, e.g. the flow's status) and unsubscribes.
 */
export function reportCalls<R>(
  task: FlowTask<R>,
  reporter: CallReporter | CallReporterOptions,
  options: { callId?: string } = {},
): (outcome?: string) => void {
  const sink = reporter instanceof CallReporter ? reporter : new CallReporter(reporter);
  const flow = task.definition;
  const state = (extra: Pick<CallEvent, 'step' | 'outcome' | 'state'>): CallEvent | undefined => {
    const snapshot = task.snapshot;
    const callId = options.callId ?? snapshot?.callId;
    if (!callId) return undefined;
    const report = snapshot ? buildReport(snapshot) : undefined;
    return {
      call_id: callId,
      flow: flow.name,
      ...extra,
      ...(report
        ? {
            diagram: toMermaid(flow, { trace: report }),
            report,
          }
        : { diagram: toMermaid(flow) }),
    };
  };
  let last: { step?: string; outcome?: string } = {};
  const push = (extra: Pick<CallEvent, 'step' | 'outcome' | 'state'>) => {
    const event = state(extra);
    if (event) sink.send(event);
  };
  const offs = [
    task.on('step_started', ({ step }) => {
      last = { ...last, step };
      push({ ...last, state: 'active' });
    }),
    task.on('step_completed', (record) => {
      last = { step: record.step, outcome: `${record.step}: ${record.outcome}` };
      push({ ...last, state: 'active' });
    }),
  ];
  return (outcome) => {
    for (const off of offs) off();
    push({ ...last, ...(outcome !== undefined ? { outcome } : {}), state: 'ended' });
  };
}
