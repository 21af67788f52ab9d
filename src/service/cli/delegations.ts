import { parseArgs } from 'node:util';
import { log } from '@livekit/agents';
import { isTasklineError, TasklineError } from '../../core/errors.js';
import { startLogger } from '../../core/log.js';
import { ApiKeys } from '../api/auth.js';
import { type PrometheusMetrics, startPrometheusMetrics } from '../api/metrics.js';
import { createDelegationsApi, type DelegationsApi, type ServerLimits } from '../api/server.js';
import { InProcessDelegationBus } from '../bus/in-process.js';
import type { DelegationBus } from '../bus/types.js';
import { type ExpiryChecker, startExpiryChecker } from '../expiry.js';
import type { DurableDelegationStore } from '../stores/change.js';

const USAGE = `usage: taskline delegations serve [options]

  Serves the delegation records API — the published wire contract (routes under
  /delegations, NATS events on each agent's subject with --nats) — and a WebSocket of changes
  (/delegations/events).

  --db FILE            SQLite database (default ./taskline-delegations.db)
  --postgres URL       use PostgreSQL instead of SQLite (for several API/worker processes)
  --nats URL           publish events on NATS JetStream instead of in-process
  --prefix NAME        table prefix and NATS JetStream subject/stream prefix (default taskline)
  --contract-prefix P  publish the contract's events on P.<agent> instead of <agent>
  --no-contract-events publish no contract events on NATS (JetStream only)
  --port N             port (default 8787; 0 picks a free one)
  --host ADDR          address to bind (default 127.0.0.1)
  --keys FILE          API keys JSON; default: the TASKLINE_API_KEYS environment variable
                       {"keys":[{"key":"<16+ chars>","agent":"voice-bot"},{"key":"…","admin":true}]}
  --body-limit BYTES   largest request body (default 262144)
  --request-timeout-ms N   a request must arrive whole within N ms (default 30000; 408)
  --max-connections N      open connections in all (default 1024; more get 503)
  --max-connections-per-ip N  open connections from one address (default 256; 0: no cap,
                       e.g. behind a proxy that is the only client)
  --max-websockets N   WebSocket clients in all (default 1000)
  --max-websockets-per-key N  WebSocket clients of one key (default 32; more get 429)
  --expiry-ms N        how often overdue delegations are expired (default 1000)
  --no-metrics         do not serve Prometheus metrics at /metrics

  Also served: GET /health (no key: store and bus reachable, 200 or 503), GET /metrics
  (admin key; Prometheus text), the live console at /console, and POST /calls/events for
  voice processes to report live calls. One structured log line per request (keys and PII
  masked).`;

/** Parsed `taskline delegations serve` options. */
export interface ServeOptions {
  db: string;
  postgres?: string;
  nats?: string;
  prefix: string;
  /** Contract events on `<contractPrefix>.<agent>` (default bare agent names); false: none. */
  contract: false | { prefix?: string };
  port: number;
  host: string;
  keys: ApiKeys;
  bodyLimit?: number;
  expiryMs: number;
  /** Serve Prometheus metrics at /metrics (default true; needs the OpenTelemetry peers). */
  metrics?: boolean;
  /** Time limits and connection caps (defaults: DEFAULT_LIMITS of the API). */
  limits?: ServerLimits;
}

function positiveInt(value: string | undefined, name: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new TasklineError(
      'invalid_argument',
      `--${name} takes a whole number ≥ ${min}; got ${value}.`,
    );
  }
  return n;
}

/** Parses the arguments after `serve` (keys from `--keys` or `TASKLINE_API_KEYS`). */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): ServeOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      db: { type: 'string' },
      postgres: { type: 'string' },
      nats: { type: 'string' },
      prefix: { type: 'string' },
      'contract-prefix': { type: 'string' },
      'no-contract-events': { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      keys: { type: 'string' },
      'body-limit': { type: 'string' },
      'expiry-ms': { type: 'string' },
      'no-metrics': { type: 'boolean' },
      'request-timeout-ms': { type: 'string' },
      'max-connections': { type: 'string' },
      'max-connections-per-ip': { type: 'string' },
      'max-websockets': { type: 'string' },
      'max-websockets-per-key': { type: 'string' },
    },
  });
  if (positionals.length > 0) {
    throw new TasklineError('invalid_argument', `Unexpected argument ${positionals[0]}.\n${USAGE}`);
  }
  if (values.db !== undefined && values.postgres !== undefined) {
    throw new TasklineError('invalid_argument', 'Use --db or --postgres, not both.');
  }
  let keys: ApiKeys;
  if (values.keys !== undefined) keys = ApiKeys.fromFile(values.keys);
  else if (env.TASKLINE_API_KEYS) keys = ApiKeys.parse(env.TASKLINE_API_KEYS, 'TASKLINE_API_KEYS');
  else {
    throw new TasklineError(
      'invalid_argument',
      'No API keys: pass --keys keys.json or set TASKLINE_API_KEYS (see --help for the format).',
    );
  }
  const bodyLimit = positiveInt(values['body-limit'], 'body-limit');
  const limits: ServerLimits = {};
  const set = <K extends keyof ServerLimits>(key: K, value: number | undefined) => {
    if (value !== undefined) limits[key] = value;
  };
  set('requestTimeoutMs', positiveInt(values['request-timeout-ms'], 'request-timeout-ms', 100));
  set('maxConnections', positiveInt(values['max-connections'], 'max-connections'));
  set(
    'maxConnectionsPerIp',
    positiveInt(values['max-connections-per-ip'], 'max-connections-per-ip', 0),
  );
  set('maxWebSockets', positiveInt(values['max-websockets'], 'max-websockets'));
  set(
    'maxWebSocketsPerKey',
    positiveInt(values['max-websockets-per-key'], 'max-websockets-per-key'),
  );
  return {
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    db: values.db ?? 'taskline-delegations.db',
    ...(values.postgres !== undefined ? { postgres: values.postgres } : {}),
    ...(values.nats !== undefined ? { nats: values.nats } : {}),
    prefix: values.prefix ?? 'taskline',
    contract: values['no-contract-events']
      ? false
      : values['contract-prefix'] !== undefined
        ? { prefix: values['contract-prefix'] }
        : {},
    port: positiveInt(values.port, 'port', 0) ?? 8787,
    host: values.host ?? '127.0.0.1',
    keys,
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    expiryMs: positiveInt(values['expiry-ms'], 'expiry-ms') ?? 1_000,
    metrics: values['no-metrics'] !== true,
  };
}

