import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { type Clock, systemClock } from '../../../core/clock.js';
import { isTasklineError, TasklineError } from '../../../core/errors.js';
import { type FileBackend, FileError } from './backend.js';
import {
  collectSkipped,
  DEFAULT_MAX_LINE_CHARS,
  DEFAULT_READ_LIMIT,
  formatGrep,
  formatListing,
  formatReadPage,
  skippedNote,
  splitLines,
} from './format.js';
import { compileGlob, splitGlob } from './glob.js';
import { fitLargeResult } from './large-result.js';
import { normalizePath, ROOT } from './paths.js';
import { compileSearcher } from './search.js';
import { FileToolsState } from './state.js';

/** Default size (characters, about 4k tokens) above which a tool result is saved to a file. */
export const DEFAULT_LARGE_RESULT_CHARS = 16_000;

/** Where oversized tool results are saved, one file per tool call id. */
export { LARGE_RESULTS_DIR } from './large-result.js';

/** Default cap on grep matches per call. */
export const DEFAULT_GREP_MAX_COUNT = 1000;

/** Default time budget for one grep call. */
export const DEFAULT_GREP_TIMEOUT_MS = 10_000;

/** Options for {@link createFileTools}. */
export interface FileToolsOptions {
  /** Where the files live. */
  backend: FileBackend;
  /** What this session has read; pass your own to inspect it or share it. A new one otherwise. */
  state?: FileToolsState;
  /** Results longer than this many characters are saved and previewed (default 16,000). */
  largeResultChars?: number;
  /** Lines `read_file` returns when no `limit` is given (default 200). */
  readLimit?: number;
  /** `read_file` cuts longer lines to this many characters (default 2000). */
  maxLineChars?: number;
  /** Most matches one grep returns (default 1000); `max_count` can only lower it. */
  grepMaxCount?: number;
  /** grep stops with `timeout` after this long (default 10 s). */
  grepTimeoutMs?: number;
  /** Clock for the grep time budget (default: the wall clock). */
  clock?: Clock;
}

/** Converts any error the tools raise into what the model sees: `code: message`. */
export function toToolError(err: unknown): unknown {
  if (err instanceof FileError) return new llm.ToolError(`${err.code}: ${err.message}`);
  if (isTasklineError(err)) return new llm.ToolError(`${err.code}: ${err.message}`);
  return err;
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toToolError(err);
  }
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new TasklineError('invalid_argument', `${name} must be a whole number of at least 1`);
  }
  return value;
}

function optionalInt(
  name: string,
  value: number | null | undefined,
  min: number,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < min) {
    throw new FileError('invalid_argument', `${name} must be a whole number of at least ${min}`);
  }
  return value;
}

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

function replaceAll(text: string, needle: string, replacement: string): string {
  return text.split(needle).join(replacement);
}

const pathParam = z.string().describe('Absolute path of the file, e.g. "/notes/todo.md"');

/**
 * The deep-agent file tools as upstream function tools, in the object form an upstream
 * `Agent`/`AgentTask` takes as `tools`: `ls`, `read_file`, `write_file`, `edit_file`,
 * `delete_file`, `glob` and `grep`, with LangChain deepagents parameter names. Errors reach
 * the model as `llm.ToolError`s whose message starts with a stable code
 * (`not_found: /a.txt does not exist`). Results longer than `largeResultChars` are saved
 * under `/large_tool_results/<tool call id>` and replaced by a head/tail preview.
 */
