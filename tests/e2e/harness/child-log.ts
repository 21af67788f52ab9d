/**
 * A child process's output kept line by line in a log file, closed only once nothing can
 * write to it any more. A process's 'exit' is not that moment: its stdout and stderr are
 * pipes that may still hold data, and processes it forked with inherited stdio (a worker's
 * job processes) keep writing to them after it exited. Ending the file on 'exit' made a late
 * line a "write after end" error that nothing caught, and vitest exited 1 with every test
 * passed; piping both streams into one file ended it when the first of them ended.
 */
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** What {@link logChild} gives back. */
export interface ChildLog {
  /** The log file. */
  readonly path: string;
  /** Resolves once every pipe of the child has ended and the file is flushed and closed. */
  readonly closed: Promise<void>;
}

/**
 * Writes each line of `child`'s stdout and stderr to `path` (appending) and hands it to
 * `onLine`; ends the file when both pipes have ended (every process holding them is gone).
 */
export function logChild(
  child: ChildProcess,
  path: string,
  onLine?: (line: string) => void,
): ChildLog {
  const out = createWriteStream(path, { flags: 'a' });
  const streams = [child.stdout, child.stderr].filter((s) => s !== null);
  let open = streams.length;
  // 'close' follows 'finish' (and an error, which is left to fail the run: none is expected).
  const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
  const ended = () => {
    open -= 1;
    if (open === 0) out.end();
  };
  for (const stream of streams) {
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => {
      out.write(`${line}\n`);
      onLine?.(line);
    });
    // readline says 'close' after the last line of an ended input.
    lines.once('close', ended);
  }
  if (open === 0) out.end();
  return { path, closed };
}
