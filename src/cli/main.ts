import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isTasklineError, TasklineError } from '../core/errors.js';
import { logLevelFromEnv } from '../core/log.js';

const USAGE = `usage: taskline <command> [options]

commands:
  run <module>          play a call against a bot module in the terminal (no room, no audio)
  test [paths…]         run call scenarios (*.scenario.yaml), in text or --audio mode
  delegations serve     start the delegations HTTP/WebSocket API

options:
  -h, --help            show help (also: taskline <command> --help)
  -v, --version         print the taskline version

Exit codes: 0 success, 1 the command failed (e.g. a failed call), 2 bad usage.`;

const RUN_USAGE = `usage: taskline run <module> [--script FILE | --interactive] [--scripted] [--verbose]

  <module>        a file or folder whose default export is defineCallModule({...})
  --script FILE   play caller turns, checked before the call starts: a scenario file
                  (x.scenario.yaml, its turns; expectations are for taskline test) or a
                  YAML/JSON list of turns, as in scenario files:
                  [{"say":"balance"},{"keys":"4321"},{"silence":"8s"},"hangup"]
                  (default: the module's demo script; the earlier {"dtmf":...} list
                  still plays, with a deprecation notice)
  --interactive   type as the caller: text is speech, #123# presses keys,
                  /silence 8000 waits (virtual time), /hangup ends the call
  --scripted      use the module's scripted model even if OPENAI_API_KEY is set
  --verbose       print the stack of an error (LOG_LEVEL=debug does too)
  -h, --help      show this help

environment:
  OPENAI_API_KEY  talk to a real model (OPENAI_MODEL, default gpt-4o-mini; OPENAI_BASE_URL)
  LOG_LEVEL       upstream log level: trace, debug, info, warn, error, fatal, silent (default)

A failed call (a model or session error, an exception in the bot) prints its cause and
exits 1.`;

const HELP = new Set(['-h', '--help', 'help']);
const VERSION = new Set(['-v', '--version', 'version']);

/** The `taskline` command line; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stderr.write(`taskline: missing command\n${USAGE}\n`);
    return 2;
  }
  if (HELP.has(command)) return help(rest[0]);
  if (VERSION.has(command)) {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command === 'delegations') {
    const { delegationsMain } = await import('./delegations.js');
    return delegationsMain(rest);
  }
  if (command === 'run') return runCommand(rest);
  if (command === 'test') {
    const { testMain } = await import('./test.js');
    return testMain(rest);
  }
  const kind = command.startsWith('-') ? 'option' : 'command';
  process.stderr.write(`taskline: unknown ${kind} "${command}"\n${USAGE}\n`);
  return 2;
}

async function help(topic: string | undefined): Promise<number> {
  if (topic === 'delegations') {
    const { delegationsMain } = await import('./delegations.js');
    return delegationsMain(['--help']);
  }
  if (topic === 'test') {
    const { testMain } = await import('./test.js');
    return testMain(['--help']);
  }
  process.stdout.write(`${topic === 'run' ? RUN_USAGE : USAGE}\n`);
  return 0;
}

async function runCommand(args: string[]): Promise<number> {
  let values: { script?: string; interactive?: boolean; scripted?: boolean; verbose?: boolean };
  let target: string;
  try {
    const parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        script: { type: 'string' },
        interactive: { type: 'boolean' },
        scripted: { type: 'boolean' },
        verbose: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (parsed.values.help) {
      process.stdout.write(`${RUN_USAGE}\n`);
      return 0;
    }
    values = parsed.values;
    const [first, ...extra] = parsed.positionals;
    if (!first) throw new TasklineError('invalid_argument', 'missing <module>');
    if (extra.length) {
      throw new TasklineError('invalid_argument', `unexpected argument "${extra[0]}"`);
    }
    if (values.script && values.interactive) {
      throw new TasklineError('invalid_argument', 'use --script or --interactive, not both');
    }
    target = first;
    logLevelFromEnv();
  } catch (error) {
    process.stderr.write(`taskline run: ${usageMessage(error)}\n${RUN_USAGE}\n`);
    return 2;
  }
  try {
    // Loaded here, so `taskline --help` and `--version` do not load @livekit/agents.
    const { loadCallModule, runCall } = await import('./run.js');
    await runCall(await loadCallModule(target), {
      ...values,
      warn: (line) => process.stderr.write(`${line}\n`),
    });
    return 0;
  } catch (error) {
    report(error, values.verbose === true);
    return 1;
  }
}

/** One line with the cause; the stacks too when asked for (--verbose, LOG_LEVEL=debug). */
function report(error: unknown, verbose: boolean): void {
  const message = error instanceof Error ? error.message : String(error);
  const prefix = isTasklineError(error, 'call_failed') ? 'the call failed: ' : '';
  const level = process.env.LOG_LEVEL?.trim().toLowerCase();
  const stacks = verbose || level === 'debug' || level === 'trace';
  // An unexpected error (not a TasklineError) is a bug somewhere: say how to see where.
  const hint = !stacks && !isTasklineError(error) ? ' (--verbose shows the stack)' : '';
  process.stderr.write(`taskline: ${prefix}${firstLine(message)}${hint}\n`);
  if (!stacks) return;
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    const stack = current instanceof Error ? (current.stack ?? current.message) : String(current);
    process.stderr.write(`${depth === 0 ? '' : 'caused by: '}${stack}\n`);
    current = current instanceof Error ? current.cause : undefined;
  }
}

/** Node's parseArgs errors name the option ("Unknown option '--foo'"); keep that wording. */
function usageMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return firstLine(message.replace(/\. To specify a positional argument.*$/s, ''));
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

/** The installed taskline version (from its package.json). */
export function version(): string {
  for (const path of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'taskline' && pkg.version) return pkg.version;
    } catch {
      // not at this depth: the source tree and the bundle sit at different depths
    }
  }
  return 'unknown';
}
