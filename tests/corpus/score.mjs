#!/usr/bin/env node
// Scores taskline's deterministic speech-answer parsers against a JSONL corpus.
// Usage (from a built project checkout): node ../shared/corpus/score.mjs FILE.jsonl [--json]
// Exit code: 0 when no line is WRONG and none threw; 1 otherwise; 2 on usage / load failure.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const PARSERS = [
  'yesNo',
  'number',
  'digits',
  'choice',
  'date',
  'time',
  'email',
  'phone',
  'name',
  'likert',
  'repair',
];
const KINDS = new Set(['match', 'nomatch', 'invalid', 'not-wrong']);

const argv = process.argv.slice(2);
const asJson = argv.includes('--json');
const file = argv.find((a) => !a.startsWith('--'));
if (!file) {
  process.stderr.write('usage: node score.mjs FILE.jsonl [--json]\n');
  process.exit(2);
}

// ---------- loading the package ----------
function pickExport(target) {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const t of target) {
      const r = pickExport(t);
      if (r) return r;
    }
    return undefined;
  }
  if (target && typeof target === 'object') {
    for (const cond of ['import', 'node', 'module', 'default']) {
      if (cond in target) {
        const r = pickExport(target[cond]);
        if (r) return r;
      }
    }
  }
  return undefined;
}

function entryFromPackageDir(dir) {
  const pkgFile = path.join(dir, 'package.json');
  if (!existsSync(pkgFile)) return undefined;
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
  } catch {
    return undefined;
  }
  if (pkg.name !== 'taskline') return undefined;
  let rel;
  const ex = pkg.exports;
  if (ex !== undefined) {
    const root = typeof ex === 'object' && !Array.isArray(ex) && '.' in ex ? ex['.'] : ex;
    rel = pickExport(root);
  }
  rel ??= pkg.module ?? pkg.main ?? 'index.js';
  const full = path.resolve(dir, rel);
  return existsSync(full) ? full : undefined;
}

