import { FileError, type GrepMatch, type SkippedLine } from './backend.js';
import { compileGrepRegex, type GrepRegex } from './grep-regex.js';

/** Longest literal grep pattern accepted, in characters. */
export const MAX_LITERAL_PATTERN_LENGTH = 1000;

/** A match's `text` is cut to this many characters, so a minified file cannot flood memory. */
export const MAX_MATCH_TEXT_CHARS = 2000;

function invalid(message: string): FileError {
  return new FileError('invalid_pattern', message);
}

/** Why a search stopped: the abort reason when it is a FileError, else a generic `timeout`. */
export function abortError(signal: AbortSignal): FileError {
  const reason: unknown = signal.reason;
  if (reason instanceof FileError) return reason;
  return new FileError(
    'timeout',
    'the search was stopped before it finished (cancelled or out of time); narrow the path or glob',
  );
}

/**
 * Keeps a long search responsive: checks the abort signal and yields to the event loop every
 * few milliseconds of work, so timers (time budgets) and cancellation fire.
 */
export class SearchBudget {
  readonly #signal: AbortSignal | undefined;
  readonly #onSkippedLine: ((skipped: SkippedLine) => void) | undefined;
  #lastYield = performance.now();
  #steps = 0;

  constructor(signal?: AbortSignal, onSkippedLine?: (skipped: SkippedLine) => void) {
    this.#signal = signal;
    this.#onSkippedLine = onSkippedLine;
  }

  /** Reports a line the regex did not search because it is too long (it might match). */
  skipped(line: SkippedLine): void {
    this.#onSkippedLine?.(line);
  }

