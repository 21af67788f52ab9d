import type { Clock } from '../../../core/clock.js';
import { TasklineError } from '../../../core/errors.js';
import {
  type FileBackend,
  FileError,
  type FileInfo,
  type GrepMatch,
  type GrepOptions,
} from '../backend.js';
import { compileGlob, createPathFilter, splitGlob } from '../glob.js';
import { normalizePath, relativeTo } from '../paths.js';
import {
  checkMaxCount,
  compileSearcher,
  MAX_MATCH_TEXT_CHARS,
  SearchBudget,
  type TextSearcher,
} from '../search.js';
import {
  checkSizeCaps,
  checkTextContent,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_TOTAL_BYTES,
  formatBytes,
  sizeOption,
} from './limits.js';

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

/** The half-open key range [lo, hi) that holds every path strictly below directory `dir`. */
export interface PathRange {
  lo: string;
  hi: string;
}

/** Key range of the paths below `dir` ("/a" gives ["/a/", "/a0")), for indexed SQL scans. */
export function rangeBelow(dir: string): PathRange {
  const lo = dir === '/' ? '/' : dir + '/';
  // "/" + 1 is "0": every path that starts with `lo` sorts before `hi` in code point order.
  return { lo, hi: lo.slice(0, -1) + '0' };
}

/** The ancestors of a path, outermost first, without "/" ("/a/b/c" gives ["/a", "/a/b"]). */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  let at = path.indexOf('/', 1);
  while (at !== -1) {
    out.push(path.slice(0, at));
    at = path.indexOf('/', at + 1);
  }
  return out;
}

/** Orders paths the same way on every store: by UTF-16 code unit, like `Array.prototype.sort`. */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Bounded regex: a linear-time pattern engine
// ---------------------------------------------------------------------------------------------

/** Longest regex `grep` accepts, in characters. */
export const MAX_REGEX_CHARS = 512;
/** Largest `{n,m}` bound a regex may use. */
export const MAX_REGEX_REPEAT = 1000;
const MAX_NFA_STATES = 20_000;

interface CharRanges {
  /** Flat [lo0, hi0, lo1, hi1, ...] code point ranges, inclusive. */
  ranges: number[];
  negated: boolean;
}

interface CharClass {
  parts: CharRanges[];
  negated: boolean;
}

type AssertKind = 'bol' | 'eol' | 'word' | 'nonword';

type PatternNode =
  | { t: 'class'; cls: CharClass }
  | { t: 'seq'; items: PatternNode[] }
  | { t: 'alt'; items: PatternNode[] }
  | { t: 'rep'; node: PatternNode; min: number; max: number }
  | { t: 'assert'; kind: AssertKind };

const DIGIT: CharRanges = { ranges: [0x30, 0x39], negated: false };
const WORD: CharRanges = {
  ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  negated: false,
};
const SPACE: CharRanges = {
  ranges: [
    0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f,
    0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
  ],
  negated: false,
};
const LINE_BREAK: CharRanges = { ranges: [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029], negated: false };

function rangesHave(r: CharRanges, cp: number): boolean {
  const { ranges } = r;
  let inside = false;
  for (let i = 0; i < ranges.length; i += 2) {
    if (cp >= ranges[i]! && cp <= ranges[i + 1]!) {
      inside = true;
      break;
    }
  }
  return inside !== r.negated;
}

function classHas(c: CharClass, cp: number): boolean {
  let inside = false;
  for (const part of c.parts) {
    if (rangesHave(part, cp)) {
      inside = true;
      break;
    }
  }
  return inside !== c.negated;
}

function isWordCp(cp: number): boolean {
  return cp >= 0 && rangesHave(WORD, cp);
}

function single(cp: number): PatternNode {
  return { t: 'class', cls: { parts: [{ ranges: [cp, cp], negated: false }], negated: false } };
}

function classOf(part: CharRanges, negated = false): PatternNode {
  return { t: 'class', cls: { parts: [part], negated } };
}

const S_CLASS = 0;
const S_SPLIT = 1;
const S_ASSERT = 2;
const S_MATCH = 3;

