import { TasklineError } from '../../../../core/errors.js';
import { FileError } from '../backend.js';

/** Default cap on one file, in UTF-8 bytes (5 MiB). */
export const DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024;

/** Default cap on everything one backend holds, in bytes (64 MiB). */
export const DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024;

/** Human-readable byte count for error messages ("1.5 MB"). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1).replace(/\.0$/, '')} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`;
}

/** Checks written text: a string without NUL bytes (only text files are supported). */
export function checkTextContent(content: unknown): string {
  if (typeof content !== 'string') {
    throw new FileError('invalid_argument', 'file content must be a string of text');
  }
  if (content.includes('\u0000')) {
    throw new FileError('binary', 'the content contains NUL bytes; only text files are supported');
  }
  return content;
}

/** Throws `too_large` when a write would break the per-file or total cap. */
export function checkSizeCaps(
  path: string,
  bytes: number,
  previousBytes: number,
  usedBytes: number,
  caps: { maxFileBytes: number; maxTotalBytes: number },
): void {
  if (bytes > caps.maxFileBytes) {
    throw new FileError(
      'too_large',
      `${path} would be ${formatBytes(bytes)}; the limit per file is ${formatBytes(caps.maxFileBytes)}. ` +
        'Split the content into several files',
    );
  }
  if (usedBytes - previousBytes + bytes > caps.maxTotalBytes) {
    throw new FileError(
      'too_large',
      `writing ${path} would exceed the ${formatBytes(caps.maxTotalBytes)} total for these files; ` +
        'delete files you no longer need first',
    );
  }
}

/** Checks a size-cap option: a positive finite number or undefined (use the default). */
export function sizeOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new TasklineError('invalid_argument', `${name} must be a positive number of bytes`);
  }
  return value;
}
