/**
 * The Python sandbox's copy of the workspace. The interpreter has its own in-memory file
 * system; before a run the workspace files that changed since the interpreter last saw them
 * are sent in (compared by digest), and after it the files the run created, changed or
 * deleted are written back to the backend. A fresh interpreter starts from nothing.
 */
import { createHash } from 'node:crypto';
import { type FileBackend, FileError } from '../files/backend.js';
import { formatBytes } from '../files/backends/limits.js';
import { PYTHON_RESERVED_DIRS, type PythonResultMessage, type SyncedFile } from './protocol.js';

/** What happened to the files a run wrote. */
export interface SyncedFiles {
  /** Workspace paths the run created or changed, saved to the backend. */
  saved: string[];
  /** Workspace paths the run deleted, deleted in the backend too. */
  deleted: string[];
  /** Files that could not be saved, with the reason. */
  notSaved: { path: string; reason: string }[];
}

function digest(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('base64');
}

function reservedPath(path: string): boolean {
  return PYTHON_RESERVED_DIRS.some((r) => path === r || path.startsWith(`${r}/`));
}

/** Tracks what one interpreter holds of the workspace (see the module comment). */
export class WorkspaceMirror {
  /** Path → digest of what the interpreter holds. */
  readonly #synced = new Map<string, string>();

  constructor(
    private readonly backend: FileBackend,
    private readonly maxSyncBytes: number,
  ) {}

  /** The interpreter was replaced: it holds nothing yet. */
  forget(): void {
    this.#synced.clear();
  }

  /** The workspace changes the interpreter has not seen yet, or why they cannot be sent. */
  async changes(): Promise<{ put: SyncedFile[]; remove: string[] } | { error: string }> {
    let files: { path: string; size?: number }[];
    try {
      files = (await this.backend.glob('**/*', '/')).filter((f) => !f.isDir);
    } catch (err) {
      if (err instanceof FileError && err.code === 'not_found') files = [];
      else throw err;
    }
    const put: SyncedFile[] = [];
    const present = new Set<string>();
    let total = 0;
    for (const f of files) {
      if (reservedPath(f.path)) continue;
      total += f.size ?? 0;
      if (total > this.maxSyncBytes) {
        return {
          error:
            `python: the workspace holds more than ${formatBytes(this.maxSyncBytes)}, the most ` +
            'copied into Python; delete files you no longer need (large_tool_results, old drafts)',
        };
      }
      let content: string;
      try {
        content = await this.backend.read(f.path);
      } catch (err) {
        if (err instanceof FileError) continue; // unreadable here (too large, binary): not synced
        throw err;
      }
      present.add(f.path);
      const d = digest(content);
      if (this.#synced.get(f.path) === d) continue;
      this.#synced.set(f.path, d);
      put.push({ path: f.path, content });
    }
    const remove = [...this.#synced.keys()].filter((p) => !present.has(p));
    for (const p of remove) this.#synced.delete(p);
    return { put, remove };
  }

  /** Writes back what a run changed, and reports what could not be saved. */
  async writeBack(msg: PythonResultMessage): Promise<SyncedFiles> {
    const saved: string[] = [];
    const deleted: string[] = [];
    const notSaved: { path: string; reason: string }[] = [...msg.skipped];
    for (const f of msg.changed) {
      if (f.binary || f.content === undefined) {
        notSaved.push({ path: f.path, reason: 'binary: only UTF-8 text files can be saved' });
        this.#synced.delete(f.path);
        continue;
      }
      try {
        await this.backend.write(f.path, f.content);
        this.#synced.set(f.path, digest(f.content));
        saved.push(f.path);
      } catch (err) {
        if (!(err instanceof FileError)) throw err;
        notSaved.push({ path: f.path, reason: `${err.code}: ${err.message}` });
        this.#synced.delete(f.path);
      }
    }
    for (const path of msg.removed) {
      this.#synced.delete(path);
      try {
        await this.backend.delete(path);
        deleted.push(path);
      } catch (err) {
        if (!(err instanceof FileError)) throw err;
        if (err.code !== 'not_found')
          notSaved.push({ path, reason: `${err.code}: ${err.message}` });
      }
    }
    return { saved, deleted, notSaved };
  }
}