/**
 * A compiled pattern: a Thompson NFA simulated over code points, so matching a line costs
 * O(line length x pattern size) whatever the pattern. No backtracking, hence no ReDoS.
 */
export class LinearMatcher {
  private readonly kind: number[] = [];
  private readonly out1: number[] = [];
  private readonly out2: number[] = [];
  private readonly cls: (CharClass | undefined)[] = [];
  private readonly asserts: (AssertKind | undefined)[] = [];
  private readonly start: number;
  private mark: Uint32Array = new Uint32Array(0);
  private gen = 0;
  private matched = false;

  constructor(root: PatternNode) {
    const match = this.push(S_MATCH, -1, -1);
    this.start = this.compile(root, match);
    this.mark = new Uint32Array(this.kind.length);
  }

  /** True when the pattern matches somewhere in `text` (anchors refer to the ends of `text`). */
  search(text: string): boolean {
    return this.run(text);
  }

  private push(kind: number, a: number, b: number): number {
    if (this.kind.length >= MAX_NFA_STATES) {
      throw new FileError(
        'invalid_pattern',
        'Pattern is too complex (too many repetitions); simplify it or split the search.',
      );
    }
    this.kind.push(kind);
    this.out1.push(a);
    this.out2.push(b);
    this.cls.push(undefined);
    this.asserts.push(undefined);
    return this.kind.length - 1;
  }

  private compile(node: PatternNode, next: number): number {
    switch (node.t) {
      case 'class': {
        const s = this.push(S_CLASS, next, -1);
        this.cls[s] = node.cls;
        return s;
      }
      case 'assert': {
        const s = this.push(S_ASSERT, next, -1);
        this.asserts[s] = node.kind;
        return s;
      }
      case 'seq': {
        let cont = next;
        for (let i = node.items.length - 1; i >= 0; i--) cont = this.compile(node.items[i]!, cont);
        return cont;
      }
      case 'alt': {
        const starts = node.items.map((item) => this.compile(item, next));
        let s = starts[starts.length - 1] ?? next;
        for (let i = starts.length - 2; i >= 0; i--) s = this.push(S_SPLIT, starts[i]!, s);
        return s;
      }
      case 'rep': {
        let cont = next;
        if (node.max === Number.POSITIVE_INFINITY) {
          const loop = this.push(S_SPLIT, -1, next);
          this.out1[loop] = this.compile(node.node, loop);
          cont = loop;
        } else {
          for (let k = node.min; k < node.max; k++) {
            cont = this.push(S_SPLIT, this.compile(node.node, cont), next);
          }
        }
        for (let k = 0; k < node.min; k++) cont = this.compile(node.node, cont);
        return cont;
      }
    }
  }

  private add(list: number[], state: number, prev: number, cur: number, atStart: boolean): void {
    const stack = [state];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (this.mark[s] === this.gen) continue;
      this.mark[s] = this.gen;
      const kind = this.kind[s];
      if (kind === S_SPLIT) {
        stack.push(this.out2[s]!, this.out1[s]!);
      } else if (kind === S_ASSERT) {
        const a = this.asserts[s];
        const holds =
          a === 'bol'
            ? atStart
            : a === 'eol'
              ? cur < 0
              : (isWordCp(prev) !== isWordCp(cur)) === (a === 'word');
        if (holds) stack.push(this.out1[s]!);
      } else {
        if (kind === S_MATCH) this.matched = true;
        list.push(s);
      }
    }
  }

  private nextGen(): void {
    this.gen++;
    if (this.gen === 0xffffffff) {
      this.mark.fill(0);
      this.gen = 1;
    }
  }

  private run(text: string): boolean {
    let clist: number[] = [];
    let nlist: number[] = [];
    let i = 0;
    let prev = -1;
    let cur = text.length > 0 ? text.codePointAt(0)! : -1;
    this.nextGen();
    this.matched = false;
    this.add(clist, this.start, prev, cur, true);
    while (cur >= 0) {
      if (this.matched) return true;
      i += cur > 0xffff ? 2 : 1;
      const following = i < text.length ? text.codePointAt(i)! : -1;
      this.nextGen();
      this.matched = false;
      nlist.length = 0;
      for (const s of clist) {
        if (this.kind[s] === S_CLASS && classHas(this.cls[s]!, cur)) {
          this.add(nlist, this.out1[s]!, cur, following, false);
        }
      }
      this.add(nlist, this.start, cur, following, false);
      [clist, nlist] = [nlist, clist];
      prev = cur;
      cur = following;
    }
    return this.matched;
  }
}

