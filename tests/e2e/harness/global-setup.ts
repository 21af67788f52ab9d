/**
 * The e2e suite's shared parts, started once for all its files (vitest `globalSetup`): one
 * livekit-server on the suite's ports and, when a SIP call can be made here, a Redis of the
 * suite's own (harness/redis.ts: never the machine's, whose pub/sub other suites share) that
 * the server routes through and one livekit-sip beside it; all stopped by PID after the run. Files run
 * at the same time against them, each with its own workers (agent names of their own),
 * rooms, trunks and phones; a file that kills its server starts one of its own
 * (`liveKitSuite({ ownServer: true })`). What is missing is left to the files, which skip
 * with the reason (or fail under CI=true).
 */
import type { TestProject } from 'vitest/node';
import { type SuiteRedis, startRedis } from './redis.js';
import { type LiveKitServer, serverBinary, startLiveKitServer } from './server.js';
import { type SipService, sipProblem, startSipService } from './sip.js';

/** What the global setup hands the files (`inject('liveKitShared')`). */
export interface SharedLiveKit {
  url: string;
  httpUrl: string;
  apiKey: string;
  apiSecret: string;
  pid: number;
  log: string;
  /** The Redis it routes through, when it does. */
  redis?: string;
  /** The livekit-sip beside it, when one runs. */
  sip?: { pid: number; log: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    liveKitShared: SharedLiveKit | null;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const binary = serverBinary();
  if ('missing' in binary) {
    // The files say why they skip (or fail under CI=true).
    project.provide('liveKitShared', null);
    return async () => undefined;
  }
  const redis: SuiteRedis | undefined = (await sipProblem()) ? undefined : await startRedis();
  let started: LiveKitServer | undefined;
  let sip: SipService | undefined;
  try {
    started = await startLiveKitServer(binary.path, { redis: redis?.address });
    if (redis) sip = await startSipService(started, redis.address);
  } catch (error) {
    await started?.stop();
    await redis?.stop();
    throw error;
  }
  const server = started;
  const { url, httpUrl, apiKey, apiSecret, pid, log } = server;
  project.provide('liveKitShared', {
    url,
    httpUrl,
    apiKey,
    apiSecret,
    pid,
    log,
    redis: redis?.address,
    ...(sip ? { sip: { pid: sip.pid, log: sip.log } } : {}),
  });
  return async () => {
    await sip?.stop();
    await server.stop();
    await redis?.stop();
  };
}
