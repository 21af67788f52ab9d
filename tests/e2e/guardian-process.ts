/**
 * `taskline guardian` as a child process of an e2e suite, started the way a user starts it
 * (`node bin/taskline.js guardian`, LIVEKIT_* in the environment): its decisions (one JSON
 * line each) are kept for assertions and waited on as events, bounded.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { GuardianDecision } from '../../src/app/guardian/guardian.js';
import { logChild } from './harness/child-log.js';
import { E2E_DIR, type LiveKitServer } from './harness/index.js';
import { waitFor } from './harness/wait.js';

/** A running guardian process. */
export interface GuardianProcess {
  readonly url: string;
  readonly lines: string[];
  /** Its decisions so far, each with the local time it was printed (`printedAt`, ms). */
  readonly decisions: Array<GuardianDecision & { printedAt: number }>;
  /** Waits (bounded) for a decision matching `match`. */
  decision(
    match: (d: GuardianDecision) => boolean,
    timeoutMs?: number,
  ): Promise<GuardianDecision & { printedAt: number }>;
  stop(): Promise<void>;
}

/** Starts `taskline guardian` on `port` for `server`; resolves once it listens. */
export async function startGuardianProcess(
  server: LiveKitServer,
  port: number,
  args: string[] = [],
): Promise<GuardianProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/taskline.js', 'guardian', '--port', String(port), ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        LIVEKIT_URL: server.url,
        LIVEKIT_API_KEY: server.apiKey,
        LIVEKIT_API_SECRET: server.apiSecret,
        LOG_LEVEL: 'info',
      },
    },
  );
  const lines: string[] = [];
  const decisions: GuardianProcess['decisions'] = [];
  const listeners = new Set<() => void>();
  logChild(child, join(E2E_DIR, `guardian-${port}.log`), (line) => {
    lines.push(line);
    if (line.startsWith('{"guardian":')) {
      decisions.push({
        ...(JSON.parse(line).guardian as GuardianDecision),
        printedAt: Date.now(),
      });
    }
    for (const l of listeners) l();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  child.once('exit', () => {
    for (const l of listeners) l();
  });
  await waitFor(
    () => lines.find((l) => l.startsWith('taskline guardian: listening on')),
    listeners,
    60_000,
    'the guardian to listen',
    () => (alive() ? undefined : `it exited: ${lines.slice(-5).join(' | ')}`),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    lines,
    decisions,
    decision: (match, timeoutMs = 30_000) =>
      waitFor(
        () => decisions.find(match),
        listeners,
        timeoutMs,
        `a guardian decision (so far: ${JSON.stringify(decisions)})`,
      ),
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