function patternError(pattern: string, why: string): FileError {
  return new FileError('invalid_pattern', `Regex ${JSON.stringify(pattern)} was refused: ${why}.`);
}

/** Parses the supported regex subset (JavaScript syntax minus backreferences and lookaround). */
class RegexParser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): PatternNode {
    const node = this.parseAlt();
    if (this.i < this.src.length) throw this.fail('unmatched ")"');
    return node;
  }

  private fail(why: string): FileError {
    return patternError(this.src, why);
  }

  private peek(): string | undefined {
    return this.src[this.i];
  }

  private parseAlt(): PatternNode {
    const items = [this.parseSeq()];
    while (this.peek() === '|') {
      this.i++;
      items.push(this.parseSeq());
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  private parseSeq(): PatternNode {
    const items: PatternNode[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      const atom = this.parseAtom();
      const q = this.parseQuantifier();
      if (q) {
        if (atom.t === 'assert') throw this.fail('an anchor or \\b cannot be repeated');
        items.push({ t: 'rep', node: atom, min: q.min, max: q.max });
        if (this.peek() === '?') this.i++; // lazy: same answer for "does this line match"
        if (this.quantifierAhead()) throw this.fail('nothing to repeat');
      } else {
        items.push(atom);
      }
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  private quantifierAhead(): boolean {
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?') return true;
    return c === '{' && this.braceQuantifier(false) !== undefined;
  }

  private parseQuantifier(): { min: number; max: number } | undefined {
    const c = this.peek();
    if (c === '*') {
      this.i++;
      return { min: 0, max: Number.POSITIVE_INFINITY };
    }
    if (c === '+') {
      this.i++;
      return { min: 1, max: Number.POSITIVE_INFINITY };
    }
    if (c === '?') {
      this.i++;
      return { min: 0, max: 1 };
    }
    if (c === '{') return this.braceQuantifier(true);
    return undefined;
  }

  private braceQuantifier(consume: boolean): { min: number; max: number } | undefined {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
    if (consume) {
      if (min > MAX_REGEX_REPEAT || (max !== Number.POSITIVE_INFINITY && max > MAX_REGEX_REPEAT)) {
        throw this.fail(`repeat counts above ${MAX_REGEX_REPEAT} are not allowed`);
      }
      if (max < min) throw this.fail('numbers out of order in {} quantifier');
      this.i += m[0].length;
    }
    return { min, max };
  }

  private parseAtom(): PatternNode {
    const c = this.src[this.i]!;
    switch (c) {
      case '(':
        return this.parseGroup();
      case '[':
        return this.parseClass();
      case '.':
        this.i++;
        return classOf(LINE_BREAK, true);
      case '^':
        this.i++;
        return { t: 'assert', kind: 'bol' };
      case '$':
        this.i++;
        return { t: 'assert', kind: 'eol' };
      case '\\':
        return this.parseEscape(false);
      case '*':
      case '+':
      case '?':
        throw this.fail('nothing to repeat');
      case '{':
        if (this.braceQuantifier(false)) throw this.fail('nothing to repeat');
        this.i++;
        return single(0x7b);
      default: {
        const cp = this.src.codePointAt(this.i)!;
        this.i += cp > 0xffff ? 2 : 1;
        return single(cp);
      }
    }
  }

  private parseGroup(): PatternNode {
    this.i++; // (
    if (this.peek() === '?') {
      const head = this.src.slice(this.i, this.i + 3);
      if (head.startsWith('?:')) {
        this.i += 2;
      } else if (
        head === '?<=' ||
        head === '?<!' ||
        head.startsWith('?=') ||
        head.startsWith('?!')
      ) {
        throw this.fail('lookahead and lookbehind are not supported');
      } else if (head.startsWith('?<')) {
        const end = this.src.indexOf('>', this.i);
        if (end === -1 || !/^\?<[A-Za-z_$][\w$]*>$/.test(this.src.slice(this.i, end + 1))) {
          throw this.fail('invalid group name');
        }
        this.i = end + 1;
      } else {
        throw this.fail('invalid group');
      }
    }
    const inner = this.parseAlt();
    if (this.peek() !== ')') throw this.fail('unterminated group');
    this.i++;
    return inner;
  }

  private parseClass(): PatternNode {
    this.i++; // [
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.i++;
    }
    const parts: CharRanges[] = [];
    const ranges: number[] = [];
    while (this.peek() !== ']') {
      if (this.i >= this.src.length) throw this.fail('unterminated character class');
      const lo = this.classAtom();
      if (typeof lo !== 'number') {
        parts.push(lo);
        continue;
      }
      if (this.peek() === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++;
        const hi = this.classAtom();
        if (typeof hi !== 'number') {
          // Like JavaScript without the u flag: "[a-\d]" is a, -, and digits.
          ranges.push(lo, lo, 0x2d, 0x2d);
          parts.push(hi);
          continue;
        }
        if (hi < lo) throw this.fail('range out of order in character class');
        ranges.push(lo, hi);
      } else {
        ranges.push(lo, lo);
      }
    }
    this.i++; // ]
    parts.push({ ranges, negated: false });
    return { t: 'class', cls: { parts, negated } };
  }

  private classAtom(): number | CharRanges {
    if (this.peek() === '\\') {
      const node = this.parseEscape(true);
      if (node.t !== 'class') throw this.fail('invalid escape in character class');
      const part = node.cls.parts[0]!;
      if (!node.cls.negated && !part.negated && part.ranges.length === 2) {
        if (part.ranges[0] === part.ranges[1]) return part.ranges[0]!;
      }
      return node.cls.negated ? { ranges: part.ranges, negated: !part.negated } : part;
    }
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  private parseEscape(inClass: boolean): PatternNode {
    this.i++; // backslash
    const c = this.src[this.i];
    if (c === undefined) throw this.fail('"\\" at end of pattern');
    this.i++;
    switch (c) {
      case 'd':
        return classOf(DIGIT);
      case 'D':
        return classOf(DIGIT, true);
      case 'w':
        return classOf(WORD);
      case 'W':
        return classOf(WORD, true);
      case 's':
        return classOf(SPACE);
      case 'S':
        return classOf(SPACE, true);
      case 't':
        return single(0x09);
      case 'n':
        return single(0x0a);
      case 'r':
        return single(0x0d);
      case 'f':
        return single(0x0c);
      case 'v':
        return single(0x0b);
      case 'b':
        return inClass ? single(0x08) : { t: 'assert', kind: 'word' };
      case 'B':
        if (inClass) break;
        return { t: 'assert', kind: 'nonword' };
      case '0':
        if (/[0-9]/.test(this.peek() ?? '')) throw this.fail('octal escapes are not supported');
        return single(0);
      case 'x': {
        const m = /^[0-9A-Fa-f]{2}/.exec(this.src.slice(this.i));
        if (!m) throw this.fail('"\\x" needs two hex digits');
        this.i += 2;
        return single(Number.parseInt(m[0], 16));
      }
      case 'u': {
        const m = /^(?:([0-9A-Fa-f]{4})|\{([0-9A-Fa-f]{1,6})\})/.exec(this.src.slice(this.i));
        const hex = m?.[1] ?? m?.[2];
        if (!m || hex === undefined || Number.parseInt(hex, 16) > 0x10ffff) {
          throw this.fail('"\\u" needs four hex digits or {hex}');
        }
        this.i += m[0].length;
        return single(Number.parseInt(hex, 16));
      }
      case 'k':
        throw this.fail('backreferences are not supported');
      default:
        break;
    }
    if (/[1-9]/.test(c)) throw this.fail('backreferences are not supported');
    if (/[A-Za-z0-9]/.test(c)) throw this.fail(`"\\${c}" is not a supported escape`);
    const cp = this.src.codePointAt(this.i - 1)!;
    if (cp > 0xffff) this.i++;
    return single(cp);
  }
}

/**
 * Compiles a grep regex into a matcher that cannot hang: length-capped, no backreferences or
 * lookaround, bounded repeat counts, and matched in linear time (see {@link LinearMatcher}).
 */
export function compileBoundedRegex(pattern: string): LinearMatcher {
  if (pattern.length > MAX_REGEX_CHARS) {
    throw patternError(
      pattern.slice(0, 40) + '...',
      `it is ${pattern.length} characters long; keep regexes under ${MAX_REGEX_CHARS + 1}`,
    );
  }
  return new LinearMatcher(new RegexParser(pattern).parse());
}

// ---------------------------------------------------------------------------------------------
// grep over text
// ---------------------------------------------------------------------------------------------

/**
 * The grep searcher stores use. It accepts and refuses exactly what the shared
 * `compileSearcher` does (so every backend agrees on patterns), but runs a regex on the
 * linear-time engine over whole lines: no accepted pattern can block the event loop.
 * Patterns the engine does not parse (e.g. `\p{L}`) fall back to the shared searcher.
 */
export function compileStoreSearcher(pattern: string, regex: boolean | undefined): TextSearcher {
  const shared = compileSearcher(pattern, { regex });
  if (!regex) return shared;
  let linear: LinearMatcher;
  try {
    linear = compileBoundedRegex(pattern);
  } catch {
    return shared;
  }
  return {
    literal: undefined,
    search: (path, text, limit, budget) => searchLines(linear, path, text, limit, budget),
  };
}

/** Matching lines of `text` (1-based, "\r\n" tolerated, no line after a final newline). */
async function searchLines(
  matcher: LinearMatcher,
  path: string,
  text: string,
  limit: number,
  budget: SearchBudget,
): Promise<GrepMatch[]> {
  const out: GrepMatch[] = [];
  let pos = 0;
  let line = 1;
  while (out.length < limit) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0 && pos === text.length && pos > 0) break;
    let body = text.slice(pos, nl < 0 ? text.length : nl);
    if (body.endsWith('\r')) body = body.slice(0, -1);
    if (matcher.search(body)) {
      out.push({ path, line, text: body.slice(0, MAX_MATCH_TEXT_CHARS) });
    }
    await budget.step(true);
    if (nl < 0) break;
    pos = nl + 1;
    line++;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The store backend, minus its storage
// ---------------------------------------------------------------------------------------------

/** Options every store takes: whose files, how much of them, and which clock stamps them. */
export interface StoreNamespaceOptions {
  /** Tenant (organisation, deployment); files of one tenant are invisible to every other. */
  tenant: string;
  /** User within the tenant; files of one user are invisible to every other. */
  user: string;
  /** Largest file, in UTF-8 bytes (default 5 MiB, as for every backend). */
  maxFileBytes?: number;
  /** Largest total of this tenant/user's files, in UTF-8 bytes (default 64 MiB). */
  maxTotalBytes?: number;
  /** Source of `modifiedAt`; the wall clock by default. */
  clock?: Pick<Clock, 'now'>;
}

/** A stored file's metadata row. */
export interface StoreMetaRow {
  path: string;
  size: number;
  modifiedAt: number;
}

/** A stored file's row including its text. */
export interface StoreContentRow extends StoreMetaRow {
  content: string;
}

/** What a store reads inside its write transaction so {@link checkStoreWrite} can decide. */
export interface StoreWriteSnapshot {
  /** Some file lives below the target path, i.e. the target is a directory. */
  isDirectory: boolean;
  /** The nearest ancestor of the target that is a file, if any. */
  fileAncestor: string | undefined;
  /** Size of the file being replaced, if it exists. */
  oldSize: number | undefined;
  /** Current total bytes of the namespace. */
  totalBytes: number;
}

/** Decides, inside a store's write transaction, whether a write may go ahead. */
export function checkStoreWrite(
  path: string,
  size: number,
  snap: StoreWriteSnapshot,
  caps: { maxFileBytes: number; maxTotalBytes: number },
): void {
  if (snap.isDirectory) {
    throw new FileError('is_directory', `${path} is a directory; choose a file name inside it`);
  }
  if (snap.fileAncestor !== undefined) {
    throw new FileError(
      'invalid_path',
      `${snap.fileAncestor} is a file, so ${path} cannot be created inside it`,
    );
  }
  checkSizeCaps(path, size, snap.oldSize ?? 0, snap.totalBytes, caps);
}

function namespacePart(name: 'tenant' | 'user', value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 256) {
    throw new TasklineError(
      'invalid_argument',
      `Give the store's ${name} as a string of 1-256 characters.`,
    );
  }
  if (value.includes('\u0000')) {
    throw new TasklineError('invalid_argument', `The store's ${name} cannot contain NUL.`);
  }
  return value;
}

const GREP_PAGE = 64;

/**
 * The FileBackend semantics shared by the SQLite and Postgres stores: implicit directories
 * derived from file paths, caps, listing, glob and grep. Subclasses only move rows.
 */
export abstract class StoreFileBackend implements FileBackend {
  abstract readonly kind: string;
  /** Tenant this store's files belong to. */
  readonly tenant: string;
  /** User this store's files belong to. */
  readonly user: string;
  /** Per-file and per-namespace caps, in bytes. */
  readonly caps: { readonly maxFileBytes: number; readonly maxTotalBytes: number };
  protected readonly clock: Pick<Clock, 'now'>;

  protected constructor(options: StoreNamespaceOptions) {
    this.tenant = namespacePart('tenant', options.tenant);
    this.user = namespacePart('user', options.user);
    this.caps = {
      maxFileBytes: sizeOption('maxFileBytes', options.maxFileBytes, DEFAULT_MAX_FILE_BYTES),
      maxTotalBytes: sizeOption('maxTotalBytes', options.maxTotalBytes, DEFAULT_MAX_TOTAL_BYTES),
    };
    this.clock = options.clock ?? { now: () => Date.now() };
  }

  /** Metadata of the file at exactly `path`. */
  protected abstract getMeta(path: string): Promise<StoreMetaRow | undefined>;
  /** The file at exactly `path`, with its text. */
  protected abstract getFile(path: string): Promise<StoreContentRow | undefined>;
  /** Metadata of every file in `range`, in any order. */
  protected abstract listMeta(range: PathRange): Promise<StoreMetaRow[]>;
  /** Whether any file lies in `range`. */
  protected abstract hasAny(range: PathRange): Promise<boolean>;
  /**
   * Up to `limit` files in `range` with paths after `after`, in path order, optionally only
   * those whose text contains `literal`.
   */
  protected abstract contentPage(
    range: PathRange,
    after: string,
    literal: string | undefined,
    limit: number,
  ): Promise<StoreContentRow[]>;
  /** Upserts a file atomically after calling {@link checkStoreWrite} in the same transaction. */
  protected abstract putChecked(row: StoreContentRow): Promise<void>;
  /** Removes the file at exactly `path`; false if there was none. */
  protected abstract remove(path: string): Promise<boolean>;

  async ls(path: string): Promise<FileInfo[]> {
    const dir = normalizePath(path);
    const file = dir === '/' ? undefined : await this.getMeta(dir);
    if (file) return [toInfo(file)];
    const range = rangeBelow(dir);
    const rows = await this.listMeta(range);
    if (rows.length === 0 && dir !== '/') {
      throw new FileError('not_found', `${dir} does not exist`);
    }
    const dirs = new Set<string>();
    const out: FileInfo[] = [];
    for (const row of rows) {
      const slash = row.path.indexOf('/', range.lo.length);
      if (slash === -1) out.push(toInfo(row));
      else dirs.add(row.path.slice(0, slash));
    }
    for (const d of dirs) out.push({ path: d, isDir: true });
    return out.sort((a, b) => comparePaths(a.path, b.path));
  }

  async stat(path: string): Promise<FileInfo | undefined> {
    const p = normalizePath(path);
    if (p === '/') return { path: '/', isDir: true };
    const row = await this.getMeta(p);
    if (row) return toInfo(row);
    return (await this.isDir(p)) ? { path: p, isDir: true } : undefined;
  }

  async read(path: string): Promise<string> {
    const p = normalizePath(path);
    const row = p === '/' ? undefined : await this.getFile(p);
    if (!row) throw await this.missing(p);
    if (row.size > this.caps.maxFileBytes) {
      throw new FileError(
        'too_large',
        `${p} is ${formatBytes(row.size)}, over the ${formatBytes(this.caps.maxFileBytes)} ` +
          'limit per file; grep it instead',
      );
    }
    return row.content;
  }

  async write(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    const text = checkTextContent(content);
    if (p === '/')
      throw new FileError('is_directory', '/ is a directory; choose a file name inside it');
    const size = Buffer.byteLength(text, 'utf8');
    // The per-file cap needs no transaction; the total is checked again inside it.
    checkSizeCaps(p, size, 0, 0, { ...this.caps, maxTotalBytes: Number.POSITIVE_INFINITY });
    await this.putChecked({ path: p, content: text, size, modifiedAt: this.clock.now() });
  }

  async delete(path: string): Promise<void> {
    const p = normalizePath(path);
    if (p !== '/' && (await this.remove(p))) return;
    throw await this.missing(p);
  }

  async glob(pattern: string, base = '/'): Promise<FileInfo[]> {
    const split = splitGlob(pattern, base);
    const glob = compileGlob(split.pattern);
    const rows = await this.listMeta(rangeBelow(split.base));
    if (rows.length === 0 && split.base !== '/') {
      // Same answers as the other backends: a missing base the caller named is not_found;
      // a base that is a file, or a prefix taken from the pattern, simply matches nothing.
      const named = split.base === normalizePath(base);
      if (named && !(await this.getMeta(split.base))) {
        throw new FileError('not_found', `${split.base} does not exist`);
      }
      return [];
    }
    return rows
      .filter((r) => glob.matches(relativeTo(split.base, r.path)))
      .map(toInfo)
      .sort((a, b) => comparePaths(a.path, b.path));
  }

  async grep(pattern: string, options: GrepOptions = {}): Promise<GrepMatch[]> {
    const searcher = compileStoreSearcher(pattern, options.regex);
    const limit = checkMaxCount(options.maxCount);
    const root = normalizePath(options.path ?? '/');
    const keep = createPathFilter(options.glob, root);
    const budget = new SearchBudget(options.signal);
    budget.check();
    const out: GrepMatch[] = [];
    const file = root === '/' ? undefined : await this.getFile(root);
    if (file) {
      if (keep(file.path))
        out.push(...(await searcher.search(file.path, file.content, limit, budget)));
      return out;
    }
    if (!(await this.isDir(root))) throw new FileError('not_found', `${root} does not exist`);
    const range = rangeBelow(root);
    let after = '';
    for (;;) {
      const page = await this.contentPage(range, after, searcher.literal, GREP_PAGE);
      for (const row of page) {
        if (!keep(row.path)) continue;
        const hits = await searcher.search(row.path, row.content, limit - out.length, budget);
        out.push(...hits);
        if (out.length >= limit) return out;
        await budget.step();
      }
      if (page.length < GREP_PAGE) return out;
      after = page[page.length - 1]!.path;
    }
  }

  private async isDir(p: string): Promise<boolean> {
    return p === '/' || (await this.hasAny(rangeBelow(p)));
  }

  private async missing(p: string): Promise<FileError> {
    if (await this.isDir(p)) {
      return new FileError('is_directory', `${p} is a directory, not a file`);
    }
    return new FileError('not_found', `${p} does not exist`);
  }
}

function toInfo(row: StoreMetaRow): FileInfo {
  return { path: row.path, isDir: false, size: row.size, modifiedAt: row.modifiedAt };
}
