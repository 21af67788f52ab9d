import { llm } from '@livekit/agents';

/** Any function tool from the object form, seen only through its execute function. */
export interface ExecutableTool {
  execute: (args: never, opts: llm.ToolOptions) => Promise<unknown>;
}

/** Calls a tool's execute directly, as the upstream runtime would after parsing arguments. */
export function callTool(
  tool: ExecutableTool,
  args: Record<string, unknown>,
  options: { toolCallId?: string; signal?: AbortSignal } = {},
): Promise<unknown> {
  const base = llm.createToolOptions(options.toolCallId ?? 'call_test');
  return tool.execute(args as never, {
    ...base,
    abortSignal: options.signal ?? base.abortSignal,
  });
}

/** The message of the llm.ToolError a tool call rejects with; fails otherwise. */
export async function toolError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof llm.ToolError) return err.message;
    throw err;
  }
  throw new Error('expected an llm.ToolError, but the call succeeded');
}
