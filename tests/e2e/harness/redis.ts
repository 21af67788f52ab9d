/**
 * The suite's own Redis, which livekit-server and livekit-sip talk through. Not the
 * machine's: Redis pub/sub is not separated by database number, so two suites (or another
 * engineer's server) on one Redis hear each other's calls. Debian's `redis-server`
 * (scripts/livekit-tools.sh --sip installs it) on a free loopback port, no persistence,
 * stopped by PID.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { logChild } from './child-log.js';
import { freeTcpPort } from './ports.js';
import { E2E_DIR } from './server.js';

/** A running redis-server of the suite's. */
export interface SuiteRedis {
  /** host:port, for livekit-server's and livekit-sip's config. */
  readonly address: string;
  readonly pid: number;
  readonly log: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
}

/** The redis-server binary on PATH, or undefined. */
function redisServerBinary(): string | undefined {
  try {
    return execFileSync('bash', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Why the suite cannot start a Redis of its own (a sentence saying how to fix it), or undefined. */
export function redisProblem(): string | undefined {
  return redisServerBinary()
    ? undefined
    : "redis-server is not installed (livekit-sip needs one of the suite's own); install it with `bash scripts/livekit-tools.sh --sip` (Debian's redis-server)";
}

/** True when a Redis answers PING at `port` on loopback (bounded: 1 s). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 1_000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
    socket.once('error', () => done(false));
  });
}

/** Starts a redis-server on a free loopback port; resolves once it answers PING. */
export async function startRedis(timeoutMs = 15_000): Promise<SuiteRedis> {
  const binary = redisServerBinary();
  if (!binary) throw new Error(redisProblem());
  mkdirSync(E2E_DIR, { recursive: true });
  const port = await freeTcpPort();
  const log = join(E2E_DIR, `redis-${port}.log`);
  const child: ChildProcess = spawn(
    binary,
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      E2E_DIR,
      '--logfile',
      '',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  logChild(child, log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stop = async (graceMs = 5_000) => {
    if (!alive()) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  // redis-server has no readiness event but its answer: ask until it answers (bounded).
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(port))) {
    if (!alive()) throw new Error(`redis-server exited before it answered on ${port}; see ${log}`);
    if (Date.now() > deadline) {
      await stop(0);
      throw new Error(`redis-server did not answer on ${port} within ${timeoutMs} ms; see ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { address: `127.0.0.1:${port}`, pid: child.pid!, log, stop };
}
