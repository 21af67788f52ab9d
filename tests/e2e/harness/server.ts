/**
 * A real `livekit-server` for the e2e suite: the binary scripts/livekit-tools.sh built from
 * the Go module proxy (cached outside the repo), started on loopback in dev mode (keys
 * devkey / secret) with this suite's own ports from a config file, and stopped by PID.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { logChild } from './child-log.js';
import { freeTcpPort, freeUdpPort } from './ports.js';

/** Where the suite's logs and config go (kept after the run, for a failed CI job). */
export const E2E_DIR = resolve(process.env.TASKLINE_E2E_DIR ?? '.tmp/e2e');

/** The ports one livekit-server listens on. */
export interface ServerPorts {
  /** HTTP and WebSocket (signalling, the server API). */
  http: number;
  /** RTC over TCP. */
  rtcTcp: number;
  /** One UDP port, multiplexed for every peer connection. */
  rtcUdp: number;
}

/**
 * The ports of the suite's shared server (override with TASKLINE_LIVEKIT_PORT / _RTC_TCP /
 * _RTC_UDP; a file's own server takes free ports the system picks: {@link ownServerPorts}).
 */
export const PORTS: ServerPorts = {
  http: Number(process.env.TASKLINE_LIVEKIT_PORT ?? 17880),
  rtcTcp: Number(process.env.TASKLINE_LIVEKIT_RTC_TCP ?? 17881),
  rtcUdp: Number(process.env.TASKLINE_LIVEKIT_RTC_UDP ?? 17900),
};

/**
 * Free ports for a server a test file starts for itself (one it may kill), beside the shared
 * server: the system picks them (a TCP port free for HTTP, another for RTC over TCP, a UDP
 * one), so files running at once never collide with each other or with the shared server.
 */
export async function ownServerPorts(): Promise<ServerPorts> {
  const http = await freeTcpPort();
  let rtcTcp = await freeTcpPort();
  while (rtcTcp === http) rtcTcp = await freeTcpPort();
  return { http, rtcTcp, rtcUdp: await freeUdpPort() };
}

/** The dev-mode credentials livekit-server uses when its config names no keys. */
export const DEV_KEYS = { apiKey: 'devkey', apiSecret: 'secret' } as const;

const HOW_TO_GET =
  'build it with `bash scripts/livekit-tools.sh` (Go 1.26; 3-4 minutes the first time, cached after)';

/** The cached server binary, or why there is none (a sentence a person can act on). */
export function serverBinary(): { path: string } | { missing: string } {
  const fromEnv = process.env.TASKLINE_LIVEKIT_SERVER;
  if (fromEnv) {
    return existsSync(fromEnv)
      ? { path: fromEnv }
      : { missing: `TASKLINE_LIVEKIT_SERVER=${fromEnv} does not exist` };
  }
  try {
    const path = execFileSync('bash', ['scripts/livekit-tools.sh', '--path', 'server'], {
      encoding: 'utf8',
    }).trim();
    if (path) return { path };
  } catch {
    // not built: the script exits non-zero and prints nothing
  }
  return { missing: `livekit-server v1.13.5 is not built on this machine; ${HOW_TO_GET}` };
}

/** A running livekit-server. */
export interface LiveKitServer {
  /** ws:// URL for workers and participants. */
  url: string;
  /** http:// URL for the server API (livekit-server-sdk clients). */
  httpUrl: string;
  apiKey: string;
  apiSecret: string;
  pid: number;
  /** Its log file. */
  log: string;
  /** Stops it (SIGTERM, then SIGKILL after `graceMs`); resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
  /** Kills it at once (SIGKILL: the server going away); resolves when it exited. */
  kill(): Promise<void>;
}

/** How the server is started: its ports, through Redis (for livekit-sip), posting webhooks. */
export interface ServerStartOptions {
  /** Redis host:port to route through (livekit-sip needs it). */
  redis?: string;
  /** URLs the server posts its webhooks to (signed with the dev key). */
  webhooks?: readonly string[];
  /** Its ports (default {@link PORTS}). */
  ports?: ServerPorts;
}

/** The server's config: its own ports on loopback, no TURN, rooms that close soon when empty. */
function configYaml({ redis, webhooks, ports = PORTS }: ServerStartOptions): string {
  return [
    ...(redis ? ['redis:', `  address: ${redis}`] : []),
    ...(webhooks?.length
      ? ['webhook:', `  api_key: ${DEV_KEYS.apiKey}`, `  urls: ${JSON.stringify(webhooks)}`]
      : []),
    `port: ${ports.http}`,
    'bind_addresses: ["127.0.0.1"]',
    'rtc:',
    `  tcp_port: ${ports.rtcTcp}`,
    `  udp_port: ${ports.rtcUdp}`,
    '  use_external_ip: false',
    '  enable_loopback_candidate: true',
    '  node_ip: 127.0.0.1',
    'turn:',
    '  enabled: false',
    'room:',
    '  empty_timeout: 20',
    '  departure_timeout: 5',
    'logging:',
    '  level: info',
    '',
  ].join('\n');
}

/** Resolves when `url` answers HTTP, or rejects after `timeoutMs`; fails fast if `child` exits. */
async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `exited (code ${code}, signal ${signal})`;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`livekit-server ${exited} before it answered`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`livekit-server did not answer at ${url} within ${timeoutMs} ms`);
}

/**
 * Starts livekit-server in dev mode with the suite's config; logs go to E2E_DIR. With
 * `redis` (host:port) it routes through Redis, which livekit-sip needs to reach it; with
 * `webhooks` it posts its webhooks to those URLs.
 */
export async function startLiveKitServer(
  binary: string,
  options: ServerStartOptions = {},
): Promise<LiveKitServer> {
  mkdirSync(E2E_DIR, { recursive: true });
  const ports = options.ports ?? PORTS;
  // Something else answering on our port would be mistaken for our server: refuse instead.
  const taken = await fetch(`http://127.0.0.1:${ports.http}`, {
    signal: AbortSignal.timeout(1_000),
  })
    .then(() => true)
    .catch(() => false);
  if (taken) {
    throw new Error(
      `port ${ports.http} already answers HTTP: another livekit-server? Stop it, or set TASKLINE_LIVEKIT_PORT (and _RTC_TCP, _RTC_UDP).`,
    );
  }
  const config = join(E2E_DIR, `livekit-${ports.http}.yaml`);
  const log = join(E2E_DIR, `livekit-server-${ports.http}.log`);
  writeFileSync(config, configYaml(options));
  const child = spawn(binary, ['--dev', '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  logChild(child, log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const httpUrl = `http://127.0.0.1:${ports.http}`;
  try {
    await waitForHttp(httpUrl, child, 30_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}; see ${log}`);
  }
  const pid = child.pid!;
  return {
    url: `ws://127.0.0.1:${ports.http}`,
    httpUrl,
    ...DEV_KEYS,
    pid,
    log,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
