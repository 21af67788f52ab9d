/**
 * `taskline test [paths…]`: finds `*.scenario.yaml` files, runs them in parallel worker
 * processes (text mode, or the real audio pipeline with --audio), prints pass/fail per
 * scenario with the transcript of each failure, writes JUnit XML on request, and exits
 * non-zero when anything failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { isTasklineError, TasklineError } from '../core/errors.js';

/** The help text of `taskline test`. */
export const TEST_USAGE = `usage: taskline test [paths…] [--audio] [--transcript] [--junit FILE] [--jobs N] [--timeout SECONDS]

  paths           scenario files or folders searched for *.scenario.yaml (default: .)
  --audio         run through the real audio pipeline: espeak-ng speech, Silero VAD,
                  barge-in as overlapping audio, keys as DTMF while the agent talks
                  (needs espeak-ng: apt-get install espeak-ng)
  --transcript    print the transcript of every scenario, passing ones too (a failing
                  one always shows its transcript)
  --junit FILE    also write the results as JUnit XML to FILE
  --jobs N        worker processes (default: 1 per 16 text scenarios, the cores with
                  --audio; at most ${availableParallelism()} here); 1 runs them in this process
  --timeout S     give up on a scenario file after S seconds (default 120, 300 with --audio)
  -h, --help      show this help

A scenario file (YAML; JSON schema: node_modules/taskline/scenario.schema.json):

  module: .                     # the call module, relative to the file (default: its folder)
  turns:
    - say: how much money is in my account?
      expect: { said: Please enter your 4-digit PIN. }
    - keys: "4321"
      mask: true
  expect:
    outcome: { outcome: balance_read }

Exit codes: 0 every scenario passed (or was skipped), 1 a scenario failed or none was
found, 2 bad usage.`;

/** Runs `taskline test`; returns the exit code. */
export async function testMain(args: string[]): Promise<number> {
  let values: {
    audio?: boolean;
    transcript?: boolean;
    junit?: string;
    jobs?: string;
    timeout?: string;
  };
  let paths: string[];
  let jobs: number | undefined;
  let timeoutMs: number | undefined;
  try {
    const parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        audio: { type: 'boolean' },
        transcript: { type: 'boolean' },
        junit: { type: 'string' },
        jobs: { type: 'string', short: 'j' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (parsed.values.help) {
      process.stdout.write(`${TEST_USAGE}\n`);
      return 0;
    }
    values = parsed.values;
    paths = parsed.positionals;
    jobs = positiveNumber(values.jobs, '--jobs');
    const seconds = positiveNumber(values.timeout, '--timeout');
    timeoutMs = seconds === undefined ? undefined : seconds * 1000;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const line = message.replace(/\. To specify a positional argument.*$/s, '').split('\n')[0];
    process.stderr.write(`taskline test: ${line}\n${TEST_USAGE}\n`);
    return 2;
  }
  const { findScenarioFiles } = await import('../scenarios/discover.js');
  let files: string[];
  try {
    files = findScenarioFiles(paths);
  } catch (error) {
    process.stderr.write(`taskline test: ${(error as Error).message}\n`);
    return isTasklineError(error, 'not_found') ? 2 : 1;
  }
  if (!files.length) {
    process.stderr.write(
      `taskline test: no *.scenario.yaml found under ${paths.join(', ') || '.'}\n`,
    );
    return 1;
  }
  if (values.audio) {
    const { audioUnavailable } = await import('../scenarios/audio/mode.js');
    const missing = await audioUnavailable();
    if (missing) {
      // Outside CI a missing speech synthesiser skips audio mode, saying why; in CI it fails.
      const ci = process.env.CI === 'true' || process.env.CI === '1';
      process.stdout.write(`${ci ? 'FAIL' : 'SKIP'}  audio mode: ${missing}\n`);
      process.stdout.write(
        `scenarios: 0 passed, ${ci ? files.length : 0} failed, ${ci ? 0 : files.length} skipped\n`,
      );
      return ci ? 1 : 0;
    }
  }
  const { runScenarioFiles } = await import('../scenarios/pool.js');
  const report = await import('../scenarios/report.js');
  const mode = values.audio ? 'audio' : 'text';
  process.stdout.write(`# ${files.length} scenario file(s), ${mode} mode\n`);
  const reports = await runScenarioFiles(files, {
    audio: values.audio === true,
    ...(jobs !== undefined ? { jobs } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    onReport: (r) => {
      const lines = report.formatScenario(r, process.cwd(), { transcript: values.transcript });
      process.stdout.write(`${lines.join('\n')}\n`);
    },
  });
  if (values.audio) {
    process.stdout.write(`${report.formatLatencies(reports, 'audio: ').join('\n')}\n`);
  }
  if (values.junit) {
    try {
      mkdirSync(dirname(values.junit), { recursive: true });
      writeFileSync(values.junit, report.junitXml(reports));
    } catch (error) {
      process.stderr.write(
        `taskline test: cannot write ${values.junit}: ${(error as Error).message}\n`,
      );
      return 1;
    }
  }
  process.stdout.write(`${report.formatTotals(reports)}\n`);
  return reports.some((r) => r.status === 'failed') ? 1 : 0;
}

function positiveNumber(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (option === '--jobs' && !Number.isInteger(n))) {
    throw new TasklineError(
      'invalid_argument',
      `${option} takes a positive number, got "${value}"`,
    );
  }
  return n;
}