  /** Throws (a FileError) when the search has been aborted. */
  check(): void {
    if (this.#signal?.aborted) throw abortError(this.#signal);
  }

  /**
   * Without awaiting: true when the caller should `await step(true)` now (it has been a few
   * milliseconds since the last yield, or the search was aborted). Cheap enough per file.
   */
  due(): boolean {
    if (this.#signal?.aborted) return true;
    return performance.now() - this.#lastYield >= 8;
  }

  /** One unit of work; `heavy` steps (a file, a slice of regex work) look at the clock every time. */
  async step(heavy = false): Promise<void> {
    this.check();
    if (!heavy && ++this.#steps % 256 !== 0) return;
    if (performance.now() - this.#lastYield < 8) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#lastYield = performance.now();
    this.check();
  }
}

/** A validated grep pattern that finds matching lines in a text. */
export interface TextSearcher {
  /** The literal text searched for, when not a regex (backends may pre-filter raw bytes). */
  readonly literal: string | undefined;
  /**
   * Text every matching line contains: each group has a piece in the line (`[[literal]]` for
   * a literal search, `[]` when nothing is required). Backends may skip files without it.
   */
  readonly required: readonly (readonly string[])[];
  /** Matching lines of `text` (1-based), at most `limit`, honouring the budget. */
  search(path: string, text: string, limit: number, budget: SearchBudget): Promise<GrepMatch[]>;
}

function cutLine(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return text.length > MAX_MATCH_TEXT_CHARS ? text.slice(0, MAX_MATCH_TEXT_CHARS) : text;
}

async function searchLiteral(
  literal: string,
  path: string,
  text: string,
  limit: number,
  budget: SearchBudget,
): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  let from = 0;
  let line = 1;
  let counted = 0;
  while (out.length < limit) {
    const idx = text.indexOf(literal, from);
    if (idx < 0) break;
    const lineStart = idx === 0 ? 0 : text.lastIndexOf('\n', idx - 1) + 1;
    for (
      let j = text.indexOf('\n', counted);
      j !== -1 && j < lineStart;
      j = text.indexOf('\n', j + 1)
    ) {
      line++;
    }
    counted = lineStart;
    let lineEnd = text.indexOf('\n', idx);
    if (lineEnd < 0) lineEnd = text.length;
    out.push({ path, line, text: cutLine(text.slice(lineStart, lineEnd)) });
    from = lineEnd + 1;
    if (budget.due()) await budget.step(true);
  }
  return out;
}

const NEWLINE = 0x0a;

/**
 * {@link searchLiteral} on raw UTF-8 bytes: finds `literal` (UTF-8 encoded, without line
 * breaks) with `Buffer.indexOf`, counts lines only up to each hit and decodes only the matching
 * lines, so a file without the text costs one scan and no string. Synchronous and bounded by the
 * file's size; the same answers as the text search because UTF-8 is self-synchronizing.
 */
export function searchLiteralBytes(
  literal: Uint8Array,
  path: string,
  data: Buffer,
  limit: number,
): GrepMatch[] {
  const out: GrepMatch[] = [];
  let from = 0;
  let line = 1;
  let counted = 0;
  while (out.length < limit) {
    const idx = data.indexOf(literal, from);
    if (idx < 0) break;
    const lineStart = idx === 0 ? 0 : data.lastIndexOf(NEWLINE, idx - 1) + 1;
    for (
      let j = data.indexOf(NEWLINE, counted);
      j !== -1 && j < lineStart;
      j = data.indexOf(NEWLINE, j + 1)
    ) {
      line++;
    }
    counted = lineStart;
    let lineEnd = data.indexOf(NEWLINE, idx);
    if (lineEnd < 0) lineEnd = data.length;
    // Decode at most what can be shown (4 bytes a character), then cut like every backend.
    const stop = Math.min(lineEnd, lineStart + MAX_MATCH_TEXT_CHARS * 4 + 1);
    out.push({ path, line, text: cutLine(data.toString('utf8', lineStart, stop)) });
    from = lineEnd + 1;
  }
  return out;
}

/**
 * Checks the text the pattern requires: undefined when some group has no piece in `text`
 * (nothing can match); otherwise the group to look for line by line, the one first seen
 * furthest into the text (likely the rarest), or null when nothing is required.
 */
function leadGroup(
  text: string,
  required: readonly (readonly string[])[],
): readonly string[] | null | undefined {
  let lead: readonly string[] | null = null;
  let leadFirst = -1;
  for (const group of required) {
    let first = -1;
    for (const piece of group) {
      const at = text.indexOf(piece);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    if (first < 0) return undefined;
    if (first > leadFirst) {
      lead = group;
      leadFirst = first;
    }
  }
  return lead;
}

/**
 * Yields the lines worth matching, as [start, end) of `text` with 1-based numbers: every
 * line, or, when the pattern requires some text, only lines holding a piece of its lead group
 * (found with indexOf, each piece's next position remembered so the text is scanned once).
 */
function* candidateLines(
  text: string,
  lead: readonly string[] | null,
): Generator<[start: number, end: number, line: number]> {
  if (!lead) {
    let pos = 0;
    for (let line = 1; ; line++) {
      const nl = text.indexOf('\n', pos);
      if (nl < 0 && pos === text.length && pos > 0) return; // no phantom line after a final newline
      yield [pos, nl < 0 ? text.length : nl, line];
      if (nl < 0) return;
      pos = nl + 1;
    }
  }
  const next = lead.map((piece) => text.indexOf(piece));
  let line = 1;
  let counted = 0;
  for (;;) {
    let idx = -1;
    for (const at of next) if (at >= 0 && (idx < 0 || at < idx)) idx = at;
    if (idx < 0) return;
    const start = idx === 0 ? 0 : text.lastIndexOf('\n', idx - 1) + 1;
    for (
      let j = text.indexOf('\n', counted);
      j !== -1 && j < start;
      j = text.indexOf('\n', j + 1)
    ) {
      line++;
    }
    counted = start;
    const nl = text.indexOf('\n', idx);
    const end = nl < 0 ? text.length : nl;
    yield [start, end, line];
    if (nl < 0) return;
    for (let k = 0; k < next.length; k++) {
      if ((next[k] as number) >= 0 && (next[k] as number) <= nl) {
        next[k] = text.indexOf(lead[k] as string, nl + 1);
      }
    }
  }
}

/**
 * Matching lines of `text` for a compiled regex, one line per re2js call, skipping lines
 * without the text the pattern requires. A line is one uninterrupted unit of work, so lines
 * longer than the regex's `maxLineChars` are not searched (reported to the budget, since they
 * might match); between lines the budget is consulted, so an abort or time limit stops a scan.
 */
async function searchRegex(
  regex: GrepRegex,
  path: string,
  text: string,
  limit: number,
  budget: SearchBudget,
): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  const lead = leadGroup(text, regex.required);
  if (lead === undefined) return out;
  for (const [start, end, line] of candidateLines(text, lead)) {
    if (out.length >= limit) break;
    const bodyEnd = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    if (bodyEnd - start > regex.maxLineChars) {
      budget.skipped({ path, line, chars: bodyEnd - start, maxChars: regex.maxLineChars });
    } else if (regex.test(text.slice(start, bodyEnd))) {
      out.push({ path, line, text: cutLine(text.slice(start, end)) });
    }
    if (budget.due()) await budget.step(true);
  }
  return out;
}

/**
 * Validates a grep pattern and returns its searcher. Literal by default (a plain substring,
 * case-sensitive, within one line); with `regex: true` the pattern is compiled by
 * {@link compileGrepRegex} (re2js, linear time) and matched line by line. Every backend
 * searches through this, so all of them accept and refuse the same patterns.
 */
export function compileSearcher(pattern: string, options: { regex?: boolean } = {}): TextSearcher {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw invalid('the pattern is empty; give the text to search for');
  }
  if (options.regex) {
    const regex = compileGrepRegex(pattern);
    return {
      literal: undefined,
      required: regex.required,
      search: (path, text, limit, budget) => searchRegex(regex, path, text, limit, budget),
    };
  }
  if (pattern.length > MAX_LITERAL_PATTERN_LENGTH) {
    throw invalid(
      `the pattern is longer than ${MAX_LITERAL_PATTERN_LENGTH} characters; shorten it`,
    );
  }
  if (pattern.includes('\n') || pattern.includes('\r')) {
    throw invalid('grep matches within one line; remove the line break from the pattern');
  }
  return {
    literal: pattern,
    required: [[pattern]],
    search: (path, text, limit, budget) => searchLiteral(pattern, path, text, limit, budget),
  };
}

/** Checks grep's `maxCount`: undefined means no limit; otherwise a positive integer. */
export function checkMaxCount(maxCount: number | undefined): number {
  if (maxCount === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isInteger(maxCount) || maxCount < 1) {
    throw new FileError('invalid_argument', 'max_count must be a whole number of at least 1');
  }
  return maxCount;
}
