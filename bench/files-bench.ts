import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FileBackend } from '../src/deep-agent/tools/files/backend.js';
import { DiskBackend } from '../src/deep-agent/tools/files/backends/disk.js';
import { MemoryBackend } from '../src/deep-agent/tools/files/backends/memory.js';
import { argNumber } from './interleave.js';
import type { BenchResult } from './result.js';

/** Size of the generated tree. */
export interface FilesBenchOptions {
  /** Number of files (default 10,000). */
  files?: number;
  /** Approximate total size in MB (default 100). */
  totalMb?: number;
  /** Timed runs per measurement after one warm-up; the median is reported (default 3). */
  runs?: number;
}

/** The literal grep needle; planted in every 100th file (and in no other text). */
const NEEDLE = 'ZQX_NEEDLE_7731';
/** A regex finding the same lines (grep with `regex: true`, re2js). */
const NEEDLE_REGEX = 'ZQX_NEEDLE_\\d+ here$';
/**
 * More regexes timed on the disk backend against rg (same lines expected): alternation,
 * classes with word boundaries, an anchor with no required text, and a nested repetition that
 * hangs a backtracking engine on long runs of one letter.
 */
const EXTRA_REGEXES: Array<[kind: string, pattern: string]> = [
  ['alternation', '(voice|caller) (queue|reply)'],
  ['class', '\\bq[a-z]+e\\b'],
  ['anchor', '^the \\w+ agent'],
  ['nested', '(a+)+n\\b'],
];
const GLOB = '**/*.md';
const EXTENSIONS = ['md', 'txt', 'ts', 'md', 'json'];
const WORDS = (
  'the of and to in is you that it he was for on are as with his they at be this have from ' +
  'or one had by word but not what all were we when your can said there use an each which she ' +
  'do how their if will up other about out many then them these so some her would make like ' +
  'agent voice call workflow task note memory plan todo session tool model reply caller queue'
).split(' ');

/** Small deterministic PRNG (mulberry32), so every run builds the same tree. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Tree {
  root: string;
  /** Virtual path ("/d03/s1/f00042.md") to content. */
  files: Map<string, string>;
  bytes: number;
  needleLines: number;
  mdFiles: number;
}

function generateTree(files: number, totalBytes: number): Tree {
  const root = mkdtempSync(join(tmpdir(), 'taskline-files-bench-'));
  const rand = prng(0x5eed);
  const avg = totalBytes / files;
  const out = new Map<string, string>();
  let bytes = 0;
  let needleLines = 0;
  let mdFiles = 0;
  for (let i = 0; i < files; i++) {
    const ext = EXTENSIONS[i % EXTENSIONS.length]!;
    const path = `/d${String(i % 100).padStart(2, '0')}/s${(i >> 7) % 10}/f${String(i).padStart(5, '0')}.${ext}`;
    const target = Math.max(64, Math.round(avg * (0.5 + rand())));
    const lines: string[] = [];
    let size = 0;
    while (size < target) {
      const n = 6 + Math.floor(rand() * 10);
      const words: string[] = [];
      for (let w = 0; w < n; w++) words.push(WORDS[Math.floor(rand() * WORDS.length)]!);
      const line = words.join(' ');
      lines.push(line);
      size += line.length + 1;
    }
    if (i % 100 === 0) {
      const at = Math.floor(rand() * lines.length);
      lines[at] = `${lines[at]} ${NEEDLE} here`;
      needleLines++;
    }
    const text = lines.join('\n') + '\n';
    out.set(path, text);
    bytes += Buffer.byteLength(text);
    if (ext === 'md') mdFiles++;
    const host = join(root, path);
    mkdirSync(dirname(host), { recursive: true });
    writeFileSync(host, text);
  }
  return { root, files: out, bytes, needleLines, mdFiles };
}

async function median(runs: number, fn: () => Promise<number>): Promise<{ ms: number; n: number }> {
  let n = await fn(); // warm-up (also the result count)
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    n = await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, n };
}