export function createFileTools(options: FileToolsOptions) {
  const backend = options.backend;
  const state = options.state ?? new FileToolsState();
  const largeChars = positiveInt(
    'largeResultChars',
    options.largeResultChars,
    DEFAULT_LARGE_RESULT_CHARS,
  );
  const readLimit = positiveInt('readLimit', options.readLimit, DEFAULT_READ_LIMIT);
  const maxLineChars = positiveInt('maxLineChars', options.maxLineChars, DEFAULT_MAX_LINE_CHARS);
  const grepCap = positiveInt('grepMaxCount', options.grepMaxCount, DEFAULT_GREP_MAX_COUNT);
  const grepTimeoutMs = positiveInt(
    'grepTimeoutMs',
    options.grepTimeoutMs,
    DEFAULT_GREP_TIMEOUT_MS,
  );
  const clock = options.clock ?? systemClock;

  /** Saves an oversized result and returns its preview; small results pass through. */
  const fitResult = (result: string, toolCallId: string): Promise<string> =>
    fitLargeResult(backend, result, toolCallId, largeChars);

  return {
    ls: llm.tool({
      description:
        'List the files and directories directly inside a directory. Directories end with "/".',
      parameters: z.object({
        path: z.string().nullish().describe('Directory to list; "/" when omitted'),
      }),
      execute: ({ path }, { toolCallId }) =>
        guarded(async () => {
          const dir = normalizePath(path ?? ROOT);
          return fitResult(formatListing(dir, await backend.ls(dir)), toolCallId);
        }),
    }),

    read_file: llm.tool({
      description:
        'Read a text file. Each line comes back as "<line number><TAB><text>" (numbers start at ' +
        '1). Returns up to `limit` lines (default 200) starting at the 0-based line `offset`; a ' +
        'last line "(... N more lines; continue with offset=K)" says how to read on. Read a ' +
        'file before you edit or overwrite it.',
      parameters: z.object({
        file_path: pathParam,
        offset: z
          .number()
          .int()
          .min(0)
          .nullish()
          .describe('First line to read, 0-based (default 0)'),
        limit: z.number().int().min(1).nullish().describe('How many lines to read (default 200)'),
      }),
      execute: ({ file_path, offset, limit }) =>
        guarded(async () => {
          const p = normalizePath(file_path);
          const from = optionalInt('offset', offset, 0) ?? 0;
          const count = optionalInt('limit', limit, 1) ?? readLimit;
          const content = await backend.read(p);
          state.markRead(p, content);
          return formatReadPage(p, content, {
            offset: from,
            limit: count,
            maxLineChars,
            maxChars: largeChars,
          });
        }),
    }),

    write_file: llm.tool({
      description:
        'Create a text file (parent directories are created as needed). To replace an existing ' +
        'file, read it first; for small changes prefer edit_file.',
      parameters: z.object({
        file_path: pathParam,
        content: z.string().describe('The complete new text of the file'),
      }),
      execute: ({ file_path, content }) =>
        guarded(async () => {
          const p = normalizePath(file_path);
          const existing = await backend.stat(p);
          if (existing?.isDir) throw new FileError('is_directory', `${p} is a directory`);
          if (existing) {
            if (!state.wasRead(p)) {
              throw new FileError(
                'exists',
                `${p} already exists; read_file it first to replace it, or use edit_file`,
              );
            }
            if (!state.isCurrent(p, await backend.read(p))) {
              throw new FileError(
                'read_required',
                `${p} changed since you read it; read_file it again before replacing it`,
              );
            }
          }
          await backend.write(p, content);
          state.markRead(p, content);
          const lines = splitLines(content).length;
          const bytes = Buffer.byteLength(content, 'utf8');
          return `${existing ? 'Replaced' : 'Created'} ${p} (${lines} line${lines === 1 ? '' : 's'}, ${bytes} bytes).`;
        }),
    }),

    edit_file: llm.tool({
      description:
        'Replace exact text in a file you have read in this session. old_string must occur ' +
        'exactly once unless replace_all is true (add surrounding lines to make it unique). ' +
        'Copy text without the line-number prefix read_file shows.',
      parameters: z.object({
        file_path: pathParam,
        old_string: z.string().describe('The exact text to replace'),
        new_string: z.string().describe('The text to put in its place'),
        replace_all: z.boolean().nullish().describe('Replace every occurrence (default false)'),
      }),
      execute: ({ file_path, old_string, new_string, replace_all }) =>
        guarded(async () => {
          const p = normalizePath(file_path);
          if (old_string === '') {
            throw new FileError(
              'invalid_argument',
              'old_string is empty; give the exact text to replace',
            );
          }
          if (old_string === new_string) {
            throw new FileError(
              'invalid_argument',
              'old_string and new_string are the same; nothing would change',
            );
          }
          if (!state.wasRead(p)) {
            const exists = await backend.stat(p);
            if (!exists) throw new FileError('not_found', `${p} does not exist`);
            throw new FileError(
              'read_required',
              `${p} has not been read in this session; read_file it first, then edit`,
            );
          }
          const content = await backend.read(p);
          if (!state.isCurrent(p, content)) {
            throw new FileError(
              'read_required',
              `${p} changed since you read it; read_file it again, then edit`,
            );
          }
          let needle = old_string;
          let replacement = new_string;
          let n = countOccurrences(content, needle);
          if (n === 0 && content.includes('\r\n') && !needle.includes('\r')) {
            // The model copies lines without the carriage returns read_file hides.
            needle = needle.replace(/\n/g, '\r\n');
            replacement = replacement.replace(/\n/g, '\r\n');
            n = countOccurrences(content, needle);
          }
          if (n === 0) {
            throw new FileError(
              'no_match',
              `old_string was not found in ${p}; read_file it again and copy the text exactly`,
            );
          }
          if (n > 1 && !replace_all) {
            throw new FileError(
              'ambiguous_match',
              `old_string occurs ${n} times in ${p}; add surrounding lines to make it unique, ` +
                'or set replace_all to true',
            );
          }
          const updated = replaceAll(content, needle, replacement);
          await backend.write(p, updated);
          state.markRead(p, updated);
          return `Edited ${p}: replaced ${n} occurrence${n === 1 ? '' : 's'}.`;
        }),
    }),

    delete_file: llm.tool({
      description: 'Delete a file.',
      parameters: z.object({ file_path: pathParam }),
      execute: ({ file_path }) =>
        guarded(async () => {
          const p = normalizePath(file_path);
          await backend.delete(p);
          state.forget(p);
          return `Deleted ${p}.`;
        }),
    }),

    glob: llm.tool({
      description:
        'Find files whose path (relative to `path`) matches a glob: "*" and "?" within a name, ' +
        '"**" for any depth, "{a,b}" alternatives, "[a-z]" classes. Example: "**/*.md".',
      parameters: z.object({
        pattern: z.string().describe('Glob pattern, e.g. "**/*.md"'),
        path: z.string().nullish().describe('Directory to search under; "/" when omitted'),
      }),
      execute: ({ pattern, path }, { toolCallId }) =>
        guarded(async () => {
          const base = normalizePath(path ?? ROOT);
          compileGlob(splitGlob(pattern, base).pattern);
          const files = await backend.glob(pattern, base);
          if (files.length === 0)
            return `(no files match ${JSON.stringify(pattern)} under ${base})`;
          return fitResult(files.map((f) => f.path).join('\n'), toolCallId);
        }),
    }),

    grep: llm.tool({
      description:
        'Search file contents for literal text (set regex to true for a simple regular ' +
        'expression). output_mode: "files_with_matches" (default) lists files, "content" shows ' +
        '"path:line:text", "count" shows matches per file. `glob` filters files, e.g. "*.md".',
      parameters: z.object({
        pattern: z.string().describe('Text to find (literal unless regex is true)'),
        path: z.string().nullish().describe('Directory or file to search; "/" when omitted'),
        glob: z.string().nullish().describe('Only files matching this glob, e.g. "*.md"'),
        output_mode: z
          .enum(['content', 'files_with_matches', 'count'])
          .nullish()
          .describe('What to return (default "files_with_matches")'),
        max_count: z
          .number()
          .int()
          .min(1)
          .nullish()
          .describe('Stop after this many matching lines'),
        regex: z
          .boolean()
          .nullish()
          .describe('Treat pattern as a regular expression (default false)'),
      }),
      execute: (
        { pattern, path, glob, output_mode, max_count, regex },
        { toolCallId, abortSignal },
      ) =>
        guarded(async () => {
          const base = normalizePath(path ?? ROOT);
          compileSearcher(pattern, { regex: regex ?? false });
          if (glob) compileGlob(glob);
          const limit = Math.min(optionalInt('max_count', max_count, 1) ?? grepCap, grepCap);
          const controller = new AbortController();
          const timer = clock.setTimer(grepTimeoutMs, () =>
            controller.abort(
              new FileError(
                'timeout',
                `grep did not finish within ${grepTimeoutMs} ms; narrow path or glob, or search ` +
                  'for more specific text',
              ),
            ),
          );
          const onAbort = () => controller.abort(abortSignal?.reason);
          if (abortSignal?.aborted) onAbort();
          abortSignal?.addEventListener('abort', onAbort, { once: true });
          let matches: Awaited<ReturnType<FileBackend['grep']>>;
          const skipped = collectSkipped();
          try {
            matches = await backend.grep(pattern, {
              path: base,
              glob: glob ?? undefined,
              regex: regex ?? false,
              maxCount: limit + 1,
              signal: controller.signal,
              onSkippedLine: skipped.add,
            });
          } finally {
            timer.cancel();
            abortSignal?.removeEventListener('abort', onAbort);
          }
          const truncated = matches.length > limit;
          if (truncated) matches = matches.slice(0, limit);
          const skipNote = skippedNote(skipped);
          if (matches.length === 0) {
            return `(no matches for ${JSON.stringify(pattern)} under ${base})${skipNote}`;
          }
          let out = formatGrep(matches, output_mode ?? 'files_with_matches');
          if (truncated) {
            out +=
              `\n(stopped at ${limit} matching lines; narrow the search with path or glob` +
              (limit < grepCap ? ', or raise max_count)' : ')');
          }
          return fitResult(out + skipNote, toolCallId);
        }),
    }),
  };
}

/** The record {@link createFileTools} returns, keyed by tool name. */
export type FileTools = ReturnType<typeof createFileTools>;

/** Names of the file tools. */
export type FileToolName = keyof FileTools;
