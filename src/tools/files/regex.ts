/**
 * The regex engine every file backend's grep uses: a parser for a subset of JavaScript regex
 * syntax and a Thompson-NFA matcher that runs in O(text length x program size) whatever the
 * pattern. No backtracking engine ever runs on file content, so no accepted pattern can hang
 * (`(a+)+$`, `(a|aa)*b`, `a{0,16}` x 6 ... are just slow-ish linear scans), and a scan can be
 * paused between slices of work so aborts and time budgets fire.
 */
import { FileError } from './backend.js';

/** Longest regex `grep` accepts, in characters. */
export const MAX_REGEX_PATTERN_LENGTH = 256;

/** Largest `{n,m}` bound a regex may use. */
export const MAX_REGEX_REPEAT = 1000;

/**
 * Most states a compiled regex may have (each `{n,m}` copies its operand). Matching one
 * character costs at most about twice this many steps, so it bounds the work per character.
 */
export const MAX_REGEX_PROGRAM_SIZE = 5000;

// ---------------------------------------------------------------------------------------------
// Character classes
// ---------------------------------------------------------------------------------------------

interface CharSet {
  /** Flat [lo0, hi0, lo1, hi1, ...] code point ranges, inclusive. */
  ranges: number[];
  /** A Unicode property (`\p{L}`), tested one code point at a time. */
  prop?: RegExp;
  negated: boolean;
}

interface CharClass {
  parts: CharSet[];
  negated: boolean;
}

type AssertKind = 'bol' | 'eol' | 'word' | 'nonword';

type PatternNode =
  | { t: 'class'; cls: CharClass }
  | { t: 'seq'; items: PatternNode[] }
  | { t: 'alt'; items: PatternNode[] }
  | { t: 'rep'; node: PatternNode; min: number; max: number }
  | { t: 'assert'; kind: AssertKind };

const DIGIT: CharSet = { ranges: [0x30, 0x39], negated: false };
const WORD: CharSet = { ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a], negated: false };
const SPACE: CharSet = {
  ranges: [
    0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f,
    0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
  ],
  negated: false,
};
const LINE_BREAK: CharSet = { ranges: [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029], negated: false };

function setHas(set: CharSet, cp: number): boolean {
  if (set.prop) return set.prop.test(String.fromCodePoint(cp)) !== set.negated;
  const { ranges } = set;
  let inside = false;
  for (let i = 0; i < ranges.length; i += 2) {
    if (cp >= (ranges[i] ?? 0) && cp <= (ranges[i + 1] ?? -1)) {
      inside = true;
      break;
    }
  }
  return inside !== set.negated;
}

function classHas(c: CharClass, cp: number): boolean {
  let inside = false;
  for (const part of c.parts) {
    if (setHas(part, cp)) {
      inside = true;
      break;
    }
  }
  return inside !== c.negated;
}

/** A class ready for matching: a table for ASCII, the full test above it. */
class CompiledClass {
  readonly #ascii = new Uint8Array(128);
  readonly #cls: CharClass;

  constructor(cls: CharClass) {
    this.#cls = cls;
    for (let cp = 0; cp < 128; cp++) this.#ascii[cp] = classHas(cls, cp) ? 1 : 0;
  }

  has(cp: number): boolean {
    return cp < 128 ? this.#ascii[cp] === 1 : classHas(this.#cls, cp);
  }
}

function isWordCp(cp: number): boolean {
  return (
    (cp >= 0x61 && cp <= 0x7a) ||
    (cp >= 0x41 && cp <= 0x5a) ||
    (cp >= 0x30 && cp <= 0x39) ||
    cp === 0x5f
  );
}

function single(cp: number): PatternNode {
  return { t: 'class', cls: { parts: [{ ranges: [cp, cp], negated: false }], negated: false } };
}

