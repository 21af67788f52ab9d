import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isTasklineError, TasklineError } from '../core/errors.js';
import { logLevelFromEnv } from '../core/log.js';

const USAGE = `usage: taskline <command> [options]

commands:
  run <module>          play a call against a bot module in the terminal (no room, no audio)
  test [paths…]         run call scenarios (*.scenario.yaml), in text or --audio mode
  flow check|draw FILE  check a flow document (file:line for every problem) or draw it
  delegations serve     start the delegations HTTP/WebSocket API
  guardian              re-dispatch a call's agent when its worker dies (self-hosted LiveKit)

options:
  -h, --help            show help (also: taskline <command> --help)
  -v, --version         print the taskline version

Exit codes: 0 success, 1 the command failed (e.g. a failed call), 2 bad usage.`;

const RUN_USAGE = `usage: taskline run <module> [--script FILE | --interactive] [--scripted] [--timeout S] [--verbose]

  <module>        a file or folder whose default export is defineCallModule({...})
  --script FILE   play caller turns, checked before the call starts: a scenario file
                  (x.scenario.yaml, its turns; expectations are for taskline test) or a
                  YAML/JSON list of turns, as in scenario files:
                  [{"say":"balance"},{"keys":"4321"},{"silence":"8s"},"hangup"]
                  (default: the module's demo script; the earlier {"dtmf":...} list
                  still plays, with a deprecation notice; a regular file of at most 1 MiB)
  --interactive   type as the caller: text is speech, #123# presses keys,
                  /silence 8000 waits (virtual time), /hangup ends the call
  --scripted      use the module's scripted model even if OPENAI_API_KEY is set
  --timeout S     stop the call after S seconds (default 120 for a script or the demo,
                  none when --interactive); the call runs in a child process, so it is
                  stopped even if the bot is stuck in a loop
  --verbose       print the stack of an error (LOG_LEVEL=debug does too)
  -h, --help      show this help

environment:
  OPENAI_API_KEY  talk to a real model (OPENAI_MODEL, default gpt-4o-mini; OPENAI_BASE_URL)
  LOG_LEVEL       upstream log level: trace, debug, info, warn, error, fatal, silent (default)

A failed call (a model or session error, an exception in the bot) or one stopped by
--timeout prints its cause and exits 1.`;

/** Default bound of a scripted `taskline run` (a person typing has none). */
const RUN_TIMEOUT_MS = 120_000;
/** Set in the child process that runs the call under the parent's watchdog. */
const RUN_CHILD_ENV = 'TASKLINE_RUN_UNDER_WATCHDOG';

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
    const { delegationsMain } = await import('../service/cli/delegations.js');
    return delegationsMain(rest);
  }
  if (command === 'guardian') {
    const { guardianMain } = await import('./guardian.js');
    return guardianMain(rest);
  }
  if (command === 'run') return runCommand(rest);
  if (command === 'flow') {
    const { flowMain } = await import('./flow.js');
    return flowMain(rest);
  }
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
    const { delegationsMain } = await import('../service/cli/delegations.js');
    return delegationsMain(['--help']);
  }
  if (topic === 'test') {
    const { testMain } = await import('./test.js');
    return testMain(['--help']);
  }
  if (topic === 'guardian') {
    const { guardianMain } = await import('./guardian.js');
    return guardianMain(['--help']);
  }
  if (topic === 'flow') {
    const { flowMain } = await import('./flow.js');
    return flowMain(['--help']);
  }
  process.stdout.write(`${topic === 'run' ? RUN_USAGE : USAGE}\n`);
  return 0;
}

async function runCommand(args: string[]): Promise<number> {
  let values: {
    script?: string;
    interactive?: boolean;
    scripted?: boolean;
    verbose?: boolean;
    timeout?: string;
  };
  let target: string;
  let timeoutMs: number | undefined;
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
        timeout: { type: 'string' },
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
    if (values.timeout !== undefined) {
      const seconds = Number(values.timeout);
      if (!Number.isFinite(seconds) || seconds <= 0) {
        throw new TasklineError(
          'invalid_argument',
          `--timeout takes a positive number of seconds, got "${values.timeout}"`,
        );
      }
      timeoutMs = seconds * 1000;
    } else if (!values.interactive) {
      timeoutMs = RUN_TIMEOUT_MS;
    }
    checkModulePath(first);
    target = first;
    logLevelFromEnv();
  } catch (error) {
    process.stderr.write(`taskline run: ${usageMessage(error)}\n${RUN_USAGE}\n`);
    return 2;
  }
  if (timeoutMs !== undefined && process.env[RUN_CHILD_ENV] !== '1') {
    return runUnderWatchdog(args, timeoutMs);
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

/**
 * A module path that exists must be a file or a folder: importing a device such as /dev/zero
 * would read it without end.
 */
function checkModulePath(path: string): void {
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = statSync(resolve(path));
  } catch {
    return; // missing: loadCallModule says so
  }
  if (!stat.isFile() && !stat.isDirectory()) {
    throw new TasklineError(
      'invalid_argument',
      `${path} is not a module file or folder (a device, pipe or socket cannot be loaded)`,
    );
  }
}

/**
 * Runs `taskline run <args>` in a child process and stops it after `timeoutMs`: a call stuck
 * in a busy loop never lets a timer in its own process fire, so the bound lives here.
 */
function runUnderWatchdog(args: string[], timeoutMs: number): Promise<number> {
  return new Promise((resolveExit) => {
    const child = spawn(process.execPath, [binPath(), 'run', ...args], {
      stdio: 'inherit',
      env: { ...process.env, [RUN_CHILD_ENV]: '1' },
    });
    let stopped = false;
    const timer = setTimeout(() => {
      stopped = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const onTerm = forward('SIGTERM');
    process.once('SIGTERM', onTerm);
    const finish = (code: number) => {
      clearTimeout(timer);
      process.removeListener('SIGTERM', onTerm);
      resolveExit(code);
    };
    child.once('error', (error) => {
      process.stderr.write(`taskline: could not start the call: ${error.message}\n`);
      finish(1);
    });
    child.once('exit', (code) => {
      if (stopped) {
        process.stderr.write(
          `taskline: the call did not end within ${timeoutMs / 1000} s (--timeout); it was stopped\n`,
        );
        finish(1);
        return;
      }
      finish(code ?? 1);
    });
  });
}

/** bin/taskline.js of this package (from the sources or the bundle). */
function binPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const bin = join(dir, 'bin', 'taskline.js');
    if (existsSync(bin) && existsSync(join(dir, 'package.json'))) return bin;
    dir = dirname(dir);
  }
  throw new TasklineError('not_found', 'Cannot find bin/taskline.js of the taskline package.');
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
