/**
 * The disk backend's directory walk (glob, grep, usage) and grep's file reader: synchronous
 * calls through verified descriptors (see ./disk-containment.ts), yielding to the event loop
 * every few milliseconds — far faster than one thread-pool round trip per call.
 */
import { isUtf8 } from 'node:buffer';
import {
  closeSync,
  type Dirent,
  fstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
} from 'node:fs';
import { isPlainName, MAX_PATH_LENGTH, ROOT } from '../paths.js';
import type { SearchBudget } from '../search.js';
import {
  type ConfinedRoot,
  childPath,
  HAS_PROC_FD,
  READ_FLAGS,
  type WalkDir,
} from './disk-containment.js';

/** Called for each file a walk meets; returns (or resolves to) true to stop the walk. */
export type FileVisitor = (
  dir: WalkDir,
  name: string,
  path: string,
  linkTarget: string | undefined,
) => boolean | Promise<boolean>;

/** Where a walk starts and how it may be interrupted. */
export interface WalkOptions {
  /** Virtual path of the start. */
  path: string;
  /** Verified real host path of the start. */
  host: string;
  /** Levels below the start to descend (Infinity for all). */
  maxDepth: number;
  budget: SearchBudget;
  /** Test seam: runs before each entry is opened or visited. */
  beforeEntry?: (path: string) => void | Promise<void>;
}

const FILE = 0;
const DIR = 1;
const LINK = 2;

interface WalkEntry {
  key: string;
  name: string;
  kind: typeof FILE | typeof DIR | typeof LINK;
}

function byKey(a: WalkEntry, b: WalkEntry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** Most directory descriptors one walk holds open at once (one per level below the start). */
const MAX_HELD_DIRS = 32;

/**
 * Walks the regular files under a directory down to `maxDepth` levels, calling `visit` for
 * each in path order (the order of a sorted list of full paths) until it returns true. Every
 * directory is opened through its verified parent ({@link ConfinedRoot.openChildDirSync});
 * in-root symlinks to files are visited with their real target, symlinked directories are not
 * descended, special files are skipped.
 */
export async function walkFiles(
  root: ConfinedRoot,
  options: WalkOptions,
  visit: FileVisitor,
): Promise<void> {
  const fd = root.openWalkDirSync(options.host);
  if (fd === undefined) return;
  const dir: WalkDir = { fd, path: options.path, host: options.host, depth: 0 };
  try {
    await walkDir(root, options, dir, visit, 1);
  } finally {
    if (dir.fd >= 0) closeSync(dir.fd);
  }
}

/** One directory of {@link walkFiles}; true when the visitor asked to stop. */
async function walkDir(
  root: ConfinedRoot,
  options: WalkOptions,
  dir: WalkDir,
  visit: FileVisitor,
  held: number,
): Promise<boolean> {
  const { budget, maxDepth } = options;
  if (budget.due()) await budget.step(true);
  let entries: Dirent[];
  try {
    entries = readdirSync(HAS_PROC_FD ? `/proc/self/fd/${dir.fd}` : dir.host, {
      withFileTypes: true,
    });
  } catch {
    return false; // vanished since it was opened
  }
  const room = MAX_PATH_LENGTH - (dir.path === ROOT ? 0 : dir.path.length) - 1;
  const items: WalkEntry[] = [];
  for (const entry of entries) {
    const name = entry.name;
    if (name.length > room || !isPlainName(name)) continue;
    if (entry.isFile()) items.push({ key: name, name, kind: FILE });
    else if (entry.isDirectory()) {
      // "name/" sorts a directory's files exactly where full paths would put them.
      if (dir.depth + 1 < maxDepth) items.push({ key: `${name}/`, name, kind: DIR });
    } else if (entry.isSymbolicLink()) items.push({ key: name, name, kind: LINK });
  }
  items.sort(byKey);
  const hook = options.beforeEntry;
  for (const item of items) {
    const path = childPath(dir.path, item.name);
    if (hook) await hook(path);
    if (item.kind === DIR) {
      const child = root.openChildDirSync(dir, item.name, path);
      if (!child) continue;
      // Hold at most MAX_HELD_DIRS descriptors: past that, let go of this one and reopen it.
      const release = held >= MAX_HELD_DIRS;
      if (release) {
        closeSync(dir.fd);
        dir.fd = -1;
      }
      let stop: boolean;
      try {
        stop = await walkDir(root, options, child, visit, release ? held : held + 1);
      } finally {
        if (child.fd >= 0) closeSync(child.fd);
      }
      if (stop) return true;
      if (release) {
        const fd = root.openWalkDirSync(dir.host);
        if (fd === undefined) return false;
        dir.fd = fd;
      }
      continue;
    }
    let target: string | undefined;
    if (item.kind === LINK) {
      target = root.linkedFileSync(dir, item.name);
      if (target === undefined) continue;
    }
    if (budget.due()) await budget.step(true);
    let stop = visit(dir, item.name, path, target);
    if (typeof stop !== 'boolean') stop = await stop;
    if (stop) return true;
  }
  return false;
}

/** True for UTF-8 text without NUL bytes: what grep searches (binary files are skipped). */
export function isText(data: Buffer): boolean {
  return !data.includes(0) && isUtf8(data);
}

/**
 * Reads files for grep into one reused buffer (no allocation per file): open, fstat, read,
 * close. Skips (undefined) anything gone, not a regular file, over the size cap or, when
 * `expect` is given, whose descriptor does not resolve to exactly that host path.
 */
export class GrepReader {
  #buf = Buffer.allocUnsafe(64 * 1024);
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The file's bytes, valid until the next call. */
  read(at: string, expect?: string): Buffer | undefined {
    let fd: number | undefined;
    try {
      fd = openSync(at, READ_FLAGS);
      if (expect !== undefined && HAS_PROC_FD && readlinkSync(`/proc/self/fd/${fd}`) !== expect) {
        return undefined;
      }
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > this.#maxBytes) return undefined;
      if (st.size > this.#buf.length) {
        this.#buf = Buffer.allocUnsafe(
          Math.min(this.#maxBytes, Math.max(st.size, this.#buf.length * 2)),
        );
      }
      let got = 0;
      while (got < st.size) {
        const n = readSync(fd, this.#buf, got, st.size - got, got);
        if (n === 0) break;
        got += n;
      }
      return this.#buf.subarray(0, got);
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
