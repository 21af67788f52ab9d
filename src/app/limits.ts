/**
 * A hard limit on the calls one worker process takes. Upstream reports a worker's load every
 * 2.5 s and the server stops sending jobs once it reaches the threshold, but a burst of
 * dispatches between two reports would all land on the same worker; so the job request
 * itself is refused too, counting the jobs running and those accepted but not yet running.
 * A refused request goes to another worker.
 */
import type { AgentServer, JobRequest } from '@livekit/agents';
import { TasklineError } from '../core/errors.js';
import { logLine } from '../core/log.js';

/** An accepted job is counted this long before it shows among the running ones. */
const ACCEPT_WINDOW_MS = 15_000;

/** The part of upstream's worker a limit reads. */
type Worker = Pick<AgentServer, 'activeJobs'>;

/** The `ServerOptions` fields of a call limit. */
export interface CallLimitOptions {
  /** Load reported to the server: calls in flight over the limit (1 = full). */
  loadFunc: (worker: AgentServer) => Promise<number>;
  /** Full at load 1. */
  loadThreshold: number;
  /** Accepts a job request only below the limit. */
  requestFunc: (request: JobRequest) => Promise<void>;
}

/** Counts a worker's calls in flight and refuses job requests at `maxCalls`. */
export class CallLimiter {
  readonly maxCalls: number;
  #worker: Worker | undefined;
  /** Jobs accepted and when (ms, `now()`). */
  readonly #accepted = new Map<string, number>();
  readonly #now: () => number;

  constructor(maxCalls: number, now: () => number = Date.now) {
    if (!Number.isInteger(maxCalls) || maxCalls < 1) {
      throw new TasklineError(
        'invalid_argument',
        `maxCalls must be a whole number of at least 1 (got ${String(maxCalls)}).`,
      );
    }
    this.maxCalls = maxCalls;
    this.#now = now;
  }

  /** Calls running or accepted and on their way. */
  inFlight(): number {
    const running = new Set(this.#worker?.activeJobs.map((j) => j.job.id) ?? []);
    const now = this.#now();
    for (const [id, at] of this.#accepted) {
      // Without the worker's view yet, nothing is forgotten: an over-count only refuses more.
      if (this.#worker && (running.has(id) || now - at > ACCEPT_WINDOW_MS)) {
        this.#accepted.delete(id);
      }
    }
    let count = running.size;
    for (const id of this.#accepted.keys()) if (!running.has(id)) count += 1;
    return count;
  }

  /** The load upstream reports: calls in flight over the limit, at most 1. */
  load(worker: Worker): number {
    this.#worker = worker;
    return Math.min(1, this.inFlight() / this.maxCalls);
  }

  /** Accepts the request below the limit, refuses it (to another worker) at the limit. */
  async request(request: JobRequest): Promise<void> {
    const calls = this.inFlight();
    if (calls >= this.maxCalls) {
      logLine('taskline.room', 'warn', 'job refused: the worker is at its call limit', {
        jobId: request.id,
        room: request.room?.name,
        calls,
        maxCalls: this.maxCalls,
      });
      await request.reject();
      return;
    }
    this.#accepted.set(request.id, this.#now());
    await request.accept();
  }

  /** The fields to put in upstream's `ServerOptions`. */
  options(): CallLimitOptions {
    return {
      loadFunc: async (worker) => this.load(worker),
      loadThreshold: 1,
      requestFunc: (request) => this.request(request),
    };
  }
}
