import { FileError } from './backend.js';
import { baseName, isWithin, normalizePath, relativeTo } from './paths.js';

/** Longest glob pattern accepted, in characters. */
export const MAX_GLOB_PATTERN_LENGTH = 1024;

/** Most alternatives `{a,b}` braces may expand to, so `{a,b}{c,d}...` cannot explode. */
export const MAX_BRACE_EXPANSIONS = 256;

type CharToken =
  | { kind: 'literal'; char: string }
  | { kind: 'any' }
  | { kind: 'star' }
  | { kind: 'class'; negated: boolean; ranges: Array<readonly [string, string]> };

type Segment =
  | { kind: 'globstar' }
  | { kind: 'literal'; text: string }
  | { kind: 'wild'; tokens: CharToken[] };

/** A compiled glob: tests paths relative to the glob's base ("a/b.txt", no leading slash). */
export interface CompiledGlob {
  /** True when the relative path matches. */
  matches(relativePath: string): boolean;
  /** How many directory levels below the base a match can lie (Infinity with `**`). */
  readonly maxDepth: number;
}

const MAGIC = /[*?[{\\]/;

/** True when a pattern segment uses any glob syntax (so it cannot be taken literally). */
export function hasGlobMagic(text: string): boolean {
  return MAGIC.test(text);
}

function invalid(message: string): FileError {
  return new FileError('invalid_pattern', message);
}

function checkPatternText(pattern: unknown): string {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw invalid('the glob pattern is empty; try "**/*.md"');
  }
  if (pattern.length > MAX_GLOB_PATTERN_LENGTH) {
    throw invalid(`the glob pattern is longer than ${MAX_GLOB_PATTERN_LENGTH} characters`);
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are rejected
  if (/[\u0000-\u001f\u007f]/.test(pattern)) {
    throw invalid('the glob pattern contains a NUL or control character; remove it');
  }
  return pattern;
}

/** Index of the `}` closing the `{` at `open`, and top-level comma positions, or undefined. */
function findBrace(p: string, open: number): { close: number; commas: number[] } | undefined {
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return commas.length > 0 ? { close: i, commas } : undefined;
    } else if (c === ',' && depth === 1) commas.push(i);
  }
  return undefined;
}

function expandBraces(p: string, from: number, out: string[]): void {
  for (let i = from; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '{') continue;
    const brace = findBrace(p, i);
    if (!brace) continue; // a lone or comma-less brace is literal
    const pre = p.slice(0, i);
    const post = p.slice(brace.close + 1);
    const bounds = [i, ...brace.commas, brace.close];
    for (let k = 0; k + 1 < bounds.length; k++) {
      const alt = p.slice((bounds[k] ?? 0) + 1, bounds[k + 1]);
      expandBraces(pre + alt + post, i, out);
    }
    return;
  }
  out.push(p);
  if (out.length > MAX_BRACE_EXPANSIONS) {
    throw invalid(`the braces in the glob expand to more than ${MAX_BRACE_EXPANSIONS} patterns`);
  }
}

function parseClass(seg: string[], open: number): { token: CharToken; end: number } | undefined {
  let i = open + 1;
  let negated = false;
  if (seg[i] === '!' || seg[i] === '^') {
    negated = true;
    i++;
  }
  const ranges: Array<readonly [string, string]> = [];
  let first = true;
  while (i < seg.length) {
    let c = seg[i] ?? '';
    if (c === ']' && !first) return { token: { kind: 'class', negated, ranges }, end: i };
    first = false;
    if (c === '\\' && i + 1 < seg.length) {
      i++;
      c = seg[i] ?? '';
    }
    if (seg[i + 1] === '-' && i + 2 < seg.length && seg[i + 2] !== ']') {
      let hi = seg[i + 2] ?? '';
      let next = i + 3;
      if (hi === '\\' && i + 3 < seg.length) {
        hi = seg[i + 3] ?? '';
        next = i + 4;
      }
      ranges.push([c, hi]);
      i = next;
      continue;
    }
    ranges.push([c, c]);
    i++;
  }
  return undefined; // unclosed: the "[" is literal
}

