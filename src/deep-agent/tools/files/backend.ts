/** Stable codes for file-tool errors; they reach the model verbatim. */
export type FileErrorCode =
  | 'not_found'
  | 'is_directory'
  | 'exists'
  | 'no_match'
  | 'ambiguous_match'
  | 'too_large'
  | 'outside_root'
  | 'invalid_path'
  | 'binary'
  | 'read_required'
  /** A glob or grep pattern is malformed, too long, or (regex) could backtrack without bound. */
  | 'invalid_pattern'
  /** A search ran out of its time budget or was cancelled. */
  | 'timeout'
  /** A tool argument is out of range (e.g. identical old_string and new_string). */
  | 'invalid_argument';

/** An error a file backend or file tool raises; its code is stable and model-visible. */
export class FileError extends Error {
  readonly code: FileErrorCode;
  constructor(code: FileErrorCode, message: string) {
    super(message);
    this.name = 'FileError';
    this.code = code;
  }
}

/** One entry of a listing: a virtual absolute path ("/notes/a.md"), never a host path. */
export interface FileInfo {
  path: string;
  isDir: boolean;
  /** Size in bytes (files only). */
  size?: number;
  /** Last modification, ms since epoch. */
  modifiedAt?: number;
}

/** One grep hit. `line` is 1-based. */
export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

/**
 * A line a regex grep did not search because it is longer than the regex may scan in one go
 * (see `GrepRegex.maxLineChars`): it might hold a match, so the caller says so.
 */
export interface SkippedLine {
  path: string;
  /** 1-based line number. */
  line: number;
  /** Length of the line, in UTF-16 code units. */
  chars: number;
  /** The longest line this regex searches. */
  maxChars: number;
}

/** Options for {@link FileBackend.grep}. */
export interface GrepOptions {
  /** Directory (virtual path) to search under; "/" by default. */
  path?: string;
  /** Only files whose path matches this glob. */
  glob?: string;
  /** Treat `pattern` as a regular expression (bounded; see the file tools). Literal by default. */
  regex?: boolean;
  /** Stop after this many matches in total. */
  maxCount?: number;
  signal?: AbortSignal;
  /** Told of every line a regex search skipped as too long (it might have matched). */
  onSkippedLine?: (skipped: SkippedLine) => void;
}

/**
 * Where the file tools keep files. Every path is a normalized virtual absolute path
 * ("/a/b.txt"); backends reject anything else with `invalid_path` and never touch
 * storage outside their own root. Text is UTF-8.
 */
export interface FileBackend {
  /** Short name for logs and errors ("memory", "disk", "sqlite", ...). */
  readonly kind: string;
  /** Direct children of a directory, sorted by path. `not_found` if it does not exist. */
  ls(path: string): Promise<FileInfo[]>;
  /** Metadata, or undefined when nothing is at `path`. */
  stat(path: string): Promise<FileInfo | undefined>;
  /** The whole text of a file. `not_found`, `is_directory`, `binary`, `too_large`. */
  read(path: string): Promise<string>;
  /** Creates or replaces a file (parents are implicit). `is_directory`, `too_large`. */
  write(path: string, content: string): Promise<void>;
  /** Removes a file. `not_found`, `is_directory`. */
  delete(path: string): Promise<void>;
  /** Files (not directories) under `base` whose path matches the glob, sorted by path. */
  glob(pattern: string, base?: string): Promise<FileInfo[]>;
  /** Lines matching `pattern` in files under `options.path`, in path then line order. */
  grep(pattern: string, options?: GrepOptions): Promise<GrepMatch[]>;
}
