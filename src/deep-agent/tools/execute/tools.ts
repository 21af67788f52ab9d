/**
 * The model-facing execution tools: `execute({ command })` (bash) and
 * `execute_python({ code })`, both on an {@link ExecutionSandbox}. A failing command is a
 * normal result (its exit code and stderr are what the model needs); a result longer than the
 * large-result size is saved to a file and previewed, like every other deep-agent tool.
 */
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { isTasklineError } from '../../../core/errors.js';
import { fitLargeResult } from '../files/large-result.js';
import { DEFAULT_LARGE_RESULT_CHARS, toToolError } from '../files/tools.js';
import type { ExecResult } from './bash.js';
import { LocalShell } from './local.js';
import type { PythonRunResult } from './python.js';
import type { ExecutionSandbox } from './sandbox.js';

/** A tool the execution factory returns, keyed by its model-visible name. */
type NamedTool =
  | llm.AnonFunctionTool<{ command: string }, unknown, string>
  | llm.AnonFunctionTool<{ code: string }, unknown, string>;

/** What {@link createExecutionTools} returns: `execute` and/or `execute_python`. */
export interface ExecutionTools {
  execute?: llm.AnonFunctionTool<{ command: string }, unknown, string>;
  execute_python?: llm.AnonFunctionTool<{ code: string }, unknown, string>;
  [name: string]: NamedTool | undefined;
}

/** Options for {@link createExecutionTools}. */
export interface ExecutionToolsOptions {
  /** Results longer than this many characters are saved and previewed (default 16,000). */
  largeResultChars?: number;
}

function isPython(result: ExecResult | PythonRunResult): result is PythonRunResult {
  return 'saved' in result;
}

/** The text a model sees for a run: output, errors, exit code, and what happened to files. */
export function formatRun(result: ExecResult | PythonRunResult): string {
  const parts: string[] = [];
  if (result.stdout) parts.push(result.stdout.replace(/\n$/, ''));
  if (result.stderr) parts.push(`[stderr]\n${result.stderr.replace(/\n$/, '')}`);
  if (result.droppedBytes) {
    parts.push(`[${result.droppedBytes} more bytes of output were dropped: the output cap]`);
  }
  if (isPython(result)) {
    if (result.saved.length > 0) parts.push(`[saved: ${result.saved.join(', ')}]`);
    if (result.deleted.length > 0) parts.push(`[deleted: ${result.deleted.join(', ')}]`);
    for (const f of result.notSaved) parts.push(`[not saved: ${f.path}: ${f.reason}]`);
  }
  parts.push(`[exit code ${result.exitCode}]`);
  return parts.join('\n');
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isTasklineError(err)) throw new llm.ToolError(`${err.code}: ${err.message}`);
    throw toToolError(err);
  }
}

/**
 * `execute` and `execute_python` for an agent (only those the sandbox has), in the object
 * form an upstream `Agent` takes as `tools`.
 */
export function createExecutionTools(
  sandbox: ExecutionSandbox,
  options: ExecutionToolsOptions = {},
): ExecutionTools {
  const largeChars = options.largeResultChars ?? DEFAULT_LARGE_RESULT_CHARS;
  const fitOutput = (text: string, id: string) =>
    fitLargeResult(sandbox.backend, text, id, largeChars);
  const tools: ExecutionTools = {};
  if (sandbox.shell) {
    const local = sandbox.shell instanceof LocalShell;
    tools.execute = llm.tool({
      description: local
        ? 'Run a bash command on this machine (not sandboxed). Returns stdout, stderr and the exit code.'
        : 'Run a bash command in a sandbox whose files are the same as read_file/write_file see ' +
          '(paths like /notes.md; the working directory is "/"). Common tools work: ls, cat, grep, ' +
          'sed, awk, jq, sort, wc, find, head, tail, pipes and redirects. No network, no real ' +
          'programs, text files only. Returns stdout, stderr and the exit code.',
      parameters: z.object({
        command: z.string().min(1).describe('The bash command or script to run'),
      }),
      execute: ({ command }, { toolCallId, abortSignal }) =>
        guarded(async () => {
          const result = await sandbox.exec(command, abortSignal ? { signal: abortSignal } : {});
          return fitOutput(formatRun(result), toolCallId);
        }),
    });
  }
  if (sandbox.python) {
    tools.execute_python = llm.tool({
      description:
        'Run Python 3 code (standard library only, no network) in a sandbox that shares the ' +
        'workspace: open("/data/x.csv") reads the file read_file shows, and text files you ' +
        'write are saved there. Print what you need to see. Returns stdout, stderr, the exit ' +
        'code and the files saved.',
      parameters: z.object({
        code: z.string().min(1).describe('The Python code to run'),
      }),
      execute: ({ code }, { toolCallId, abortSignal }) =>
        guarded(async () => {
          const result = await sandbox.runPython(code, abortSignal ? { signal: abortSignal } : {});
          return fitOutput(formatRun(result), toolCallId);
        }),
    });
  }
  return tools;
}