function compileSegment(text: string): Segment {
  if (text === '**') return { kind: 'globstar' };
  if (!hasGlobMagic(text)) return { kind: 'literal', text };
  const seg = Array.from(text); // code points, as segmentMatches compares them
  const tokens: CharToken[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] ?? '';
    if (c === '\\' && i + 1 < seg.length) {
      i++;
      tokens.push({ kind: 'literal', char: seg[i] ?? '' });
    } else if (c === '*') {
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') {
      tokens.push({ kind: 'any' });
    } else if (c === '[') {
      const parsed = parseClass(seg, i);
      if (parsed) {
        tokens.push(parsed.token);
        i = parsed.end;
      } else tokens.push({ kind: 'literal', char: c });
    } else tokens.push({ kind: 'literal', char: c });
  }
  return { kind: 'wild', tokens };
}

function charMatches(token: CharToken, ch: string): boolean {
  switch (token.kind) {
    case 'literal':
      return token.char === ch;
    case 'any':
      return true;
    case 'class': {
      const inside = token.ranges.some(([lo, hi]) => ch >= lo && ch <= hi);
      return inside !== token.negated;
    }
    default:
      return false;
  }
}

/** Wildcard match of one path segment; linear backtracking to the last star, O(n·m) worst. */
function segmentMatches(tokens: CharToken[], text: string): boolean {
  const chars = /[\ud800-\udfff]/.test(text) ? Array.from(text) : text;
  let ti = 0;
  let si = 0;
  let starTi = -1;
  let starSi = 0;
  while (si < chars.length) {
    const token = tokens[ti];
    if (token) {
      if (token.kind === 'star') {
        starTi = ti++;
        starSi = si;
        continue;
      }
      if (charMatches(token, chars[si] ?? '')) {
        ti++;
        si++;
        continue;
      }
    }
    if (starTi < 0) return false;
    ti = starTi + 1;
    si = ++starSi;
  }
  while (tokens[ti]?.kind === 'star') ti++;
  return ti === tokens.length;
}

function segmentHit(seg: Segment, part: string): boolean {
  if (seg.kind === 'literal') return seg.text === part;
  return seg.kind === 'wild' ? segmentMatches(seg.tokens, part) : true;
}

/** Matches `parts[from, to)` against segments without `**`, one to one. */
function plainMatches(segments: Segment[], parts: string[], from: number, to: number): boolean {
  if (to - from !== segments.length) return false;
  for (let i = 0; i < segments.length; i++) {
    if (!segmentHit(segments[i] as Segment, parts[from + i] as string)) return false;
  }
  return true;
}

/** General case (several `**`): memoized search, O(segments x parts). */
function starMatches(
  segments: Segment[],
  parts: string[],
  failed: Uint8Array,
  pi: number,
  si: number,
): boolean {
  const width = parts.length + 1;
  if (failed[pi * width + si]) return false;
  let ok: boolean;
  const seg = segments[pi];
  if (!seg) ok = si === parts.length;
  else if (seg.kind === 'globstar') {
    ok =
      starMatches(segments, parts, failed, pi + 1, si) ||
      (si < parts.length && starMatches(segments, parts, failed, pi, si + 1));
  } else if (si >= parts.length) ok = false;
  else {
    ok =
      segmentHit(seg, parts[si] as string) && starMatches(segments, parts, failed, pi + 1, si + 1);
  }
  if (!ok) failed[pi * width + si] = 1;
  return ok;
}

/** A compiled alternative: its segments split around `**` for the common shapes. */
interface Alternative {
  segments: Segment[];
  /** Index of the only `**`, -1 without one, -2 with several. */
  star: number;
}

