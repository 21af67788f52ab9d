/**
 * Metrics for `taskline delegations serve`: an OpenTelemetry MeterProvider whose reader is the
 * Prometheus exporter, served on the API's own port at `GET /metrics` (the exporter's own HTTP
 * server is not started: one port, one auth story). The provider is registered as the global
 * one, so `metrics.getMeter('taskline')` anywhere in the process (taskline's instruments, the
 * app's own) is scraped too. Server-side instruments: request count and latency by route.
 */
import { metrics } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { loadOptional } from '../../core/optional.js';
import type { Identity } from './auth.js';
import { fail } from './envelope.js';

/** A Prometheus text snapshot source plus the provider behind it. */
export interface PrometheusMetrics {
  /** The metrics in Prometheus text exposition format 0.0.4. */
  scrape(): Promise<string>;
  /** A meter of the provider (for the server's own instruments). */
  meter(name: string): MeterLike;
  /** Unregisters the global provider and shuts it down. */
  close(): Promise<void>;
}

/** The part of an OpenTelemetry Meter the server uses. */
export interface MeterLike {
  createCounter(
    name: string,
    options?: { description?: string; unit?: string },
  ): { add(value: number, attributes?: Record<string, string | number>): void };
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string },
  ): { record(value: number, attributes?: Record<string, string | number>): void };
}

const FEATURE = 'metrics of taskline delegations serve';

/**
 * Installs a MeterProvider with a Prometheus reader as the process's global provider. Needs
 * the optional peers `@opentelemetry/sdk-metrics` and `@opentelemetry/exporter-prometheus`
 * (a `missing_dependency` error names any that is absent); `@opentelemetry/api` is a dependency.
 */
export async function startPrometheusMetrics(
  options: { global?: boolean } = {},
): Promise<PrometheusMetrics> {
  const [sdk, prom] = await Promise.all([
    loadOptional(() => import('@opentelemetry/sdk-metrics'), '@opentelemetry/sdk-metrics', FEATURE),
    loadOptional(
      () => import('@opentelemetry/exporter-prometheus'),
      '@opentelemetry/exporter-prometheus',
      FEATURE,
    ),
  ]);
  const exporter = new prom.PrometheusExporter({ preventServerStart: true });
  const provider = new sdk.MeterProvider({ readers: [exporter] });
  const global = options.global ?? true;
  if (global) metrics.setGlobalMeterProvider(provider);
  const serializer = new prom.PrometheusSerializer();
  return {
    async scrape() {
      const { resourceMetrics } = await exporter.collect();
      return serializer.serialize(resourceMetrics);
    },
    meter: (name) => provider.getMeter(name),
    async close() {
      if (global) metrics.disable();
      await provider.shutdown();
    },
  };
}

/** Options of {@link registerMetrics}. */
export interface MetricsRouteOptions {
  metrics: PrometheusMetrics;
  identityOf(request: import('fastify').FastifyRequest): Identity | undefined;
}

/**
 * Records `taskline.http.server.requests` and `taskline.http.server.duration` (ms) by method,
 * route and status, and serves `GET /metrics` to admin keys only: the numbers cover every
 * agent's traffic, which an agent key may not see (Prometheus sends the key with
 * `authorization: { credentials: <key> }`).
 */
export function registerMetrics(app: FastifyInstance, options: MetricsRouteOptions): void {
  const meter = options.metrics.meter('taskline.http');
  const requests = meter.createCounter('taskline.http.server.requests', {
    description: 'HTTP requests answered by the delegations API',
  });
  const duration = meter.createHistogram('taskline.http.server.duration', {
    description: 'Time to answer an HTTP request of the delegations API',
    unit: 'ms',
  });
  app.addHook('onResponse', async (request, reply) => {
    const attributes = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
    };
    requests.add(1, attributes);
    duration.record(reply.elapsedTime, attributes);
  });
  app.get('/metrics', async (request, reply) => {
    if (options.identityOf(request)?.admin !== true) {
      return fail(reply, 403, 'forbidden', 'GET /metrics needs an admin API key.');
    }
    const text = await options.metrics.scrape();
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
  });
}