async function loadTaskline() {
  const failures = [];
  try {
    return await import('taskline');
  } catch (e) {
    failures.push(`import('taskline'): ${e.message}`);
  }
  try {
    const req = createRequire(`${process.cwd()}/`);
    return await import(pathToFileURL(req.resolve('taskline')).href);
  } catch (e) {
    failures.push(`createRequire(cwd).resolve('taskline'): ${e.message}`);
  }
  // Package exports may offer only an "import" condition; resolve it by hand from cwd upwards
  // (the checkout itself, or node_modules/taskline).
  let dir = process.cwd();
  for (;;) {
    for (const cand of [dir, path.join(dir, 'node_modules', 'taskline')]) {
      const entry = entryFromPackageDir(cand);
      if (entry) {
        try {
          return await import(pathToFileURL(entry).href);
        } catch (e) {
          failures.push(`${entry}: ${e.message}`);
        }
      }
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`cannot load taskline from ${process.cwd()}:\n  ${failures.join('\n  ')}`);
}

// ---------- helpers ----------
function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-9;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  // Keys whose value is undefined count as absent ({first:'Ann', last: undefined} equals {first:'Ann'}).
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

const show = (v) => (v === undefined ? 'undefined' : JSON.stringify(v));
const showExpect = (e) =>
  e.kind === 'match'
    ? `match ${show(e.value)}`
    : e.kind === 'not-wrong'
      ? `nomatch or ${show(e.value)}`
      : e.kind;
const showGot = (g) =>
  g.kind === 'match'
    ? `match ${show(g.value)}`
    : g.kind === 'invalid' && g.reason
      ? `invalid (${g.reason})`
      : g.kind;
const pct = (n, d) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
const ratio = (n, d) => (d === 0 ? null : Math.round((1000 * n) / d) / 10);

function validate(obj) {
  if (!obj || typeof obj !== 'object') return 'not an object';
  if (!PARSERS.includes(obj.parser)) return `unknown parser ${show(obj.parser)}`;
  if (typeof obj.text !== 'string') return 'text must be a string';
  if (obj.options !== undefined && (obj.options === null || typeof obj.options !== 'object'))
    return 'options must be an object';
  const e = obj.expect;
  if (!e || !KINDS.has(e.kind)) return `expect.kind must be one of ${[...KINDS].join(', ')}`;
  if ((e.kind === 'match' || e.kind === 'not-wrong') && !('value' in e))
    return `expect.kind ${e.kind} needs a value`;
  if (obj.parser === 'choice' && !Array.isArray(obj.options?.options))
    return 'choice needs options.options (array)';
  if (obj.parser === 'date' && typeof obj.options?.now !== 'string')
    return 'date needs options.now (ISO string)';
  if (obj.parser === 'date' && Number.isNaN(new Date(obj.options.now).getTime()))
    return 'options.now is not a valid date';
  return undefined;
}

async function callParser(parsers, line) {
  const fn = parsers[line.parser];
  if (typeof fn !== 'function') throw new Error(`parsers.${line.parser} is not a function`);
  const o = line.options;
  let r;
  if (line.parser === 'choice') {
    r = o.parse === undefined ? fn(line.text, o.options) : fn(line.text, o.options, o.parse);
  } else if (line.parser === 'date') {
    r = fn(line.text, { ...o, now: new Date(o.now) });
  } else {
    r = o === undefined ? fn(line.text) : fn(line.text, o);
  }
  r = await r;
  if (!r || typeof r !== 'object' || !['match', 'nomatch', 'invalid'].includes(r.kind)) {
    throw new Error(`returned ${show(r)} (not a match/nomatch/invalid result)`);
  }
  return r;
}

// ---------- main ----------
const fresh = () => ({
  lines: 0,
  expectedMatches: 0,
  correctMatches: 0,
  returnedMatches: 0,
  acceptableMatches: 0,
  wrong: 0,
  errors: 0,
  missed: 0,
  kindDiffers: 0,
});
const byParser = Object.fromEntries(PARSERS.map((p) => [p, fresh()]));
const total = fresh();
const wrongList = [];
const errorList = [];

let source;
try {
  source = readFileSync(file, 'utf8');
} catch (e) {
  process.stderr.write(`cannot read ${file}: ${e.message}\n`);
  process.exit(2);
}

let taskline;
try {
  taskline = await loadTaskline();
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}
const parsers = taskline.parsers ?? taskline.default?.parsers;
if (!parsers) {
  process.stderr.write("the loaded 'taskline' module has no `parsers` export\n");
  process.exit(2);
}

const rows = source.split(/\r?\n/);
for (let i = 0; i < rows.length; i++) {
  const raw = rows[i].trim();
  if (raw === '') continue;
  const lineNo = i + 1;
  let line;
  let problem;
  try {
    line = JSON.parse(raw);
    problem = validate(line);
  } catch (e) {
    problem = `bad JSON: ${e.message}`;
  }
  const bucket = line && byParser[line.parser] ? byParser[line.parser] : null;
  const tally = (f, n = 1) => {
    total[f] += n;
    if (bucket) bucket[f] += n;
  };
  tally('lines');
  if (problem) {
    tally('errors');
    errorList.push({
      line: lineNo,
      parser: line?.parser ?? '?',
      text: line?.text,
      expect: line?.expect,
      error: `malformed corpus line: ${problem}`,
    });
    continue;
  }
  const exp = line.expect;
  if (exp.kind === 'match') tally('expectedMatches');
  let got;
  try {
    got = await callParser(parsers, line);
  } catch (e) {
    tally('errors');
    errorList.push({
      line: lineNo,
      parser: line.parser,
      text: line.text,
      options: line.options,
      expect: exp,
      error: String(e?.stack ?? e)
        .split('\n')
        .slice(0, 3)
        .join(' | '),
    });
    continue;
  }
  if (got.kind === 'match') {
    tally('returnedMatches');
    const acceptable =
      (exp.kind === 'match' || exp.kind === 'not-wrong') && deepEqual(got.value, exp.value);
    if (acceptable) {
      tally('acceptableMatches');
      if (exp.kind === 'match') tally('correctMatches');
    } else {
      tally('wrong');
      wrongList.push({
        line: lineNo,
        parser: line.parser,
        text: line.text,
        options: line.options,
        expect: exp,
        got,
        note: line.note,
      });
    }
  } else if (exp.kind === 'match') {
    tally('missed');
  } else if ((exp.kind === 'nomatch' || exp.kind === 'invalid') && got.kind !== exp.kind) {
    tally('kindDiffers');
  }
}

const finish = (s) => ({
  ...s,
  recall: ratio(s.correctMatches, s.expectedMatches),
  precision: ratio(s.acceptableMatches, s.returnedMatches),
});
const summary = `parsers: ${total.lines} lines, ${total.wrong} wrong, ${total.errors} errors, recall ${pct(total.correctMatches, total.expectedMatches)}, precision ${pct(total.acceptableMatches, total.returnedMatches)}`;
const failed = total.wrong > 0 || total.errors > 0;

if (asJson) {
  const out = {
    file,
    ok: !failed,
    total: finish(total),
    byParser: Object.fromEntries(
      Object.entries(byParser)
        .filter(([, s]) => s.lines > 0)
        .map(([p, s]) => [p, finish(s)]),
    ),
    wrong: wrongList,
    errors: errorList,
    summary,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} else {
  const head = [
    'parser',
    'lines',
    'exp.match',
    'correct',
    'WRONG',
    'errors',
    'missed',
    'recall',
    'precision',
  ];
  const table = [head];
  const row = (name, s) => [
    name,
    s.lines,
    s.expectedMatches,
    s.correctMatches,
    s.wrong,
    s.errors,
    s.missed,
    pct(s.correctMatches, s.expectedMatches),
    pct(s.acceptableMatches, s.returnedMatches),
  ];
  for (const [p, s] of Object.entries(byParser)) if (s.lines > 0) table.push(row(p, s));
  table.push(row('all', total));
  const widths = head.map((_, c) => Math.max(...table.map((r) => String(r[c]).length)));
  const fmt = (r) =>
    r
      .map((v, c) => (c === 0 ? String(v).padEnd(widths[c]) : String(v).padStart(widths[c])))
      .join('  ');
  const out = [
    `${file}`,
    fmt(table[0]),
    ...table.slice(1, -1).map(fmt),
    '-'.repeat(fmt(table[0]).length),
    fmt(table.at(-1)),
  ];
  if (total.kindDiffers > 0)
    out.push(
      `(${total.kindDiffers} line(s) gave nomatch where invalid was expected or the reverse: not counted as wrong)`,
    );
  if (wrongList.length) {
    out.push('', `WRONG (${wrongList.length}): a value returned where it should not be`);
    for (const w of wrongList) {
      out.push(`  L${w.line} ${w.parser} ${show(w.text)}${w.options ? ` ${show(w.options)}` : ''}`);
      out.push(
        `      expected ${showExpect(w.expect)}, got ${showGot(w.got)}${w.note ? `  [${w.note}]` : ''}`,
      );
    }
  }
  if (errorList.length) {
    out.push('', `ERRORS (${errorList.length}): threw or malformed line`);
    for (const e of errorList) {
      out.push(`  L${e.line} ${e.parser} ${show(e.text)}${e.options ? ` ${show(e.options)}` : ''}`);
      out.push(
        `      expected ${e.expect?.kind ? showExpect(e.expect) : '?'}, got error: ${e.error}`,
      );
    }
  }
  out.push('', summary);
  process.stdout.write(`${out.join('\n')}\n`);
}
process.exit(failed ? 1 : 0);
