import type { FileInfo, GrepMatch, SkippedLine } from './backend.js';

/** Default number of lines `read_file` returns. */
export const DEFAULT_READ_LIMIT = 200;

/** Lines longer than this are cut in `read_file` output. */
export const DEFAULT_MAX_LINE_CHARS = 2000;

/** Width of the right-aligned line number in `read_file` output. */
const NUMBER_WIDTH = 6;

/** Lines of a text as `read_file` counts them: a final newline does not start another line. */
export function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** Options for {@link formatReadPage}. */
export interface ReadPageOptions {
  /** First line to show, 0-based. */
  offset: number;
  /** Most lines to show. */
  limit: number;
  /** Cut longer lines to this many characters. */
  maxLineChars: number;
  /** Stop adding lines once the page is this long (at least one line is always shown). */
  maxChars: number;
}

/**
 * The one read format of the file tools, identical on every backend: `cat -n` style lines
 * (line number right-aligned to 6, a tab, the text; numbers are 1-based, so `offset` K
 * starts at line K+1), then — if lines remain — `(... N more lines; continue with offset=K)`.
 * An empty file and an offset past the end each give one explanatory line instead.
 */
export function formatReadPage(path: string, content: string, options: ReadPageOptions): string {
  const lines = splitLines(content);
  const total = lines.length;
  if (total === 0) return `(${path} is empty)`;
  if (options.offset >= total) {
    return (
      `(offset ${options.offset} is past the end of ${path}, which has ${total} ` +
      `line${total === 1 ? '' : 's'}; use an offset from 0 to ${total - 1})`
    );
  }
  const out: string[] = [];
  let size = 0;
  let end = options.offset;
  const last = Math.min(total, options.offset + options.limit);
  while (end < last) {
    const raw = lines[end] ?? '';
    const text =
      raw.length > options.maxLineChars
        ? `${raw.slice(0, options.maxLineChars)}… [line cut: ${raw.length} characters]`
        : raw;
    const row = `${String(end + 1).padStart(NUMBER_WIDTH)}\t${text}`;
    if (out.length > 0 && size + row.length + 1 > options.maxChars) break;
    out.push(row);
    size += row.length + 1;
    end++;
  }
  if (end < total) out.push(`(... ${total - end} more lines; continue with offset=${end})`);
  return out.join('\n');
}

/** `ls` output: one path per line, directories with a trailing "/", files with their size. */
export function formatListing(path: string, entries: FileInfo[]): string {
  if (entries.length === 0) return `(${path} is empty)`;
  return entries
    .map((e) => {
      if (e.isDir) return `${e.path}/`;
      if (e.size === undefined) return e.path;
      return `${e.path} (${e.size} byte${e.size === 1 ? '' : 's'})`;
    })
    .join('\n');
}

/** Longest line text shown per grep match in `content` mode. */
export const GREP_LINE_CHARS = 300;

/** grep output for each mode: files_with_matches, content (`path:line:text`) or count. */
export function formatGrep(
  matches: GrepMatch[],
  mode: 'content' | 'files_with_matches' | 'count',
): string {
  if (mode === 'content') {
    return matches
      .map((m) => {
        const text =
          m.text.length > GREP_LINE_CHARS ? `${m.text.slice(0, GREP_LINE_CHARS)}…` : m.text;
        return `${m.path}:${m.line}:${text}`;
      })
      .join('\n');
  }
  const counts = new Map<string, number>();
  for (const m of matches) counts.set(m.path, (counts.get(m.path) ?? 0) + 1);
  if (mode === 'count') return [...counts].map(([p, n]) => `${p}:${n}`).join('\n');
  return [...counts.keys()].join('\n');
}

/** Lines a regex grep skipped as too long: how many, and the first few. */
export interface SkippedLines {
  count: number;
  first: SkippedLine[];
}

/** Collects skipped lines for {@link skippedNote}, keeping only the first few (by path, line). */
export function collectSkipped(): SkippedLines & { add(line: SkippedLine): void } {
  const out = {
    count: 0,
    first: [] as SkippedLine[],
    add(line: SkippedLine) {
      // Keep the first three in path then line order, whatever order backends report them in.
      out.count++;
      out.first.push(line);
      out.first.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
      if (out.first.length > 3) out.first.pop();
    },
  };
  return out;
}

/**
 * The note grep appends when a regex skipped lines too long to scan in one go: they might
 * match, so the model is told which, and how to search them instead. '' when none.
 */
export function skippedNote(skipped: SkippedLines): string {
  const first = skipped.first[0];
  if (!first) return '';
  const where = skipped.first.map((s) => `${s.path}:${s.line}`).join(', ');
  const more =
    skipped.count > skipped.first.length ? ` and ${skipped.count - skipped.first.length} more` : '';
  const lines = skipped.count === 1 ? '1 line was' : `${skipped.count} lines were`;
  return (
    `\n(${lines} not searched: longer than the ${first.maxChars} characters this regex scans ` +
    `per line (${where}${more}), so they may also match; search them with a literal pattern ` +
    'or a simpler regex)'
  );
}

/**
 * Head and tail of a long result around a note saying how much was left out and where the
 * whole text is (or why it could not be saved).
 */
export function previewOf(
  result: string,
  note: string,
  headChars: number,
  tailChars: number,
): string {
  let head = result.slice(0, headChars);
  const headCut = head.lastIndexOf('\n');
  if (headCut > headChars / 2) head = head.slice(0, headCut);
  let tail = result.slice(result.length - tailChars);
  const tailCut = tail.indexOf('\n');
  if (tailCut >= 0 && tailCut < tailChars / 2) tail = tail.slice(tailCut + 1);
  const omitted = result.length - head.length - tail.length;
  return `${head}\n... [${omitted} characters omitted. ${note}] ...\n${tail}`;
}
