import { FileError } from './backend.js';

/** Longest virtual path accepted, in characters; longer ones are `invalid_path`. */
export const MAX_PATH_LENGTH = 4096;

/** Longest single path segment accepted, in UTF-8 bytes (the common filesystem limit). */
export const MAX_SEGMENT_BYTES = 255;

/** The virtual root every backend is confined to. */
export const ROOT = '/';

// C0 controls and DEL: a NUL truncates host paths, and newlines would corrupt line-based output.
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Turns what a model (or caller) wrote into the one canonical virtual path: absolute,
 * `/`-separated, no `.`/`..`/empty segments, no trailing slash. Relative input is taken
 * relative to `/`. Throws `invalid_path` (empty, NUL or control characters, backslashes,
 * too long) or `outside_root` (`..` climbing above `/`). Every backend calls this first.
 */
export function normalizePath(input: unknown): string {
  if (typeof input !== 'string') {
    throw new FileError('invalid_path', 'a path must be a string such as "/notes/todo.md"');
  }
  if (input.length === 0) {
    throw new FileError(
      'invalid_path',
      'the path is empty; give an absolute path like "/notes.md"',
    );
  }
  if (input.length > MAX_PATH_LENGTH) {
    throw new FileError(
      'invalid_path',
      `the path is ${input.length} characters long; the limit is ${MAX_PATH_LENGTH}`,
    );
  }
  if (input.includes('\u0000')) {
    throw new FileError('invalid_path', 'the path contains a NUL byte; remove it');
  }
  if (CONTROL_CHARS.test(input)) {
    throw new FileError(
      'invalid_path',
      'the path contains a control character (such as a newline or tab); remove it',
    );
  }
  if (LONE_SURROGATE.test(input)) {
    // Disks and databases store text as UTF-8, where every lone surrogate becomes U+FFFD:
    // two different paths would name one file.
    throw new FileError(
      'invalid_path',
      'the path is not valid Unicode (it contains a lone surrogate); use only whole characters',
    );
  }
  if (input.includes('\\')) {
    throw new FileError(
      'invalid_path',
      `${JSON.stringify(input)} contains a backslash; separate directories with "/"`,
    );
  }
  const out: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) {
        throw new FileError(
          'outside_root',
          `${JSON.stringify(input)} climbs above "/"; only paths inside the files root can be used`,
        );
      }
      out.pop();
      continue;
    }
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) {
      throw new FileError(
        'invalid_path',
        `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes; use a shorter name`,
      );
    }
    out.push(segment);
  }
  return ROOT + out.join('/');
}

/**
 * True when a directory entry's name can appear in a virtual path as is: not empty, `.` or
 * `..`, no `/`, backslash or control character, at most {@link MAX_SEGMENT_BYTES} bytes. The
 * cheap per-entry form of what {@link normalizePath} enforces, for directory walks.
 */
export function isPlainName(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false;
  if (name.includes('/') || name.includes('\\') || CONTROL_CHARS.test(name)) return false;
  return (
    name.length * 3 <= MAX_SEGMENT_BYTES || Buffer.byteLength(name, 'utf8') <= MAX_SEGMENT_BYTES
  );
}

/** The segments of a normalized path ("/a/b" gives ["a", "b"]; "/" gives []). */
export function pathSegments(path: string): string[] {
  return path === ROOT ? [] : path.slice(1).split('/');
}

/** Joins a normalized directory and a relative tail, normalizing the result. */
export function joinPath(dir: string, ...rest: string[]): string {
  return normalizePath([dir, ...rest].join('/'));
}

/** The parent of a normalized path; the root is its own parent. */
export function parentPath(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? ROOT : path.slice(0, i);
}

/** The last segment of a normalized path ("" for the root). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** True when normalized `path` is `dir` itself or lies under it. */
export function isWithin(path: string, dir: string): boolean {
  if (dir === ROOT) return true;
  return path === dir || path.startsWith(dir + '/');
}

/** `path` relative to `dir` without a leading slash ("" when equal); both normalized, path within dir. */
export function relativeTo(dir: string, path: string): string {
  if (dir === ROOT) return path.slice(1);
  return path === dir ? '' : path.slice(dir.length + 1);
}
