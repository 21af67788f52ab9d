/**
 * The suite's child-process logs (harness/child-log.ts) keep every line a process and the
 * processes it forked print, and are never written after they were closed: a worker's job
 * processes print after the worker exited, and a line written after the file ended was an
 * uncaught "write after end" that made vitest exit 1 with every test passed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logChild } from './harness/child-log.js';

const dir = mkdtempSync(join(tmpdir(), 'taskline-child-log-'));

function exited(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('a child process log', () => {
  it('keeps what a forked process prints after its parent exited, and closes after it', async () => {
    const path = join(dir, 'forked.log');
    // The parent exits at once; the process it forked (as a worker forks its job processes,
    // stdio inherited) goes on printing to the same pipes.
    const child = spawn(
      'sh',
      [
        '-c',
        '(i=0; while [ $i -lt 5000 ]; do i=$((i+1)); echo job-line $i; done; echo done >&2) & exit 0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: string[] = [];
    const log = logChild(child, path, (line) => lines.push(line));
    await exited(child);
    await log.closed;
    const kept = readFileSync(path, 'utf8').trim().split('\n');
    expect(kept).toHaveLength(5001);
    expect(kept).toContain('job-line 5000');
    expect(kept).toContain('done');
    expect(lines).toEqual(kept);
  });

  it('keeps stderr that is written after stdout ended', async () => {
    const path = join(dir, 'stderr.log');
    const child = spawn('sh', ['-c', 'echo out; exec 1>&-; sleep 0.2; echo late >&2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = logChild(child, path);
    await log.closed;
    expect(readFileSync(path, 'utf8')).toBe('out\nlate\n');
  });
});
