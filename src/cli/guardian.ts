import { parseArgs } from 'node:util';
import { log } from '@livekit/agents';
import type { StartGuardianOptions } from '../app/guardian/server.js';
import { TasklineError } from '../core/errors.js';
import { startLogger } from '../core/log.js';

const USAGE = `usage: taskline guardian [options]

  Keeps calls alive when their worker dies. Self-hosted LiveKit does not re-dispatch the jobs
  of a worker that died: the caller hears silence. The guardian hears of a lost agent — from
  the job's lifeline (each job of a roomAgent opens one when TASKLINE_GUARDIAN_URL is set)
  or from the server's webhooks — and, while a caller is still in the room and no other agent
  serves it, dispatches the same agent name into the room again. The new job resumes the
  call from its checkpoint.

  --port N               port (default 7890; 0 picks a free one)
  --host ADDR            address to bind (default 127.0.0.1)
  --max-redispatches N   re-dispatches per call at most (default 2; 0 only logs)
  --agent NAME           guard only this agent name (repeat for several; default all)
  --join-within-ms N     how long a re-dispatch may take to bring its agent in before
                         another report may dispatch again (default 60000)

  environment: LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET (as the workers have them).

  Point the server's webhook at it (livekit.yaml):
    webhook:
      api_key: <LIVEKIT_API_KEY>
      urls: ["http://127.0.0.1:7890/webhook"]
  and give each worker TASKLINE_GUARDIAN_URL=http://127.0.0.1:7890.

  Prints one JSON line per decision ({"guardian": {...}}) on stdout; stops on SIGINT/SIGTERM.`;

function whole(value: string | undefined, name: string, min: number): number | undefined {
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

/** Parses `taskline guardian` arguments and the LiveKit environment. */
export function parseGuardianArgs(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): StartGuardianOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'max-redispatches': { type: 'string' },
      agent: { type: 'string', multiple: true },
      'join-within-ms': { type: 'string' },
    },
  });
  if (positionals.length > 0) {
    throw new TasklineError('invalid_argument', `Unexpected argument ${positionals[0]}.`);
  }
  const missing = ['LIVEKIT_URL', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET'].filter((k) => !env[k]);
  if (missing.length > 0) {
    throw new TasklineError(
      'invalid_argument',
      `Set ${missing.join(', ')}: the guardian reads rooms and dispatches agents on the LiveKit server.`,
    );
  }
  const port = whole(values.port, 'port', 0);
  const max = whole(values['max-redispatches'], 'max-redispatches', 0);
  const joinWithin = whole(values['join-within-ms'], 'join-within-ms', 1_000);
  return {
    url: env.LIVEKIT_URL!,
    apiKey: env.LIVEKIT_API_KEY!,
    apiSecret: env.LIVEKIT_API_SECRET!,
    host: values.host ?? '127.0.0.1',
    port: port ?? 7890,
    ...(max !== undefined ? { maxRedispatches: max } : {}),
    ...(values.agent?.length ? { agentNames: values.agent } : {}),
    ...(joinWithin !== undefined ? { joinWithinMs: joinWithin } : {}),
  };
}

/** `taskline guardian`: runs until SIGINT/SIGTERM; returns the exit code. */
export async function guardianMain(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: StartGuardianOptions;
  try {
    options = parseGuardianArgs(argv);
  } catch (error) {
    process.stderr.write(
      `taskline guardian: ${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`,
    );
    return 2;
  }
  try {
    try {
      log();
    } catch {
      startLogger({ level: process.env.LOG_LEVEL ?? 'info' });
    }
    const { startGuardian } = await import('../app/guardian/server.js');
    const running = await startGuardian({
      ...options,
      onDecision: (d) => process.stdout.write(`${JSON.stringify({ guardian: d })}\n`),
    });
    process.stdout.write(
      `taskline guardian: listening on ${running.url} (webhook ${running.webhookUrl}, at most ${running.guardian.maxRedispatches} re-dispatch(es) per call)\n`,
    );
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    process.stdout.write(`taskline guardian: ${signal}, shutting down\n`);
    await running.close();
    return 0;
  } catch (error) {
    process.stderr.write(
      `taskline guardian: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
}
