import { type FileBackend, FileError } from './backend.js';
import { previewOf } from './format.js';

/** Where oversized tool results are saved, one file per tool call id. */
export const LARGE_RESULTS_DIR = '/large_tool_results';

/** A call id as a safe file name. */
function fileNameFor(toolCallId: string): string {
  const clean = toolCallId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
  return clean === '' || clean === '.' || clean === '..' ? 'call' : clean;
}

/**
 * The large-result eviction every deep-agent tool shares: a result longer than `maxChars` is
 * saved at `/large_tool_results/<tool call id>` on `backend` and replaced by its head, its
 * tail and a note saying where the whole text is (or why it could not be saved). Small
 * results pass through unchanged.
 */
export async function fitLargeResult(
  backend: FileBackend,
  result: string,
  toolCallId: string,
  maxChars: number,
): Promise<string> {
  if (result.length <= maxChars) return result;
  const path = `${LARGE_RESULTS_DIR}/${fileNameFor(toolCallId)}`;
  let note: string;
  try {
    await backend.write(path, result);
    note =
      `The full result (${result.length} characters) is saved at ${path}; ` +
      'read it with read_file using offset and limit, or narrow the request';
  } catch (err) {
    const why = err instanceof FileError ? `${err.code}: ${err.message}` : 'the save failed';
    note = `The full result (${result.length} characters) could not be saved (${why}); narrow the request`;
  }
  const head = Math.min(4000, Math.floor(maxChars / 4));
  const tail = Math.min(2000, Math.floor(maxChars / 8));
  return previewOf(result, note, head, tail);
}
