/**
 * `GET /health` for `taskline delegations serve`: no API key, one bounded probe per dependency
 * (the records store, the event bus), 200 when all answer in time and 503 naming the ones that
 * did not. Load balancers and orchestrators call it; it reveals no records.
 */
import type { FastifyInstance } from 'fastify';
import { type Clock, systemClock, type TimerHandle } from '../../core/clock.js';
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
}

/** Options of {@link registerHealth}. */
export interface HealthOptions {
  /** Probes by name (`store`, `bus`, …). */
  probes: Record<string, HealthProbe>;
  /** Longest wait for one probe (default 2,000 ms); a slower one counts as down. */
  timeoutMs?: number;
  clock?: Clock;
}

/** Runs every probe at once, each bounded by `timeoutMs`; never rejects. */
export async function runHealthChecks(
  options: HealthOptions,
): Promise<{ ok: boolean; checks: Record<string, HealthCheck> }> {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const entries = await Promise.all(
    Object.entries(options.probes).map(async ([name, probe]): Promise<[string, HealthCheck]> => {
      const started = clock.now();
      let timer: TimerHandle | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(probe),
          new Promise((_, reject) => {
            timer = clock.setTimer(timeoutMs, () =>
              reject(new Error(`no answer within ${timeoutMs} ms`)),
            );
          }),
        ]);
        return [name, { ok: true, ms: clock.now() - started }];
      } catch (error) {
        return [name, { ok: false, ms: clock.now() - started, error: errorMessage(error) }];
      } finally {
        timer?.cancel();
      }
    }),
  );
  const checks = Object.fromEntries(entries);
  return { ok: entries.every(([, c]) => c.ok), checks };
}

/** Registers `GET /health` (public: `config.public`, so the auth hook lets it through). */
export function registerHealth(app: FastifyInstance, options: HealthOptions): void {
  app.get('/health', { config: { public: true } }, async (_request, reply) => {
    const { ok, checks } = await runHealthChecks(options);
    reply.header('cache-control', 'no-store');
    if (ok) return { success: true, data: { status: 'ok', checks } };
    const down = Object.entries(checks)
      .filter(([, c]) => !c.ok)
      .map(([name, c]) => `${name} (${c.error})`);
    return reply.code(503).send({
      success: false,
      code: 'unavailable',
      message: `Not ready: ${down.join(', ')} unreachable.`,
      data: { status: 'unavailable', checks },
    });
  });
}
