/**
 * How `taskline test` shows results: a line per scenario, the failures with file:line and
 * the transcript of the failing run, latency figures in audio mode, a closing count, and
 * JUnit XML for CI systems.
 */
import { relative } from 'node:path';
import { formatStages } from './audio/stages.js';
import type { TurnInput } from './driver.js';
import { type CaptureCount, type WordScore, wordAccuracy } from './hearing.js';
import type { RunReport } from './run-call.js';
import type { ScenarioReport } from './scenario.js';

/** Latency figures over a set of turns. */
export interface LatencySummary {
  turns: number;
  p50: number;
  p95: number;
  max: number;
  interruptions: number;
}

/**
 * p50/p95/max latency of the answered turns whose input was `input` (the caller's speech by
 * default: end of speech → first agent audio), and the interruptions, over `reports`.
 */
export function latencySummary(
  reports: readonly ScenarioReport[],
  input: TurnInput = 'speech',
): LatencySummary | undefined {
  const turns = reports.flatMap((r) => r.runs.flatMap((run) => run.turns));
  const ms = turns
    .flatMap((t) => (t.input === input && t.latencyMs !== undefined ? [t.latencyMs] : []))
    .sort((a, b) => a - b);
  if (!ms.length) return undefined;
  return {
    turns: ms.length,
    p50: percentile(ms, 0.5),
    p95: percentile(ms, 0.95),
    max: ms.at(-1)!,
    interruptions: turns.reduce((n, t) => n + t.interruptions, 0),
  };
}

/** The value at quantile `q` of sorted numbers (nearest rank). */
export function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Options of {@link formatScenario}. */
export interface FormatOptions {
  /** Print the transcript of a passing scenario too (its last run). */
  transcript?: boolean;
}

/** The lines printed for one finished scenario. */
export function formatScenario(
  report: ScenarioReport,
  cwd = process.cwd(),
  options: FormatOptions = {},
): string[] {
  const file = relative(cwd, report.file) || report.file;
  const secs = `${(report.durationMs / 1000).toFixed(1)} s`;
  const tag = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP' }[report.status];
  const repeat = report.runs.length > 1 ? `, ${report.runs.length} runs` : '';
  const out = [`${tag}  ${file}  ${report.name}  (${report.mode}${repeat}, ${secs})`];
  if (report.reason)
    out.push(`      ${report.status === 'skipped' ? 'skipped: ' : ''}${report.reason}`);
  if (report.mode === 'audio' && report.runs.length) {
    out.push(...formatLatencies([report], '      '));
    out.push(...stageLines(report.runs[0]!, '      '));
  }
  out.push(...formatHearing([report], '      '));
  for (const run of report.runs) {
    for (const c of run.captures?.checks ?? []) {
      if (c.verdict === 'right') continue;
      out.push(
        `      ${c.verdict}: ${c.path} meant ${JSON.stringify(c.meant)}, captured ${c.got === undefined ? 'nothing' : JSON.stringify(c.got)}`,
      );
    }
  }
  // A failed run, or (judged by captures alone) a run with expectations it did not meet.
  const shownAt = report.runs.findIndex((r) => !r.ok || r.failures.length > 0);
  const shown = report.runs[shownAt];
  if (shown) {
    if (report.runs.length > 1)
      out.push(
        `      run ${shownAt + 1} of ${report.runs.length} ${shown.ok ? 'noted' : 'failed'}`,
      );
    for (const f of shown.failures) {
      const where = relative(cwd, f.where) || f.where;
      const turn = f.turn !== undefined ? `turn ${f.turn + 1}: ` : '';
      const noted = shown.ok ? '(noted) ' : '';
      out.push(`      ${where}  ${noted}${turn}${f.message}`);
    }
    out.push('      transcript:', ...transcriptLines(shown));
  } else if (options.transcript && report.runs.length) {
    out.push('      transcript:', ...transcriptLines(report.runs.at(-1)!));
  }
  return out;
}

/** Words and captures over `reports`, summed. */
export function hearingSummary(reports: readonly ScenarioReport[]): {
  words?: WordScore;
  captures?: CaptureCount;
} {
  const runs = reports.flatMap((r) => r.runs);
  const scored = runs.flatMap((r) => (r.words ? [r.words] : []));
  const counted = runs.flatMap((r) => (r.captures ? [r.captures] : []));
  return {
    ...(scored.length
      ? {
          words: {
            words: scored.reduce((n, w) => n + w.words, 0),
            errors: scored.reduce((n, w) => n + w.errors, 0),
          },
        }
      : {}),
    ...(counted.length
      ? {
          captures: {
            right: counted.reduce((n, c) => n + c.right, 0),
            wrong: counted.reduce((n, c) => n + c.wrong, 0),
            unanswered: counted.reduce((n, c) => n + c.unanswered, 0),
          },
        }
      : {}),
  };
}

