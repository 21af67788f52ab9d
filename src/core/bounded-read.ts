/**
 * Reads a text file the user named (a scenario, a caller script) with a size cap: only a regular
 * file is read (a device such as /dev/zero, a pipe or a socket never ends, or blocks), its size
 * is checked before anything is read, and no more than the cap is ever read even if it grows.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { TasklineError, type TasklineErrorCode } from './errors.js';

/** Largest scenario file or caller script read (1 MiB). */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;

/** Options of {@link readTextFileCapped}. */
export interface CappedReadOptions {
  /** Largest size read, in bytes (default {@link MAX_INPUT_FILE_BYTES}). */
  maxBytes?: number;
  /** What the file is, for messages ("scenario file", "script"). */
  what: string;
  /** Error code for a file that is not there (default `not_found`). */
  missingCode?: TasklineErrorCode;
  /** Error code for a file that cannot be used (default `invalid_argument`). */
  badCode?: TasklineErrorCode;
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
    : `${Math.ceil(bytes / 1024)} KiB`;
}

/**
 * Reads `path` as UTF-8, refusing anything but a regular file of at most `maxBytes`. Each error's
 * message starts with the path; `details.problem` holds the sentence without it.
 */
export function readTextFileCapped(path: string, options: CappedReadOptions): string {
  const maxBytes = options.maxBytes ?? MAX_INPUT_FILE_BYTES;
  const bad = options.badCode ?? 'invalid_argument';
  const fail = (code: TasklineErrorCode, problem: string, details: Record<string, unknown> = {}) =>
    new TasklineError(code, `${path}: ${problem}`, { ...details, problem });
  let fd: number;
  try {
    // Non-blocking, so opening a FIFO with no writer returns at once instead of hanging.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new TasklineError(
        options.missingCode ?? 'not_found',
        `${path}: no such ${options.what}.`,
      );
    }
    throw new TasklineError(
      bad,
      `${path}: cannot read the ${options.what} (${code ?? String(error)}).`,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      const kind = stat.isDirectory()
        ? 'a folder'
        : stat.isFIFO()
          ? 'a pipe'
          : stat.isCharacterDevice() || stat.isBlockDevice()
            ? 'a device'
            : stat.isSocket()
              ? 'a socket'
              : 'a special file';
      throw fail(
        bad,
        `this is ${kind}; a ${options.what} must be a regular file (at most ${size(maxBytes)}).`,
      );
    }
    if (stat.size > maxBytes) {
      throw fail(
        'limit_exceeded',
        `the file is ${size(stat.size)}; a ${options.what} is at most ${size(maxBytes)}.`,
        { maxBytes, size: stat.size },
      );
    }
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let read = 0;
    for (;;) {
      const n = readSync(fd, buffer, read, buffer.length - read, null);
      if (n === 0) break;
      read += n;
      if (read > maxBytes) {
        throw fail(
          'limit_exceeded',
          `the file grew past ${size(maxBytes)} while it was read; a ${options.what} is at most ${size(maxBytes)}.`,
          { maxBytes },
        );
      }
    }
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
