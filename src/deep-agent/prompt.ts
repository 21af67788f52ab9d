/**
 * The deep agent's system prompt, assembled from the parts that are on: the app's own
 * instructions first, then one short section per capability (planning, files, code, sub-agents,
 * skills, memory, approval). A part that is off says nothing, so a small agent has a small prompt.
 */

/** Which parts the prompt describes. */
export interface PromptParts {
  /** The app's instructions (always first). */
  instructions: string;
  todos?: boolean;
  files?: boolean;
  /** `execute` is on (and whether it is the sandbox). */
  bash?: 'sandbox' | 'local';
  python?: boolean;
  delegation?: boolean;
  /** The skills section (skillsPrompt). */
  skills?: string;
  /** The memory section (memoryPrompt). */
  memory?: string;
  /** Tools that need approval. */
  approvalTools?: readonly string[];
  /** Where summarized history is saved (summarization on). */
  historyPath?: string;
}

/** Base guidance for any deep agent on a call. */
const VOICE = [
  '## How to work on a call',
  'You are speaking with a caller. Keep replies short and speakable: no lists, markdown, code or',
  'file paths read aloud unless they ask. Use your tools quietly and tell the caller the outcome',
  'in plain words. When work takes several steps, say briefly that you are on it.',
].join('\n');

/** The assembled system prompt. */
export function assemblePrompt(parts: PromptParts): string {
  const sections: string[] = [parts.instructions.trim(), VOICE];
  if (parts.todos) {
    sections.push(
      '## Planning\nFor a request with three or more steps, keep a todo list with write_todos and ' +
        'mark items in_progress and completed as you go; read_todos shows it.',
    );
  }
  if (parts.files) {
    sections.push(
      '## Files\nYou have a file workspace (ls, read_file, write_file, edit_file, glob, grep). ' +
        'Paths start with "/". Read a file before you edit it. Large tool results are saved under ' +
        '/large_tool_results/ and can be read in pages.',
    );
  }
  if (parts.bash || parts.python) {
    const lines = ['## Running code'];
    if (parts.bash === 'sandbox') {
      lines.push(
        'execute runs bash in a sandbox on the same files (grep, sed, awk, jq, sort, wc, pipes). ' +
          'It has no network and runs no real programs.',
      );
    } else if (parts.bash === 'local') {
      lines.push('execute runs bash on this machine; be careful, nothing is sandboxed.');
    }
    if (parts.python) {
      lines.push(
        'execute_python runs Python 3 (standard library only, no network) on the same files. ' +
          'Use it for arithmetic, dates and data: never do sums in your head. Print the answer.',
      );
    }
    sections.push(lines.join('\n'));
  }
  if (parts.delegation) {
    sections.push(
      '## Sub-agents\nFor research or multi-step work that would keep the caller waiting, use the ' +
        'task tool (run_in_background for anything slow) and keep talking; results come back by ' +
        'themselves.',
    );
  }
  if (parts.skills) sections.push(parts.skills);
  if (parts.memory) sections.push(parts.memory);
  if (parts.approvalTools && parts.approvalTools.length > 0) {
    sections.push(
      `## Actions that need approval\n${parts.approvalTools.join(', ')} need approval. Call the ` +
        'tool when the caller wants it: they are asked to confirm automatically, so do not ask ' +
        'twice. If the result says rejected, nothing was done: say so and ask what they want ' +
        'instead. If it says it ran with changes, tell them the changed values.',
    );
  }
  if (parts.historyPath) {
    sections.push(
      `## Long calls\nOlder parts of a long call are summarized; the full transcript is kept at ${parts.historyPath}.`,
    );
  }
  return sections.join('\n\n');
}
