import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { REASON_QUESTION, THANKS_LINE } from '../../examples/survey/index.js';
import { SqliteCheckpointStore } from '../../src/flows/checkpoints/sqlite.js';
import type { CheckpointInfo } from '../../src/flows/runner.js';
import { startSurvey } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-sigkill-'));
const child = fileURLToPath(new URL('./fixtures/survey-child.ts', import.meta.url));
let proc: ChildProcess | undefined;
afterAll(() => {
  if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the first checkpoint line the child prints that matches `match`. */
function checkpointFrom(p: ChildProcess, match: (c: CheckpointInfo) => boolean) {
  return new Promise<CheckpointInfo>((resolve, reject) => {
    let stderr = '';
    p.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    p.once('exit', (code, signal) =>
      reject(new Error(`child exited early (${code ?? signal}): ${stderr}`)),
    );
    createInterface({ input: p.stdout! }).on('line', (line) => {
      const event = JSON.parse(line) as { event: string } & CheckpointInfo;
      if (event.event === 'checkpoint' && match(event)) resolve(event);
    });
  });
}

it('resumes a survey whose process was killed with SIGKILL, with nothing lost', {
  timeout: 60_000,
}, async () => {
  const path = join(dir, 'calls.db');
  const callId = 'sigkill-call';
  proc = spawn(process.execPath, ['--import', 'tsx', child, path, callId], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = proc;
  const cp = await checkpointFrom(p, (c) => c.step === 'score');
  expect(cp).toMatchObject({ flow: 'survey', callId, status: 'running', position: 'reason' });

  // Mid-survey: consent and score are answered, the reason question is open.
  const exited = new Promise((resolve) => p.once('exit', (_code, signal) => resolve(signal)));
  p.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');

  const checkpoints = await SqliteCheckpointStore.open({ path });
  try {
    const saved = await checkpoints.load({ flow: 'survey', callId });
    expect(saved?.version).toBe(cp.version);
    expect(saved?.state.entries).toEqual({ consent: { value: true }, score: { value: 3 } });

    const s = await startSurvey({ checkpoints, callId });
    try {
      expect(s.caller.agentLines).toEqual([
        "Welcome back. We'll pick up where we left off: the reason for your score.",
        REASON_QUESTION,
      ]);
      await s.caller.say('the wait was too long');
      expect(s.caller.agentLines.at(-1)).toBe(THANKS_LINE);
      expect(s.agent.result).toMatchObject({
        status: 'completed',
        value: { consent: true, score: 3, reason: 'the wait was too long' },
        report: { resumes: 1, path: ['consent', 'score', 'reason', 'thanks'] },
      });
      expect(s.agent.result?.report.steps.map((r) => [r.step, r.outcome])).toEqual([
        ['consent', 'ok'],
        ['score', 'ok'],
        ['reason', 'ok'],
        ['thanks', 'ok'],
      ]);
    } finally {
      await s.caller.close();
    }
  } finally {
    await checkpoints.close();
  }
});
