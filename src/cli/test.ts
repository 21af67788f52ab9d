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
import { LINE_PRESETS as LINE_NAMES } from '../scenarios/audio/line-presets.js';
import type { AudioHearingOptions } from '../scenarios/audio/mode.js';

/** The help text of `taskline test`. */
export const TEST_USAGE = `usage: taskline test [paths…] [--audio [--recognizer NAME] [--line NAME] [--voices LIST]
                      [--no-hints]] [--judge all|captures] [--transcript] [--junit FILE] [--jobs N]
                      [--timeout SECONDS]

  paths           scenario files or folders searched for *.scenario.yaml (default: .)
  --audio         run through the real audio pipeline: synthesised speech, Silero VAD,
                  barge-in as overlapping audio, keys as DTMF while the agent talks
                  (needs espeak-ng; bash scripts/speech-tools.sh installs everything)
  --recognizer R  who hears the caller in audio mode: oracle (default: the exact words
                  of the audio it synthesised) or pocketsphinx (a real recogniser, callers
                  spoken by flite voices)
  --line NAME     the phone line with a real recogniser: ${Object.keys(LINE_NAMES).join(', ')}
                  (a scenario's line: is merged over it)
  --voices LIST   callers' voices, taken in turn: e.g. flite:slt,flite:awb,espeak:en-us
  --no-hints      do not pass what the active question expects to the recogniser
  --judge WHAT    all (default): every expectation must hold; captures: only a captured
                  value the caller did not mean (meant:) or an error fails, the rest is
                  reported (for a real recogniser, which mishears)
  --transcript    print the transcript of every scenario, passing ones too (a failing
                  one always shows its transcript)
  --junit FILE    also write the results as JUnit XML to FILE
  --jobs N        worker processes (default: 1 per 16 text scenarios, the cores with
                  --audio; at most ${availableParallelism()} here)
  --timeout S     give up on a scenario file after S seconds (default 120, 300 with --audio);
                  every file runs in a worker process, which is stopped when it overruns,
                  even if the bot is stuck in a loop
  Scenario files are at most 1 MiB and must be regular files.
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
    judge?: string;
  };
  let paths: string[];
  let jobs: number | undefined;
  let timeoutMs: number | undefined;
  let hearing: AudioHearingOptions = {};
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
        recognizer: { type: 'string' },
        line: { type: 'string' },
        voices: { type: 'string' },
        'no-hints': { type: 'boolean' },
        judge: { type: 'string' },
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
    hearing = await hearingOptions(parsed.values);
    if (values.judge !== undefined && values.judge !== 'all' && values.judge !== 'captures') {
      throw new TasklineError(
        'invalid_argument',
        `--judge takes all or captures, got "${values.judge}"`,
      );
    }
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
    return isTasklineError(error, 'not_found') || isTasklineError(error, 'invalid_argument')
      ? 2
      : 1;
  }
  if (!files.length) {
    process.stderr.write(
      `taskline test: no *.scenario.yaml found under ${paths.join(', ') || '.'}\n`,
    );
    return 1;
  }
  if (values.audio) {
    const { audioUnavailable } = await import('../scenarios/audio/mode.js');
    const missing = await audioUnavailable(hearing);
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
  const mode = values.audio ? describeAudio(hearing) : 'text mode';
  process.stdout.write(`# ${files.length} scenario file(s), ${mode}\n`);
  const reports = await runScenarioFiles(files, {
    audio: values.audio === true,
    ...(values.audio ? { hearing } : {}),
    ...(values.judge === 'captures' ? { judge: 'captures' as const } : {}),
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
  const hearingLines = report.formatHearing(reports, 'overall: ');
  if (hearingLines.length) process.stdout.write(`${hearingLines.join('\n')}\n`);
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

/** The audio-mode hearing flags, validated (they need --audio). */
async function hearingOptions(values: {
  audio?: boolean;
  recognizer?: string;
  line?: string;
  voices?: string;
  'no-hints'?: boolean;
}): Promise<AudioHearingOptions> {
  const given = (['recognizer', 'line', 'voices', 'no-hints'] as const).filter(
    (k) => values[k] !== undefined,
  );
  if (given.length && !values.audio) {
    throw new TasklineError('invalid_argument', `--${given[0]} needs --audio`);
  }
  const recognizer = values.recognizer ?? 'oracle';
  if (recognizer !== 'oracle' && recognizer !== 'pocketsphinx') {
    throw new TasklineError(
      'invalid_argument',
      `--recognizer takes oracle or pocketsphinx, got "${recognizer}"`,
    );
  }
  const { linePreset, isClean } = await import('../scenarios/audio/phone-line.js');
  const { parseVoice } = await import('../testing/voices.js');
  const line = values.line === undefined ? undefined : linePreset(values.line);
  if (line && !isClean(line) && recognizer === 'oracle') {
    throw new TasklineError(
      'invalid_argument',
      `--line ${values.line} needs a real recogniser (--recognizer pocketsphinx): the oracle hears only the exact audio it made`,
    );
  }
  const voices = values.voices?.split(',').map((v) => parseVoice(v));
  return {
    recognizer,
    ...(line ? { line } : {}),
    ...(voices?.length ? { voices } : {}),
    ...(values['no-hints'] ? { hints: false } : {}),
  };
}

function describeAudio(h: AudioHearingOptions): string {
  const parts = [`audio mode, heard by ${h.recognizer ?? 'oracle'}`];
  if (h.line) {
    const name = Object.entries(LINE_NAMES).find(([, spec]) => spec === h.line)?.[0];
    parts.push(`line ${name ?? 'custom'}`);
  }
  if (h.voices) parts.push(`voices ${h.voices.map((v) => `${v.engine}:${v.name}`).join(', ')}`);
  if (h.hints === false) parts.push('no hints');
  return parts.join(', ');
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
