// The wire contract, checked by a client that knows nothing of taskline: tests/contract/client.py
// (Python 3 standard library: urllib + a raw-socket NATS subscriber) walks every row of the
// contract table with the exact example payloads and a Bearer key, on SQLite and on
// PostgreSQL + NATS, against `taskline delegations serve`.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/service/api/auth.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import { type ServeOptions, startDelegationsServer } from '../../src/service/cli/delegations.js';
import { PostgresDelegationStore } from '../../src/service/stores/postgres.js';

const CLIENT = fileURLToPath(new URL('./client.py', import.meta.url));
const NATS_URL = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';
const PG_URL = process.env.TASKLINE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN = `contract-admin-${randomBytes(8).toString('hex')}`;
const AGENT_A = `contract-agentA-${randomBytes(8).toString('hex')}`;
const AGENT_B = `contract-agentB-${randomBytes(8).toString('hex')}`;
const KEYS = new ApiKeys([
  { key: ADMIN, admin: true, name: 'contract-client' },
  { key: AGENT_A, agent: 'agentA' },
  { key: AGENT_B, agent: 'agentB' },
]);
const run = `ct${process.pid}_${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'taskline-contract-'));
const prefixes: string[] = [];

const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;
if (!python) {
  const why =
    'python3 is not installed; the contract client needs Python 3 (standard library only)';
  if (process.env.CI) throw new Error(why);
  console.warn(`[contract] skipped: ${why}`);
}

afterAll(async () => {
  for (const prefix of prefixes) {
    const bus = await NatsDelegationBus.connect({ servers: NATS_URL, prefix, contract: false });
    await bus.deleteStream();
    await bus.close();
    const store = await PostgresDelegationStore.open({
      connectionString: PG_URL,
      prefix: `${prefix}_`,
    });
    await store.dropTables();
    await store.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the Python client; resolves with its output lines and exit code (bounded by `timeoutMs`). */
function runClient(
  args: string[],
  timeoutMs = 60_000,
): Promise<{ code: number; lines: string[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [CLIENT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`contract client still running after ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, lines: out.trim().split('\n'), stderr: err });
    });
  });
}

/** Runs the client against a fresh server; resolves its PASS and FAIL lines. */
async function walkLines(
  options: Partial<ServeOptions>,
  clientArgs: (url: string) => string[],
): Promise<{ passed: string[]; failed: string[]; code: number; stderr: string; lines: string[] }> {
  const prefix = `${run}_${prefixes.length}`;
  prefixes.push(prefix);
  const server = await startDelegationsServer({
    db: join(dir, `${prefix}.db`),
    prefix,
    contract: {},
    port: 0,
    host: '127.0.0.1',
    keys: KEYS,
    expiryMs: 1_000,
    ...options,
  });
  try {
    const { code, lines, stderr } = await runClient(clientArgs(server.url));
    return {
      passed: lines.filter((l) => l.startsWith('PASS')),
      failed: lines.filter((l) => l.startsWith('FAIL')),
      code,
      stderr,
      lines,
    };
  } finally {
    await server.close();
  }
}

async function walk(
  options: Partial<ServeOptions>,
  clientArgs: (url: string) => string[],
): Promise<string[]> {
  const { passed, failed, code, stderr, lines } = await walkLines(options, clientArgs);
  expect(failed, `${lines.join('\n')}\n${stderr}`).toEqual([]);
  expect(code, stderr).toBe(0);
  expect(lines.at(-1)).toMatch(/^RESULT \d+ 0$/);
  return passed;
}

describe.skipIf(!python)('the wire contract, walked by a Python client', () => {
  it('on SQLite with NATS events, one admin Bearer key', { timeout: 90_000 }, async () => {
    const passed = await walk({ nats: NATS_URL }, (url) => [
      '--base',
      url,
      '--key',
      ADMIN,
      '--nats',
      NATS_URL,
    ]);
    expect(passed).toContain('PASS event: delegation_task on agentB, exact JSON');
    expect(passed).toContain('PASS event: delegation_result on agentA');
    expect(passed.length).toBeGreaterThanOrEqual(40);
  });

  it('on PostgreSQL + NATS, one admin Bearer key', { timeout: 90_000 }, async () => {
    const passed = await walk({ postgres: PG_URL, nats: NATS_URL }, (url) => [
      '--base',
      url,
      '--key',
      ADMIN,
      '--nats',
      NATS_URL,
    ]);
    expect(passed).toContain('PASS event: delegation_result on agentA');
    expect(passed.length).toBeGreaterThanOrEqual(40);
  });

  it('with per-agent keys: agentA sends, agentB reports (SQLite, in-process events)', {
    timeout: 90_000,
  }, async () => {
    const passed = await walk({}, (url) => [
      '--base',
      url,
      '--key',
      AGENT_A,
      '--target-key',
      AGENT_B,
    ]);
    expect(passed).toContain('PASS submit_result: delegation_result in the status map');
  });

  it('with per-agent keys on SQLite with NATS: agentA sends, agentB reports', {
    timeout: 90_000,
  }, async () => {
    const passed = await walk({ nats: NATS_URL }, (url) => [
      '--base',
      url,
      '--key',
      AGENT_A,
      '--target-key',
      AGENT_B,
      '--nats',
      NATS_URL,
    ]);
    expect(passed).toContain('PASS submit_result: delegation_result in the status map');
    expect(passed).toContain('PASS event: delegation_result on agentA');
  });

  it("the sender's key alone cannot move the target's stage or submit its result (403); every other row passes", {
    timeout: 90_000,
  }, async () => {
    const { passed, failed } = await walkLines({}, (url) => ['--base', url, '--key', AGENT_A]);
    const refused = failed.filter((l) => /^FAIL (status|submit_result): answer: 403 /.test(l));
    expect(refused).toHaveLength(2);
    for (const line of refused)
      expect(line).toMatch(/'success': False.*Only the target \(agentB\)/);
    // The other failures are the reads of what was refused: nothing was written.
    const others = failed.filter((l) => !refused.includes(l));
    for (const line of others) {
      expect(line).toMatch(/^FAIL (status: stored|query: status|submit_result: delegation_result)/);
    }
    expect(passed).toContain('PASS update: stored');
    expect(passed).toContain('PASS error envelope: bad key is 401');
  });

  it('with a subject prefix, events go to <prefix>.<agent>', { timeout: 90_000 }, async () => {
    const subjects = `${run}.agents`;
    const passed = await walk({ nats: NATS_URL, contract: { prefix: subjects } }, (url) => [
      '--base',
      url,
      '--key',
      ADMIN,
      '--nats',
      NATS_URL,
      '--subject-prefix',
      subjects,
    ]);
    expect(passed).toContain('PASS event: delegation_result on agentA');
  });
});
