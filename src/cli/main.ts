import { parseArgs } from 'node:util';
import { TasklineError } from '../core/errors.js';
import { loadCallModule, runCall } from './run.js';

const USAGE = `usage: taskline run <module> [--script file.json | --interactive] [--scripted]
       taskline delegations serve [--db file | --postgres URL] [--nats URL] [--port N] [--keys file.json]

  <module>        a file or folder whose default export is defineCallModule({...})
  --script FILE   play a JSON list of caller actions (default: the module's demo)
  --interactive   type as the caller: text is speech, #123# presses keys,
                  /silence 8000 waits (virtual time), /hangup ends the call
  --scripted      use the module's scripted model even if OPENAI_API_KEY is set`;

/** The `taskline` command line; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'delegations') {
    const { delegationsMain } = await import('./delegations.js');
    return delegationsMain(rest);
  }
  if (command !== 'run') {
    process.stderr.write(`${USAGE}\n`);
    return command === undefined || command === '--help' ? 0 : 2;
  }
  try {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        script: { type: 'string' },
        interactive: { type: 'boolean' },
        scripted: { type: 'boolean' },
      },
    });
    const target = positionals[0];
    if (!target || positionals.length > 1) throw new TasklineError('invalid_argument', USAGE);
    if (values.script && values.interactive) {
      throw new TasklineError('invalid_argument', 'Use --script or --interactive, not both.');
    }
    await runCall(await loadCallModule(target), values);
    return 0;
  } catch (error) {
    process.stderr.write(`taskline: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