function hasRipgrep(): boolean {
  const r = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

/**
 * Makes sure the rg baseline is there: installs Debian's ripgrep when missing and running as
 * root; otherwise returns why the baseline is absent (printed, and noted on every result).
 */
export function ensureRipgrep(): { ok: true } | { ok: false; why: string } {
  if (hasRipgrep()) return { ok: true };
  if (process.getuid?.() !== 0) {
    const why =
      'ripgrep (rg) is not installed and this is not root; run apt-get install -y ripgrep';
    console.error(`files bench: baseline absent: ${why}`);
    return { ok: false, why };
  }
  console.error('files bench: rg missing; installing Debian ripgrep (apt-get install -y ripgrep)');
  const opts = { stdio: 'inherit', timeout: 300_000 } as const;
  let r = spawnSync('apt-get', ['install', '-y', 'ripgrep'], opts);
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], opts);
    r = spawnSync('apt-get', ['install', '-y', 'ripgrep'], opts);
  }
  if (hasRipgrep()) return { ok: true };
  const why = `apt-get install -y ripgrep failed (exit ${r.status ?? r.signal}); rg baseline absent`;
  console.error(`files bench: ${why}`);
  return { ok: false, why };
}

/** Runs rg and returns how many output lines it printed (matches or files). */
function rgLines(args: string[], cwd: string): number {
  const r = spawnSync('rg', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`rg failed: ${r.stderr}`);
  return r.stdout === '' ? 0 : r.stdout.trimEnd().split('\n').length;
}

async function rgMedian(runs: number, args: string[], cwd: string) {
  return median(runs, async () => rgLines(args, cwd));
}

/**
 * grep (literal needle, and a regex finding the same lines) and glob (`**\/*.md`) over a
 * generated tree of `files` files /
 * `totalMb` MB, on the disk and memory backends, timed against ripgrep on the same tree.
 * Ratios are backend time / rg time (rg runs with its default threads and includes process
 * start-up). Regex grep (re2js) is also timed on a few more patterns against rg. A missing rg
 * is installed from Debian when running as root; otherwise every result notes why the
 * baseline is absent.
 */
