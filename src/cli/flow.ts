/**
 * `taskline flow check FILE` and `taskline flow draw FILE`: load a flow document (YAML or
 * JSON) as an app would — with the app's registry of tasks, picks and escalations when the
 * document names any (`--registry module.ts`) — and report every problem as `file:line`, or
 * print the flow as a Mermaid diagram.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { TasklineError } from '../core/errors.js';
import type { FlowRegistry } from '../flows/document/registry.js';

/** The help text of `taskline flow`. */
export const FLOW_USAGE = `usage: taskline flow check <file> [--registry module]
       taskline flow draw <file> [--registry module] [--direction TD|LR]

  check           load the flow document and report every problem as file:line
                  (shape and types, unknown tasks and names, task options, conditions,
                  announce placeholders, branches to nowhere, loops with no way out)
  draw            print the flow as a Mermaid flowchart
  <file>          a flow document: *.flow.yaml, *.yml or *.json
  --registry M    a module exporting the app's registry ({ tasks, picks, escalations,
                  flows }) as \`registry\` or its default export, for documents that name
                  the app's own parts
  --direction D   TD (top-down, default) or LR (left to right)
  -h, --help      show this help

Exit codes: 0 the document is valid (warnings are printed), 1 it is not, 2 bad usage.`;

/** Runs `taskline flow`; returns the exit code. */
export async function flowMain(args: string[]): Promise<number> {
  let command: string | undefined;
  let file: string | undefined;
  let values: { registry?: string; direction?: string; help?: boolean };
  try {
    const parsed = parseArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        registry: { type: 'string' },
        direction: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    values = parsed.values;
    if (values.help) {
      process.stdout.write(`${FLOW_USAGE}\n`);
      return 0;
    }
    [command, file] = parsed.positionals;
    const extra = parsed.positionals[2];
    if (command !== 'check' && command !== 'draw') {
      throw new TasklineError(
        'invalid_argument',
        command === undefined ? 'missing check or draw' : `unknown subcommand "${command}"`,
      );
    }
    if (!file) throw new TasklineError('invalid_argument', 'missing <file>');
    if (extra !== undefined)
      throw new TasklineError('invalid_argument', `unexpected argument "${extra}"`);
    if (values.direction !== undefined && values.direction !== 'TD' && values.direction !== 'LR') {
      throw new TasklineError('invalid_argument', '--direction takes TD or LR');
    }
    if (command === 'check' && values.direction !== undefined) {
      throw new TasklineError('invalid_argument', '--direction is for draw');
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const line = message.replace(/\. To specify a positional argument.*$/s, '').split('\n')[0];
    process.stderr.write(`taskline flow: ${line}\n${FLOW_USAGE}\n`);
    return 2;
  }
  let registry: FlowRegistry | undefined;
  if (values.registry) {
    try {
      registry = await loadRegistry(values.registry);
    } catch (error) {
      process.stderr.write(`taskline flow: ${(error as Error).message}\n`);
      return 1;
    }
  }
  // Loaded here, so `taskline --help` does not load the flow runner.
  const { checkFlowFile } = await import('../flows/document/load.js');
  const checked = checkFlowFile(file, { registry });
  for (const w of checked.warnings) {
    process.stderr.write(`${w.file}:${w.line}: warning: ${w.message}\n`);
  }
  if (!checked.flow) {
    for (const e of checked.errors) process.stderr.write(`${e.file}:${e.line}: ${e.message}\n`);
    const n = checked.errors.length;
    process.stderr.write(`${file}: ${n} problem${n === 1 ? '' : 's'}\n`);
    return 1;
  }
  const def = checked.flow.definition;
  if (command === 'draw') {
    const { toMermaid } = await import('../flows/mermaid.js');
    process.stdout.write(
      `${toMermaid(checked.flow, { direction: (values.direction as 'TD' | 'LR') ?? 'TD' })}\n`,
    );
    return 0;
  }
  const version =
    def.options.version === undefined ? '' : ` version ${JSON.stringify(def.options.version)}`;
  const warned = checked.warnings.length ? `, ${checked.warnings.length} warning(s)` : '';
  process.stdout.write(
    `${file}: ok (flow "${def.name}"${version}, ${def.steps.length} steps${warned})\n`,
  );
  return 0;
}

/** Imports a registry module: its `registry` export, or its default export. */
async function loadRegistry(path: string): Promise<FlowRegistry> {
  const file = resolve(path);
  if (!existsSync(file)) throw new TasklineError('not_found', `no registry module at ${path}`);
  let mod: { registry?: unknown; default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as typeof mod;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw new TasklineError(
        'invalid_argument',
        `${path} is TypeScript: install tsx in your app (npm install -D tsx) so taskline can load it, or point at the compiled JavaScript.`,
      );
    }
    throw new TasklineError(
      'invalid_argument',
      `${path}: cannot load it: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const registry = mod.registry ?? mod.default;
  if (typeof registry !== 'object' || registry === null) {
    throw new TasklineError(
      'invalid_argument',
      `${path} must export its registry ({ tasks, picks, escalations, flows }) as \`registry\` or as its default export.`,
    );
  }
  return registry as FlowRegistry;
}
