// Which of the services some suites need (PostgreSQL, NATS JetStream) answer here. A suite
// that needs one is written `describe.skipIf(await serviceMissing('postgres'))(...)`: when
// the service is missing it is skipped and the reason is printed, except under CI=true
// (as .ci/run sets), where a missing service fails the test file instead.
import { connect } from 'node:net';
import pg from 'pg';

/** A service some test suites need. */
export type Service = 'postgres' | 'nats';

/** The PostgreSQL the tests use (TASKLINE_PG_URL, or the local one). */
export const PG_URL = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The NATS server the tests use (TASKLINE_NATS_URL, or the local one). */
export const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';

const PROBE_TIMEOUT_MS = 3_000;
const HOW_TO_START =
  'start it with `bash scripts/ci-services.sh --nats` (root or passwordless sudo installs missing packages)';

const probes = new Map<Service, Promise<string | undefined>>();

/**
 * Why `service` cannot be used here, or undefined when it answers. The reason is printed
 * once per test file. Under CI=true a missing service throws, so the file fails loudly.
 */
export async function serviceMissing(service: Service): Promise<string | undefined> {
  let probe = probes.get(service);
  if (!probe) {
    probe = (service === 'postgres' ? probePostgres() : probeNats()).then((problem) => {
      if (!problem) return undefined;
      const reason = `${problem}; ${HOW_TO_START}`;
      if (process.env.CI === 'true') {
        throw new Error(`CI=true and a service the tests need is missing: ${reason}`);
      }
      console.warn(`[skipped: needs ${service}] ${reason}`);
      return reason;
    });
    probes.set(service, probe);
  }
  return probe;
}

async function probePostgres(): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: PG_URL,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL does not answer at ${redact(PG_URL)} (${messageOf(error)})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A NATS server greets every connection with an INFO line; anything else is not NATS. */
function probeNats(): Promise<string | undefined> {
  const [host = '127.0.0.1', port = '4222'] = NATS_URL.replace(/^nats:\/\//, '').split(':');
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(
      () => done(`NATS does not answer at ${NATS_URL} within ${PROBE_TIMEOUT_MS} ms`),
      PROBE_TIMEOUT_MS,
    );
    socket.once('data', (chunk) =>
      done(
        chunk.toString().startsWith('INFO')
          ? undefined
          : `something that is not NATS listens at ${NATS_URL}`,
      ),
    );
    socket.once('error', (error) =>
      done(`NATS does not answer at ${NATS_URL} (${messageOf(error)})`),
    );
  });
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length) return messageOf(error.errors[0]);
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:****@');
}
