/**
 * Long-term memory: AGENTS.md files on the backend, loaded into the instructions when the
 * agent starts and updated by the agent itself with `edit_file` under the rules below. With
 * a store backend namespaced by tenant and caller (SqliteFileStore / PostgresFileStore with
 * `user` = the caller), what a caller asked the agent to remember is there on their next call.
 */
import { type FileBackend, FileError } from './tools/files/backend.js';
import { normalizePath } from './tools/files/paths.js';
import type { FileToolsState } from './tools/files/state.js';

/** Where memory lives by default. */
export const DEFAULT_MEMORY_PATH = '/memories/AGENTS.md';
/** Longest memory text put into the instructions (characters, all files together). */
export const DEFAULT_MAX_MEMORY_CHARS = 8_000;

/** Options of memory. */
export interface MemoryOptions {
  /** A backend that holds the memory files (e.g. a store per caller), mounted at /memories/. */
  backend?: FileBackend;
  /** Memory files, loaded in order (default ["/memories/AGENTS.md"]). */
  paths?: readonly string[];
  /** Longest memory text in the instructions (default 8,000 characters). */
  maxChars?: number;
}

/** A memory file as loaded. */
export interface MemoryFile {
  path: string;
  /** Its text (empty when the file does not exist yet). */
  content: string;
  exists: boolean;
}

/**
 * Reads the memory files. Each one read is marked as read in `state`, so the agent can
 * `edit_file` it without reading it first (it saw it in its instructions).
 */
export async function loadMemory(
  backend: FileBackend,
  paths: readonly string[],
  state?: FileToolsState,
): Promise<MemoryFile[]> {
  const out: MemoryFile[] = [];
  for (const raw of paths) {
    const path = normalizePath(raw);
    try {
      const content = await backend.read(path);
      state?.markRead(path, content);
      out.push({ path, content, exists: true });
    } catch (err) {
      if (err instanceof FileError && err.code === 'not_found') {
        out.push({ path, content: '', exists: false });
        continue;
      }
      throw err;
    }
  }
  return out;
}

/** The memory section of the instructions: the files' text and the rules for editing them. */
export function memoryPrompt(
  files: readonly MemoryFile[],
  maxChars = DEFAULT_MAX_MEMORY_CHARS,
): string {
  if (files.length === 0) return '';
  let room = maxChars;
  const shown = files.map((f) => {
    if (!f.exists)
      return `### ${f.path}\n(empty: create it with write_file when there is something to remember)`;
    const text =
      f.content.length <= room
        ? f.content
        : `${f.content.slice(0, Math.max(0, room))}\n… (cut; read_file ${f.path} for the rest)`;
    room = Math.max(0, room - f.content.length);
    return `### ${f.path}\n${text.trim() === '' ? '(empty)' : text.trim()}`;
  });
  return [
    '## Memory',
    'These files are your long-term memory; they were loaded at the start of this call:',
    ...shown,
    'Rules for memory:',
    '- When the caller tells you a lasting preference or fact about themselves ("call me Sam",',
    '  "I prefer email", "my usual branch is Elm Street"), or corrects something stored, update',
    `  the file with edit_file (or write_file if it does not exist yet) before you answer.`,
    '- Keep it short: one line per fact, grouped under headings; replace outdated lines instead',
    '  of adding contradictions. Do not store the conversation itself, or one-off requests.',
    '- Never store secrets: card or account numbers, PINs, passwords, security answers, codes.',
    '- Use what is stored without reading it out; do not tell the caller you are saving notes',
    '  unless they ask.',
  ].join('\n');
}