/** "captures: R right, W wrong, U unanswered". */
export function formatCaptures(c: CaptureCount): string {
  return `captures: ${c.right} right, ${c.wrong} wrong, ${c.unanswered} unanswered`;
}

/** The word-accuracy and captures lines over `reports` (none when nothing was measured). */
export function formatHearing(reports: readonly ScenarioReport[], indent = ''): string[] {
  const { words, captures } = hearingSummary(reports);
  const lines: string[] = [];
  const accuracy = words && wordAccuracy(words);
  if (words && accuracy !== undefined) {
    lines.push(
      `${indent}heard: word accuracy ${(accuracy * 100).toFixed(0)} % (${words.errors} error(s) in ${words.words} scripted word(s))`,
    );
  }
  if (captures) lines.push(`${indent}${formatCaptures(captures)}`);
  return lines;
}

/** The audio-mode latency lines: after the caller's speech, and after their last key. */
export function formatLatencies(reports: readonly ScenarioReport[], indent = ''): string[] {
  const lines: string[] = [];
  const interruptions = reports
    .flatMap((r) => r.runs.flatMap((run) => run.turns))
    .reduce((n, t) => n + t.interruptions, 0);
  for (const [input, what] of [
    ['speech', 'caller stops speaking'],
    ['keys', 'last key pressed'],
  ] as const) {
    const s = latencySummary(reports, input);
    if (s) lines.push(`${indent}${what} → first agent audio: ${formatLatency(s)}`);
  }
  lines.push(`${indent}agent speech cut off: ${interruptions} time(s)`);
  return lines;
}

/** Per speech turn of a run: where its time went, after the caller stopped speaking. */
export function stageLines(run: RunReport, indent = ''): string[] {
  return run.turns.flatMap((t) => {
    const line = t.stages ? formatStages(t.stages) : '';
    return line ? [`${indent}turn ${t.turn + 1} (${t.label}): ${line}`] : [];
  });
}

/** "p50 … ms, p95 … ms, max … ms over N turn(s)". */
export function formatLatency(s: LatencySummary): string {
  return `p50 ${Math.round(s.p50)} ms, p95 ${Math.round(s.p95)} ms, max ${Math.round(s.max)} ms over ${s.turns} turn(s)`;
}

function transcriptLines(run: RunReport): string[] {
  const lines = run.transcript.map((l) => `        ${l}`);
  return lines.length ? lines : ['        (nothing was said)'];
}

/**
 * The closing line: "scenarios: N passed, N failed, N skipped", and "; captures: R right,
 * W wrong, U unanswered" when scenarios say what the caller meant.
 */
export function formatTotals(reports: readonly ScenarioReport[]): string {
  const n = (s: ScenarioReport['status']) => reports.filter((r) => r.status === s).length;
  const { captures } = hearingSummary(reports);
  const tail = captures ? `; ${formatCaptures(captures)}` : '';
  return `scenarios: ${n('passed')} passed, ${n('failed')} failed, ${n('skipped')} skipped${tail}`;
}

/** JUnit XML (one testsuite per mode, one testcase per scenario) for CI systems. */
export function junitXml(reports: readonly ScenarioReport[], cwd = process.cwd()): string {
  const modes = [...new Set(reports.map((r) => r.mode))];
  const suites = modes.map((mode) => {
    const rs = reports.filter((r) => r.mode === mode);
    const count = (s: ScenarioReport['status']) => rs.filter((r) => r.status === s).length;
    const time = rs.reduce((t, r) => t + r.durationMs, 0) / 1000;
    const cases = rs.map((r) => testcase(r, cwd));
    return [
      `  <testsuite name="taskline scenarios (${mode})" tests="${rs.length}" failures="${count('failed')}" errors="0" skipped="${count('skipped')}" time="${time.toFixed(3)}">`,
      ...cases,
      '  </testsuite>',
    ].join('\n');
  });
  const total = (s: ScenarioReport['status']) => reports.filter((r) => r.status === s).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="taskline" tests="${reports.length}" failures="${total('failed')}" errors="0" skipped="${total('skipped')}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

function testcase(r: ScenarioReport, cwd: string): string {
  const file = relative(cwd, r.file) || r.file;
  const head = `    <testcase classname="${xml(file)}" name="${xml(r.name)}" file="${xml(file)}" time="${(r.durationMs / 1000).toFixed(3)}"`;
  if (r.status === 'passed') return `${head}/>`;
  if (r.status === 'skipped')
    return `${head}>\n      <skipped message="${xml(r.reason ?? '')}"/>\n    </testcase>`;
  const lines = formatScenario(r, cwd)
    .slice(1)
    .map((l) => l.trimStart());
  const message = r.reason ?? r.runs.find((run) => !run.ok)?.failures[0]?.message ?? 'failed';
  return `${head}>\n      <failure message="${xml(message)}" type="scenario">${xml(lines.join('\n'))}</failure>\n    </testcase>`;
}

function xml(text: string): string {
  return (
    text
      // characters XML 1.0 cannot carry at all
      // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}
