/**
 * `GET /health` for `taskline delegations serve`: no API key, one bounded probe per dependency
 * (the records store, the event bus), 200 when all answer in time and 503 naming the ones that
 * did not. Load balancers and orchestrators call it; it reveals no records, and no error text
 * either (a driver's error can name internal hosts or users): the answer says which dependency is
 * down and whether it failed or timed out, and the server's log has the cause.
 */
import type { FastifyInstance } from 'fastify';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
import { maskPII } from '../../core/pii.js';
import { errorMessage } from '../bus/log.js';

/** A dependency check: resolves when the dependency answers, rejects (or hangs) when not. */
export type HealthProbe = () => Promise<unknown>;

/** One probe's result as `GET /health` reports it. */
export interface HealthCheck {
  ok: boolean;
  /** How long the probe took (ms on the server's clock), or the timeout when it hung. */
  ms: number;
  /** Why it failed (only when `ok` is false). */
  error?: string;
  /** Set when the probe did not answer within the timeout. */
  timedOut?: boolean;
}

/** A probe that did not answer in time (told apart from one that failed). */
class ProbeTimeout extends Error {}

/** Options of {@link registerHealth}. */
export interface HealthOptions {
  /** Probes by name (`store`, `bus`, …). */
  probes: Record<string, HealthProbe>;
  /** Longest wait for one probe (default 2,000 ms); a slower one counts as down. */
  timeoutMs?: number;
  clock?: Clock;
}

const DEFAULT_TIMEOUT_MS = 2_000;

/** Runs every probe at once, each bounded by `timeoutMs`; never rejects. */
export async function runHealthChecks(
  options: HealthOptions,
): Promise<{ ok: boolean; checks: Record<string, HealthCheck> }> {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const entries = await Promise.all(
    Object.entries(options.probes).map(async ([name, probe]): Promise<[string, HealthCheck]> => {
      const started = clock.now();
      let timer: TimerHandle | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(probe),
          new Promise((_, reject) => {
            timer = clock.setTimer(timeoutMs, () =>
              reject(new ProbeTimeout(`no answer within ${timeoutMs} ms`)),
            );
          }),
        ]);
        return [name, { ok: true, ms: clock.now() - started }];
      } catch (error) {
        const check: HealthCheck = {
          ok: false,
          ms: clock.now() - started,
          error: errorMessage(error),
        };
        if (error instanceof ProbeTimeout) check.timedOut = true;
        return [name, check];
      } finally {
        timer?.cancel();
      }
    }),
  );
  const checks = Object.fromEntries(entries);
  return { ok: entries.every(([, c]) => c.ok), checks };
}

/** What an unauthenticated caller learns of one probe: up or down, how long, and why in a word. */
export interface PublicHealthCheck {
  ok: boolean;
  ms: number;
  /** `timeout` when the probe did not answer in time, `error` when it failed. */
  reason?: 'timeout' | 'error';
}

/** Registers `GET /health` (public: `config.public`, so the auth hook lets it through). */
export function registerHealth(app: FastifyInstance, options: HealthOptions): void {
  app.get('/health', { config: { public: true } }, async (request, reply) => {
    const { ok, checks } = await runHealthChecks(options);
    reply.header('cache-control', 'no-store');
    const shown: Record<string, PublicHealthCheck> = {};
    for (const [name, c] of Object.entries(checks)) {
      shown[name] = c.ok
        ? { ok: true, ms: c.ms }
        : { ok: false, ms: c.ms, reason: c.timedOut ? 'timeout' : 'error' };
    }
    if (ok) return { success: true, data: { status: 'ok', checks: shown } };
    const down = Object.entries(checks).filter(([, c]) => !c.ok);
    request.log.warn(
      { health: Object.fromEntries(down.map(([name, c]) => [name, maskPII(c.error ?? '')])) },
      'health check failed',
    );
    return reply.code(503).send({
      success: false,
      code: 'unavailable',
      message: `Not ready: ${down.map(([name]) => `${name} (${shown[name]?.reason})`).join(', ')} unreachable; the server log has the cause.`,
      data: { status: 'unavailable', checks: shown },
    });
  });
}