function alternativeMatches(alt: Alternative, parts: string[]): boolean {
  const { segments, star } = alt;
  if (star === -1) return plainMatches(segments, parts, 0, parts.length);
  if (star >= 0) {
    // prefix ** suffix: the prefix takes the first parts, the suffix the last, ** the rest.
    const suffix = segments.length - star - 1;
    if (parts.length < star + suffix) return false;
    for (let i = 0; i < star; i++) {
      if (!segmentHit(segments[i] as Segment, parts[i] as string)) return false;
    }
    const off = parts.length - suffix;
    for (let i = 0; i < suffix; i++) {
      if (!segmentHit(segments[star + 1 + i] as Segment, parts[off + i] as string)) return false;
    }
    return true;
  }
  const failed = new Uint8Array((segments.length + 1) * (parts.length + 1));
  return starMatches(segments, parts, failed, 0, 0);
}

/**
 * Compiles a glob relative to its base: `*` and `?` within one segment, `**` as a whole
 * segment for any depth (including none), `{a,b}` alternatives (may span `/`), `[abc]`,
 * `[a-z]`, `[!x]`/`[^x]` classes and `\` escapes. `*` also matches names starting with a dot.
 * Throws `invalid_pattern` for empty, over-long or `..`-containing patterns.
 */
export function compileGlob(pattern: string): CompiledGlob {
  const text = checkPatternText(pattern).replace(/^\/+/, '');
  const alternatives: string[] = [];
  expandBraces(text, 0, alternatives);
  let maxDepth = 0;
  const compiled = alternatives.map((alt) => {
    const raw = alt.split('/').filter((s) => s !== '' && s !== '.');
    if (raw.includes('..')) {
      throw invalid('".." is not allowed in a glob pattern; pass a different base path instead');
    }
    const segments = raw.map(compileSegment);
    const stars = segments.filter((seg) => seg.kind === 'globstar').length;
    maxDepth = Math.max(maxDepth, stars > 0 ? Number.POSITIVE_INFINITY : segments.length);
    const star =
      stars === 0 ? -1 : stars === 1 ? segments.findIndex((seg) => seg.kind === 'globstar') : -2;
    return { segments, star } satisfies Alternative;
  });
  return {
    maxDepth,
    matches(relativePath: string): boolean {
      const parts = relativePath === '' ? [] : relativePath.split('/');
      for (const alt of compiled) if (alternativeMatches(alt, parts)) return true;
      return false;
    },
  };
}

/**
 * Resolves a glob and its base path into a normalized base plus a pattern relative to it.
 * An absolute pattern ("/src/**\/*.ts") ignores `base`; leading literal segments are moved
 * into the base so a backend can start its walk deeper ("src/**\/*.ts" under "/" becomes
 * "**\/*.ts" under "/src").
 */
export function splitGlob(pattern: string, base = '/'): { base: string; pattern: string } {
  let text = checkPatternText(pattern);
  let dir = normalizePath(base);
  if (text.startsWith('/')) {
    dir = '/';
    text = text.replace(/^\/+/, '');
  }
  const segs = text.split('/').filter((s) => s !== '' && s !== '.');
  if (segs.includes('..')) {
    throw invalid('".." is not allowed in a glob pattern; pass a different base path instead');
  }
  if (segs.length === 0) throw invalid('the glob pattern names no files; try "**/*"');
  let i = 0;
  while (i < segs.length - 1 && !hasGlobMagic(segs[i] ?? '')) i++;
  if (i > 0) dir = normalizePath(dir + '/' + segs.slice(0, i).join('/'));
  return { base: dir, pattern: segs.slice(i).join('/') };
}

/**
 * The file filter grep's `glob` option means: a pattern without "/" matches the file's base
 * name at any depth ("*.ts"); one starting with "/" matches the whole virtual path; any other
 * matches the path relative to the search base ("src/**\/*.ts"). Undefined or empty keeps all.
 */
export function createPathFilter(
  glob: string | undefined,
  base: string,
): (path: string) => boolean {
  if (glob === undefined || glob === '') return () => true;
  if (glob.startsWith('/')) {
    const g = compileGlob(glob);
    return (path) => g.matches(path.slice(1));
  }
  const g = compileGlob(glob);
  if (!glob.includes('/')) return (path) => g.matches(baseName(path));
  return (path) => isWithin(path, base) && g.matches(relativeTo(base, path));
}