function classOf(part: CharSet, negated = false): PatternNode {
  return { t: 'class', cls: { parts: [part], negated } };
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

function refused(pattern: string, why: string): FileError {
  const shown = pattern.length > 60 ? `${pattern.slice(0, 60)}...` : pattern;
  return new FileError('invalid_pattern', `the regex ${JSON.stringify(shown)} was refused: ${why}`);
}

/** Parses the supported subset: JavaScript regex syntax minus backreferences and lookaround. */
class RegexParser {
  #i = 0;
  readonly #src: string;

  constructor(src: string) {
    this.#src = src;
  }

  parse(): PatternNode {
    const node = this.#alt();
    if (this.#i < this.#src.length) throw this.#fail('it has an unmatched ")"');
    return node;
  }

  #fail(why: string): FileError {
    return refused(this.#src, why);
  }

  #peek(): string | undefined {
    return this.#src[this.#i];
  }

  #alt(): PatternNode {
    const items = [this.#seq()];
    while (this.#peek() === '|') {
      this.#i++;
      items.push(this.#seq());
    }
    return items.length === 1 ? (items[0] as PatternNode) : { t: 'alt', items };
  }

  #seq(): PatternNode {
    const items: PatternNode[] = [];
    for (let c = this.#peek(); c !== undefined && c !== '|' && c !== ')'; c = this.#peek()) {
      const atom = this.#atom();
      const q = this.#quantifier();
      if (q) {
        if (atom.t === 'assert') throw this.#fail('an anchor or \\b cannot be repeated');
        items.push({ t: 'rep', node: atom, min: q.min, max: q.max });
        if (this.#peek() === '?') this.#i++; // lazy: same answer to "does this line match"
        if (this.#quantifierAhead()) {
          throw this.#fail('a repetition is repeated again (like a{2}{3} or a**); group it first');
        }
      } else {
        items.push(atom);
      }
    }
    return items.length === 1 ? (items[0] as PatternNode) : { t: 'seq', items };
  }

  #quantifierAhead(): boolean {
    const c = this.#peek();
    if (c === '*' || c === '+' || c === '?') return true;
    return c === '{' && this.#brace(false) !== undefined;
  }

  #quantifier(): { min: number; max: number } | undefined {
    const c = this.#peek();
    if (c === '*' || c === '+' || c === '?') {
      this.#i++;
      return { min: c === '+' ? 1 : 0, max: c === '?' ? 1 : Number.POSITIVE_INFINITY };
    }
    return c === '{' ? this.#brace(true) : undefined;
  }

  #brace(consume: boolean): { min: number; max: number } | undefined {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.#src.slice(this.#i, this.#i + 24));
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3]);
    if (consume) {
      if (min > MAX_REGEX_REPEAT || (max !== Number.POSITIVE_INFINITY && max > MAX_REGEX_REPEAT)) {
        throw this.#fail(`repeat counts above ${MAX_REGEX_REPEAT} are not allowed`);
      }
      if (max < min) throw this.#fail('the numbers in a {} repetition are out of order');
      this.#i += m[0].length;
    }
    return { min, max };
  }

  #atom(): PatternNode {
    const c = this.#src[this.#i] as string;
    switch (c) {
      case '(':
        return this.#group();
      case '[':
        return this.#class();
      case '.':
        this.#i++;
        return classOf(LINE_BREAK, true);
      case '^':
        this.#i++;
        return { t: 'assert', kind: 'bol' };
      case '$':
        this.#i++;
        return { t: 'assert', kind: 'eol' };
      case '\\':
        return this.#escape(false);
      case '*':
      case '+':
      case '?':
        throw this.#fail(`"${c}" has nothing to repeat`);
      case '{':
        if (this.#brace(false)) throw this.#fail('"{" has nothing to repeat');
        this.#i++;
        return single(0x7b);
      default: {
        const cp = this.#src.codePointAt(this.#i) as number;
        this.#i += cp > 0xffff ? 2 : 1;
        return single(cp);
      }
    }
  }

  #group(): PatternNode {
    this.#i++; // (
    if (this.#peek() === '?') {
      const head = this.#src.slice(this.#i, this.#i + 3);
      if (head.startsWith('?:')) {
        this.#i += 2;
      } else if (/^\?(<[=!]|[=!])/.test(head)) {
        throw this.#fail('lookahead and lookbehind are not supported; match the text directly');
      } else if (head.startsWith('?<')) {
        const end = this.#src.indexOf('>', this.#i);
        if (end === -1 || !/^\?<[A-Za-z_$][\w$]*>$/.test(this.#src.slice(this.#i, end + 1))) {
          throw this.#fail('a group name "(?<name>" is invalid or not closed');
        }
        this.#i = end + 1;
      } else {
        throw this.#fail('"(?" starts an unsupported group; use (...) or (?:...)');
      }
    }
    const inner = this.#alt();
    if (this.#peek() !== ')') throw this.#fail('it has an unclosed "("');
    this.#i++;
    return inner;
  }

  #class(): PatternNode {
    this.#i++; // [
    let negated = false;
    if (this.#peek() === '^') {
      negated = true;
      this.#i++;
    }
    const parts: CharSet[] = [];
    const ranges: number[] = [];
    while (this.#peek() !== ']') {
      if (this.#i >= this.#src.length) throw this.#fail('a character class "[" is not closed');
      const lo = this.#classAtom();
      if (typeof lo !== 'number') {
        parts.push(lo);
        continue;
      }
      if (
        this.#peek() === '-' &&
        this.#src[this.#i + 1] !== ']' &&
        this.#i + 1 < this.#src.length
      ) {
        this.#i++;
        const hi = this.#classAtom();
        if (typeof hi !== 'number') {
          // Like JavaScript without the u flag: "[a-\d]" is a, "-" and the digits.
          ranges.push(lo, lo, 0x2d, 0x2d);
          parts.push(hi);
          continue;
        }
        if (hi < lo) throw this.#fail('a range in a character class is out of order');
        ranges.push(lo, hi);
      } else {
        ranges.push(lo, lo);
      }
    }
    this.#i++; // ]
    parts.push({ ranges, negated: false });
    return { t: 'class', cls: { parts, negated } };
  }

  #classAtom(): number | CharSet {
    if (this.#peek() === '\\') {
      const node = this.#escape(true);
      if (node.t !== 'class') throw this.#fail('an escape in a character class is invalid');
      const part = node.cls.parts[0] as CharSet;
      if (!node.cls.negated && !part.negated && !part.prop && part.ranges.length === 2) {
        if (part.ranges[0] === part.ranges[1]) return part.ranges[0] as number;
      }
      return node.cls.negated ? { ...part, negated: !part.negated } : part;
    }
    const cp = this.#src.codePointAt(this.#i) as number;
    this.#i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  #property(negated: boolean): PatternNode {
    const m = /^\{([A-Za-z0-9_]+(?:=[A-Za-z0-9_]+)?)\}/.exec(
      this.#src.slice(this.#i, this.#i + 64),
    );
    let prop: RegExp | undefined;
    try {
      // A fixed one-character class: tested on a single code point, it cannot backtrack.
      if (m) prop = new RegExp(`^\\p{${m[1]}}$`, 'u');
    } catch {
      prop = undefined;
    }
    if (!m || !prop) throw this.#fail('"\\p" needs a known Unicode property, like \\p{L}');
    this.#i += m[0].length;
    return classOf({ ranges: [], prop, negated });
  }

  #escape(inClass: boolean): PatternNode {
    this.#i++; // backslash
    const c = this.#src[this.#i];
    if (c === undefined) throw this.#fail('it ends with a lone "\\"');
    this.#i++;
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
      case 'p':
      case 'P':
        return this.#property(c === 'P');
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
        if (/[0-9]/.test(this.#peek() ?? '')) throw this.#fail('octal escapes are not supported');
        return single(0);
      case 'x': {
        const m = /^[0-9A-Fa-f]{2}/.exec(this.#src.slice(this.#i, this.#i + 2));
        if (!m) throw this.#fail('"\\x" needs two hex digits');
        this.#i += 2;
        return single(Number.parseInt(m[0], 16));
      }
      case 'u': {
        const m = /^(?:([0-9A-Fa-f]{4})|\{([0-9A-Fa-f]{1,6})\})/.exec(
          this.#src.slice(this.#i, this.#i + 8),
        );
        const hex = m?.[1] ?? m?.[2];
        if (!m || hex === undefined || Number.parseInt(hex, 16) > 0x10ffff) {
          throw this.#fail('"\\u" needs four hex digits or {hex}');
        }
        this.#i += m[0].length;
        return single(Number.parseInt(hex, 16));
      }
      case 'k':
        throw this.#fail(
          'backreferences (\\k<name>) are not supported; they can make a search hang',
        );
      default:
        break;
    }
    if (/[1-9]/.test(c)) {
      throw this.#fail('backreferences (\\1) are not supported; they can make a search hang');
    }
    if (/[A-Za-z0-9]/.test(c)) throw this.#fail(`"\\${c}" is not a supported escape`);
    const cp = this.#src.codePointAt(this.#i - 1) as number;
    if (cp > 0xffff) this.#i++;
    return single(cp);
  }
}