export async function runFilesBench(opts: FilesBenchOptions = {}): Promise<BenchResult[]> {
  const files = opts.files ?? 10_000;
  const totalMb = opts.totalMb ?? 100;
  const runs = opts.runs ?? 3;
  const t0 = performance.now();
  const tree = generateTree(files, totalMb * 1024 * 1024);
  const genMs = performance.now() - t0;
  const results: BenchResult[] = [];
  try {
    const cap = tree.bytes * 2 + 1024 * 1024;
    const disk = new DiskBackend({ root: tree.root, maxTotalBytes: cap });
    const memory = new MemoryBackend({ maxTotalBytes: cap });
    const l0 = performance.now();
    for (const [path, text] of tree.files) await memory.write(path, text);
    const loadMs = performance.now() - l0;
    const sizeNote = `${files} files, ${(tree.bytes / 1024 / 1024).toFixed(1)} MB`;
    results.push({
      name: 'files.tree',
      metric: 'generate',
      value: round(genMs),
      unit: 'ms',
      note: `${sizeNote}; ${tree.needleLines} needle lines, ${tree.mdFiles} .md files`,
    });
    results.push({
      name: 'files.memory',
      metric: 'load',
      value: round(loadMs),
      unit: 'ms',
      note: `write() of every file into a MemoryBackend (${sizeNote})`,
    });

    const rgState = ensureRipgrep();
    const rg = rgState.ok;
    const rgGrep = rg
      ? await rgMedian(
          runs,
          ['-F', '-n', '--no-heading', '--no-ignore', '--hidden', NEEDLE, '.'],
          tree.root,
        )
      : undefined;
    const rgRegex = rg
      ? await rgMedian(
          runs,
          ['-n', '--no-heading', '--no-ignore', '--hidden', NEEDLE_REGEX, '.'],
          tree.root,
        )
      : undefined;
    const rgGlob = rg
      ? await rgMedian(runs, ['--files', '--no-ignore', '--hidden', '-g', GLOB, '.'], tree.root)
      : undefined;
    const noRg = rgState.ok ? '' : rgState.why;

    const measure = async (
      backend: FileBackend,
      op: 'grep' | 'regex' | 'glob',
      base: { ms: number; n: number } | undefined,
      expected: number,
    ) => {
      const m =
        op === 'grep'
          ? await median(runs, async () => (await backend.grep(NEEDLE)).length)
          : op === 'regex'
            ? await median(
                runs,
                async () => (await backend.grep(NEEDLE_REGEX, { regex: true })).length,
              )
            : await median(runs, async () => (await backend.glob(GLOB)).length);
      const notes = [sizeNote];
      if (m.n !== expected) notes.push(`MISMATCH: found ${m.n}, expected ${expected}`);
      if (base && base.n !== expected) notes.push(`MISMATCH: rg found ${base.n}`);
      if (!base) notes.push(noRg);
      const what =
        op === 'grep'
          ? `literal "${NEEDLE}"`
          : op === 'regex'
            ? `regex "${NEEDLE_REGEX}"`
            : `"${GLOB}"`;
      results.push({
        name: `files.${op}.${backend.kind}`,
        metric: `${op === 'glob' ? 'glob' : 'grep'} ${what}`,
        value: round(m.ms),
        unit: 'ms',
        ...(base ? { baseline: round(base.ms), ratio: round(m.ms / base.ms) } : {}),
        note: notes.join('; '),
      });
    };
    for (const backend of [disk, memory]) {
      await measure(backend, 'grep', rgGrep, tree.needleLines);
      await measure(backend, 'regex', rgRegex, tree.needleLines);
      await measure(backend, 'glob', rgGlob, tree.mdFiles);
    }
    for (const [kind, pattern] of EXTRA_REGEXES) {
      const base = rg
        ? await rgMedian(
            runs,
            ['-n', '--no-heading', '--no-ignore', '--hidden', pattern, '.'],
            tree.root,
          )
        : undefined;
      const m = await median(runs, async () => (await disk.grep(pattern, { regex: true })).length);
      const notes = [sizeNote, `${m.n} matching lines`];
      if (base && base.n !== m.n) notes.push(`MISMATCH: rg found ${base.n}`);
      if (!base) notes.push(noRg);
      results.push({
        name: `files.regex.${kind}.disk`,
        metric: `grep regex "${pattern}"`,
        value: round(m.ms),
        unit: 'ms',
        ...(base ? { baseline: round(base.ms), ratio: round(m.ms / base.ms) } : {}),
        note: notes.join('; '),
      });
    }
  } finally {
    rmSync(tree.root, { recursive: true, force: true });
  }
  results.push(await measureRefusedWrite());
  return results;
}

/**
 * Memory a refused over-cap write costs: a 200 MB write to a disk backend capped at 5 MB,
 * measured as the growth of Buffer memory (arrayBuffers) right after the refusal. The cap
 * is checked on the byte length, so the content is never encoded (about 0 MB, was +200 MB).
 */
export async function measureRefusedWrite(mb = 200): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'taskline-files-refused-'));
  try {
    const disk = new DiskBackend({ root, maxFileBytes: 5 * 1024 * 1024 });
    const content = 'x'.repeat(mb * 1024 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    const refused = await disk.write('/huge.txt', content).then(
      () => false,
      () => true,
    );
    const grown = process.memoryUsage().arrayBuffers - before;
    return {
      name: 'files.write.refused',
      metric: `Buffer memory after a refused ${mb} MB write (cap 5 MB)`,
      value: round(grown / (1024 * 1024)),
      unit: 'MB',
      note: refused ? 'refused with too_large' : 'MISMATCH: the write was accepted',
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = await runFilesBench({
    files: argNumber('files'),
    totalMb: argNumber('mb'),
    runs: argNumber('runs'),
  });
  console.log(JSON.stringify(results, null, 2));
}
