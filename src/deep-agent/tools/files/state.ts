import { createHash } from 'node:crypto';

function digest(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('base64');
}

/**
 * What the file tools remember about one session (or sub-agent): which files the model has
 * read, and their content at that moment. `edit_file` refuses a file that was not read, or
 * that changed since it was read, so the model never edits text it has not seen.
 * Create one per session; a sub-agent gets its own.
 */
export class FileToolsState {
  readonly #read = new Map<string, string>();

  /** Records that `path` was read (or written) with this content. */
  markRead(path: string, content: string): void {
    this.#read.set(path, digest(content));
  }

  /** True when `path` was read in this session. */
  wasRead(path: string): boolean {
    return this.#read.has(path);
  }

  /** True when `path` was read and `content` is still what was read. */
  isCurrent(path: string, content: string): boolean {
    return this.#read.get(path) === digest(content);
  }

  /** Forgets `path` (after it is deleted). */
  forget(path: string): void {
    this.#read.delete(path);
  }

  /** Paths read so far, sorted. */
  get readPaths(): string[] {
    return [...this.#read.keys()].sort();
  }
}