// ---------------------------------------------------------------------------------------------
// Required text: a cheap pre-filter
// ---------------------------------------------------------------------------------------------

/** The character a class stands for when it is exactly one code point, else undefined. */
function literalOf(node: PatternNode): string | undefined {
  if (node.t !== 'class' || node.cls.negated || node.cls.parts.length !== 1) return undefined;
  const part = node.cls.parts[0] as CharSet;
  if (part.prop || part.negated || part.ranges.length !== 2 || part.ranges[0] !== part.ranges[1]) {
    return undefined;
  }
  return String.fromCodePoint(part.ranges[0] as number);
}

/** The group whose shortest piece is longest (the most selective guess). */
function bestGroup(groups: string[][]): string[] | undefined {
  let best: string[] | undefined;
  let bestLen = 0;
  for (const g of groups) {
    const len = Math.min(...g.map((piece) => piece.length));
    if (len > bestLen) {
      best = g;
      bestLen = len;
    }
  }
  return best;
}

/**
 * Text every match of `node` contains, as groups: each group lists pieces of which a match
 * contains at least one, and a match satisfies every group. `[]` means no constraint.
 */
function requiredText(node: PatternNode): string[][] {
  switch (node.t) {
    case 'class': {
      const c = literalOf(node);
      return c === undefined ? [] : [[c]];
    }
    case 'assert':
      return [];
    case 'rep':
      return node.min >= 1 ? requiredText(node.node) : [];
    case 'alt': {
      const pieces: string[] = [];
      for (const item of node.items) {
        const best = bestGroup(requiredText(item));
        if (!best) return []; // a branch without required text can match anywhere
        pieces.push(...best);
      }
      return [[...new Set(pieces)]];
    }
    case 'seq': {
      const out: string[][] = [];
      let run = '';
      for (const item of node.items) {
        const c = literalOf(item);
        if (c !== undefined) {
          run += c;
          continue;
        }
        if (run !== '') out.push([run]);
        run = '';
        out.push(...requiredText(item));
      }
      if (run !== '') out.push([run]);
      return out;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Compiler
// ---------------------------------------------------------------------------------------------

const S_CLASS = 0;
const S_SPLIT = 1;
const S_ASSERT = 2;
const S_MATCH = 3;

const A_BOL = 0;
const A_EOL = 1;
const A_WORD = 2;
const A_NONWORD = 3;

const ASSERT_CODE: Record<AssertKind, number> = {
  bol: A_BOL,
  eol: A_EOL,
  word: A_WORD,
  nonword: A_NONWORD,
};

/** Builds the NFA: states in parallel arrays, refusing programs over the size cap. */
class ProgramBuilder {
  readonly kind: number[] = [];
  readonly out1: number[] = [];
  readonly out2: number[] = [];
  readonly arg: number[] = [];
  readonly classes: CompiledClass[] = [];
  readonly #classIds = new Map<CharClass, number>();
  readonly #pattern: string;

  constructor(pattern: string) {
    this.#pattern = pattern;
  }

  push(kind: number, a: number, b: number, arg = -1): number {
    if (this.kind.length >= MAX_REGEX_PROGRAM_SIZE) {
      throw refused(
        this.#pattern,
        `it compiles to more than ${MAX_REGEX_PROGRAM_SIZE} states (large {n,m} counts multiply); ` +
          'use smaller counts or split the search',
      );
    }
    this.kind.push(kind);
    this.out1.push(a);
    this.out2.push(b);
    this.arg.push(arg);
    return this.kind.length - 1;
  }

  #classId(cls: CharClass): number {
    let id = this.#classIds.get(cls);
    if (id === undefined) {
      id = this.classes.length;
      this.classes.push(new CompiledClass(cls));
      this.#classIds.set(cls, id);
    }
    return id;
  }

  /** Compiles `node` so that it continues at state `next`; returns its entry state. */
  compile(node: PatternNode, next: number): number {
    switch (node.t) {
      case 'class':
        return this.push(S_CLASS, next, -1, this.#classId(node.cls));
      case 'assert':
        return this.push(S_ASSERT, next, -1, ASSERT_CODE[node.kind]);
      case 'seq': {
        let cont = next;
        for (let i = node.items.length - 1; i >= 0; i--) {
          cont = this.compile(node.items[i] as PatternNode, cont);
        }
        return cont;
      }
      case 'alt': {
        const starts = node.items.map((item) => this.compile(item, next));
        let s = starts[starts.length - 1] ?? next;
        for (let i = starts.length - 2; i >= 0; i--) s = this.push(S_SPLIT, starts[i] as number, s);
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
}

/**
 * What the start state's epsilon closure holds: the classes a match can begin with (null if
 * the closure also holds an assertion or the match state, which depend on the position), and
 * whether every path first passes `^`.
 */
function startShape(
  b: ProgramBuilder,
  start: number,
): { starters: CompiledClass[] | null; anchored: boolean } {
  const seen = new Set<number>();
  const stack = [start];
  const classIds = new Set<number>();
  let plain = true;
  let anchored = true;
  while (stack.length > 0) {
    const s = stack.pop() as number;
    if (seen.has(s)) continue;
    seen.add(s);
    const kind = b.kind[s];
    if (kind === S_SPLIT) {
      stack.push(b.out1[s] as number, b.out2[s] as number);
    } else if (kind === S_ASSERT) {
      plain = false;
      if (b.arg[s] !== A_BOL) anchored = false;
    } else {
      anchored = false;
      if (kind === S_CLASS) classIds.add(b.arg[s] as number);
      else plain = false;
    }
  }
  const starters = [...classIds].map((id) => b.classes[id] as CompiledClass);
  return { starters: plain ? starters : null, anchored };
}

// ---------------------------------------------------------------------------------------------
// Matcher
// ---------------------------------------------------------------------------------------------

/**
 * A compiled grep regex. {@link RegexMatcher.test} answers "does the pattern match somewhere
 * in this line" in at most about `(length + 1) x 2 x size` steps; {@link RegexMatcher.begin}
 * and {@link RegexMatcher.advance} do the same in slices, so a caller can yield between them.
 * `^` and `$` refer to the ends of the range searched (grep searches line by line). Not
 * reentrant: one scan at a time per matcher.
 */
export class RegexMatcher {
  /** Number of NFA states; the work per character is bounded by about twice this. */
  readonly size: number;
  /** Work done so far (states visited), over every scan; callers use it to bound and pace work. */
  steps = 0;
  /**
   * Text any match must contain, for pre-filtering: every group has a piece in the matched
   * line. Empty when the pattern requires no fixed text (`^$`, `\d+`).
   */
  readonly required: readonly (readonly string[])[];

  readonly #kind: Uint8Array;
  readonly #out1: Int32Array;
  readonly #out2: Int32Array;
  readonly #arg: Int32Array;
  readonly #classes: CompiledClass[];
  readonly #start: number;
  readonly #mark: Uint32Array;
  readonly #stack: Int32Array;
  #clist: Int32Array;
  #nlist: Int32Array;
  #cn = 0;
  #gen = 0;
  #matched = false;
  // The scan in progress.
  #text = '';
  #i = 0;
  #end = 0;
  #cur = -1;
  /** The current list is just the start state's closure (no match in progress). */
  #idle = false;
  /** Classes a match can start with, when the start closure is only classes (else null). */
  readonly #starters: CompiledClass[] | null;
  /** ASCII code units accepted by any of `#starters`. */
  readonly #starterAscii = new Uint8Array(128);
  /** Every match starts with `^`, so the start state is not re-entered after position 0. */
  readonly #anchored: boolean;

  /** Compiles `pattern`; throws `invalid_pattern` (see {@link compileRegex}). */
  constructor(pattern: string) {
    if (typeof pattern !== 'string' || pattern.length === 0) {
      throw new FileError('invalid_pattern', 'the pattern is empty; give the text to search for');
    }
    if (pattern.length > MAX_REGEX_PATTERN_LENGTH) {
      throw refused(
        pattern,
        `it is ${pattern.length} characters long; keep regexes to ${MAX_REGEX_PATTERN_LENGTH} ` +
          'or search literally',
      );
    }
    const root = new RegexParser(pattern).parse();
    this.required = requiredText(root);
    const builder = new ProgramBuilder(pattern);
    const start = builder.compile(root, builder.push(S_MATCH, -1, -1));
    this.size = builder.kind.length;
    this.#kind = Uint8Array.from(builder.kind);
    this.#out1 = Int32Array.from(builder.out1);
    this.#out2 = Int32Array.from(builder.out2);
    this.#arg = Int32Array.from(builder.arg);
    this.#classes = builder.classes;
    this.#start = start;
    this.#mark = new Uint32Array(this.size);
    this.#stack = new Int32Array(this.size + 1);
    this.#clist = new Int32Array(this.size);
    this.#nlist = new Int32Array(this.size);
    const shape = startShape(builder, start);
    this.#starters = shape.starters;
    this.#anchored = shape.anchored;
    for (let c = 0; c < 128; c++) {
      if (shape.starters?.some((cls) => cls.has(c))) this.#starterAscii[c] = 1;
    }
  }

  /** True when the pattern matches somewhere in `text[start, end)`, run to completion. */
  test(text: string, start = 0, end = text.length): boolean {
    this.begin(text, start, end);
    return this.advance(Number.POSITIVE_INFINITY) === true;
  }

  /**
   * True when a scan may start at any character a match can begin with (the start state's
   * closure holds no assertion): then {@link RegexMatcher.nextStart} finds those characters.
   */
  get canSkip(): boolean {
    return this.#starters !== null;
  }

  /**
   * Index of the first character in `text[from, to)` a match can begin with, or -1; without
   * {@link RegexMatcher.canSkip}, `from`. A scan begun there finds the same matches later in
   * its line as a scan from the line start (counted in `steps`, one a character skipped).
   */
  nextStart(text: string, from: number, to = text.length): number {
    const starters = this.#starters;
    if (!starters) return from;
    const table = this.#starterAscii;
    let i = from;
    while (i < to) {
      const c = text.charCodeAt(i);
      if (c < 128) {
        if (table[c] === 1) break;
        i++;
        continue;
      }
      const cp = c >= 0xd800 && c <= 0xdbff && i + 1 < to ? (text.codePointAt(i) as number) : c;
      if (starters.some((cls) => cls.has(cp))) break;
      i += cp > 0xffff ? 2 : 1;
    }
    this.steps += i - from;
    return i < to ? i : -1;
  }

  /** Starts a scan of `text[start, end)`; continue it with {@link RegexMatcher.advance}. */
  begin(text: string, start = 0, end = text.length): void {
    this.#text = text;
    this.#i = start;
    this.#end = end;
    this.#cur = start < end ? this.#cpAt(start) : -1;
    this.#nextGen();
    this.#matched = false;
    this.#cn = this.#add(this.#clist, 0, this.#start, -1, this.#cur, true);
    this.#idle = true;
  }

  /**
   * Continues the scan until it is decided or `steps` reaches `pauseAt`: true (a match),
   * false (no match in the range) or undefined (paused; call again).
   */
  advance(pauseAt: number): boolean | undefined {
    const kind = this.#kind;
    const out1 = this.#out1;
    const arg = this.#arg;
    const classes = this.#classes;
    const starters = this.#starters;
    while (this.#cur >= 0) {
      if (this.#matched) return true;
      if (this.steps >= pauseAt) return undefined;
      if (this.#idle && starters) {
        // Nothing in progress: skip, one cheap test a character, to where a match can start.
        let cur = this.#cur;
        let i = this.#i;
        let skipped = 0;
        const table = this.#starterAscii;
        while (cur >= 0 && (cur < 128 ? table[cur] !== 1 : !starters.some((c) => c.has(cur)))) {
          i += cur > 0xffff ? 2 : 1;
          cur = i < this.#end ? this.#cpAt(i) : -1;
          skipped++;
        }
        this.steps += skipped;
        this.#i = i;
        this.#cur = cur;
        if (cur < 0) break;
      }
      const cur = this.#cur;
      this.#i += cur > 0xffff ? 2 : 1;
      const following = this.#i < this.#end ? this.#cpAt(this.#i) : -1;
      this.#nextGen();
      this.#matched = false;
      const clist = this.#clist;
      const nlist = this.#nlist;
      let nn = 0;
      for (let k = 0; k < this.#cn; k++) {
        const s = clist[k] as number;
        if (kind[s] === S_CLASS && (classes[arg[s] as number] as CompiledClass).has(cur)) {
          nn = this.#add(nlist, nn, out1[s] as number, cur, following, false);
        }
      }
      this.steps += this.#cn;
      this.#idle = nn === 0;
      if (this.#anchored) {
        // Every match starts at the line start: with no thread left, none can.
        if (nn === 0 && !this.#matched) {
          this.#text = '';
          return false;
        }
      } else {
        nn = this.#add(nlist, nn, this.#start, cur, following, false);
      }
      this.#clist = nlist;
      this.#nlist = clist;
      this.#cn = nn;
      this.#cur = following;
    }
    const matched = this.#matched;
    this.#text = '';
    return matched;
  }

  #cpAt(i: number): number {
    const c = this.#text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < this.#end) {
      const d = this.#text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) return (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000;
    }
    return c;
  }

  #nextGen(): void {
    this.#gen++;
    if (this.#gen === 0xffffffff) {
      this.#mark.fill(0);
      this.#gen = 1;
    }
  }

  /** Adds `state` and its epsilon closure at the current position to `list`; returns its length. */
  #add(list: Int32Array, n: number, state: number, prev: number, cur: number, atStart: boolean) {
    const mark = this.#mark;
    const gen = this.#gen;
    const stack = this.#stack;
    if (mark[state] === gen) return n;
    mark[state] = gen;
    let top = 0;
    stack[top++] = state;
    let visited = 0;
    while (top > 0) {
      const s = stack[--top] as number;
      visited++;
      const kind = this.#kind[s];
      let next1 = -1;
      let next2 = -1;
      if (kind === S_SPLIT) {
        next1 = this.#out2[s] as number;
        next2 = this.#out1[s] as number;
      } else if (kind === S_ASSERT) {
        const a = this.#arg[s];
        const holds =
          a === A_BOL
            ? atStart
            : a === A_EOL
              ? cur < 0
              : (isWordCp(prev) !== isWordCp(cur)) === (a === A_WORD);
        if (holds) next1 = this.#out1[s] as number;
      } else {
        if (kind === S_MATCH) this.#matched = true;
        list[n++] = s;
      }
      if (next1 >= 0 && mark[next1] !== gen) {
        mark[next1] = gen;
        stack[top++] = next1;
      }
      if (next2 >= 0 && mark[next2] !== gen) {
        mark[next2] = gen;
        stack[top++] = next2;
      }
    }
    this.steps += visited;
    return n;
  }
}

/**
 * Compiles a grep regex into a {@link RegexMatcher} that cannot hang. Accepts JavaScript regex
 * syntax (without flags) except backreferences, lookaround and octal escapes; `\p{...}` is
 * supported. Throws `invalid_pattern` saying what to change for anything else, a pattern over
 * {@link MAX_REGEX_PATTERN_LENGTH} characters, a count over {@link MAX_REGEX_REPEAT} or a
 * program over {@link MAX_REGEX_PROGRAM_SIZE} states. Every backend compiles through this,
 * so all accept and refuse the same patterns.
 */
export function compileRegex(pattern: string): RegexMatcher {
  return new RegexMatcher(pattern);
}