/** A running delegations server and how to stop it. */
export interface DelegationsServer {
  url: string;
  api: DelegationsApi;
  store: DurableDelegationStore;
  bus: DelegationBus;
  /** One line saying where it listens and on what. */
  description: string;
  close(): Promise<void>;
}

/** Opens the store and bus, starts the expiry checker and the API; the caller closes it. */
export async function startDelegationsServer(options: ServeOptions): Promise<DelegationsServer> {
  const tablePrefix = `${options.prefix.replace(/[^A-Za-z0-9_]/g, '_')}_`;
  let store: DurableDelegationStore;
  if (options.postgres !== undefined) {
    const { PostgresDelegationStore } = await import('../stores/postgres.js');
    store = await PostgresDelegationStore.open({
      connectionString: options.postgres,
      prefix: tablePrefix,
    });
  } else {
    const { SqliteDelegationStore } = await import('../stores/sqlite.js');
    store = await SqliteDelegationStore.open({ path: options.db, prefix: tablePrefix });
  }
  let bus: DelegationBus | undefined;
  let expiry: ExpiryChecker | undefined;
  let api: DelegationsApi | undefined;
  let metrics: PrometheusMetrics | undefined;
  let notice = '';
  try {
    if (options.metrics !== false) {
      try {
        metrics = await startPrometheusMetrics();
      } catch (error) {
        if (!isTasklineError(error, 'missing_dependency')) throw error;
        notice = `; no /metrics: ${error.message}`;
      }
    }
    if (options.nats !== undefined) {
      const { NatsDelegationBus } = await import('../bus/nats.js');
      bus = await NatsDelegationBus.connect({
        servers: options.nats,
        prefix: options.prefix,
        contract: options.contract,
      });
    } else {
      bus = new InProcessDelegationBus();
    }
    expiry = startExpiryChecker(store, { intervalMs: options.expiryMs });
    api = await createDelegationsApi({
      store,
      bus,
      keys: options.keys,
      ...(metrics ? { metrics } : {}),
      ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
    });
    const url = await api.listen({ port: options.port, host: options.host });
    const where = options.postgres !== undefined ? 'postgres' : `sqlite ${options.db}`;
    const via = options.nats !== undefined ? `nats ${options.nats}` : 'in-process events';
    const running = { api, bus, expiry, metrics };
    return {
      url,
      api,
      store,
      bus,
      description: `taskline delegations: listening on ${url} (${where}, ${via}); console at ${url}/console/${notice}`,
      async close() {
        running.expiry.stop();
        await running.api.close();
        await running.metrics?.close();
        await running.bus.close();
        await store.close();
      },
    };
  } catch (error) {
    expiry?.stop();
    await api?.close().catch(() => {});
    await metrics?.close().catch(() => {});
    await bus?.close().catch(() => {});
    await store.close();
    throw error;
  }
}

function ensureLogger(): void {
  try {
    log();
  } catch {
    startLogger({ level: 'info' });
  }
}

/**
 * `taskline delegations <command>`: `serve` runs the API until SIGINT/SIGTERM. Returns the
 * process exit code (0 after a clean stop or --help, 2 for usage errors, 1 for failures).
 */
export async function delegationsMain(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command !== 'serve') {
    const problem =
      command === undefined ? 'missing subcommand' : `unknown subcommand "${command}"`;
    process.stderr.write(`taskline delegations: ${problem}\n${USAGE}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: ServeOptions;
  try {
    options = parseServeArgs(rest);
  } catch (error) {
    process.stderr.write(
      `taskline delegations: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 2;
  }
  try {
    ensureLogger();
    const server = await startDelegationsServer(options);
    process.stdout.write(`${server.description}\n`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    process.stdout.write(`taskline delegations: ${signal}, shutting down\n`);
    await server.close();
    return 0;
  } catch (error) {
    process.stderr.write(
      `taskline delegations: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
}
