/**
 * A sub-agent's own files and todos, and how they land in the parent when a task ends:
 * the full result at `/tasks/<id>/result.md`, the child's files and todo list under
 * `/tasks/<id>/`. A child never writes into the parent's tree while it runs.
 */
import type { Clock } from '../core/clock.js';
import type { FileBackend } from '../deep-agent/tools/files/backend.js';
import { MemoryBackend } from '../deep-agent/tools/files/backends/memory.js';
import { FileToolsState } from '../deep-agent/tools/files/state.js';
import { TodoList } from '../deep-agent/tools/todos.js';

/** The scratch space one sub-agent conversation works in. */
export interface Workspace {
  files: FileBackend;
  fileState: FileToolsState;
  todos: TodoList;
}

/** A fresh in-memory workspace (the default for every sub-agent conversation). */
export function createWorkspace(clock?: Pick<Clock, 'now'>): Workspace {
  return {
    files: new MemoryBackend(clock ? { clock } : {}),
    fileState: new FileToolsState(),
    todos: new TodoList(),
  };
}

/** The folder of a task in its parent's files. */
export function taskDir(taskId: string): string {
  return `/tasks/${safeSegment(taskId)}`;
}

/** A task id as one safe path segment. */
function safeSegment(id: string): string {
  const clean = id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
  return clean === '' || clean === '.' || clean === '..' ? 'task' : clean;
}

/**
 * Copies every file of the child workspace into `parent` under `/tasks/<id>/`, and the
 * child's todo list (when it has one) as `/tasks/<id>/todos.md`. Returns the parent paths
 * written. A file the parent refuses (too large, binary) is skipped, not fatal.
 */
export async function mergeWorkspace(
  child: Workspace,
  parent: FileBackend,
  taskId: string,
): Promise<string[]> {
  const dir = taskDir(taskId);
  const written: string[] = [];
  const top = await child.files.ls('/');
  const files = top.length === 0 ? [] : await child.files.glob('**/*', '/');
  for (const file of files) {
    if (file.isDir) continue;
    const target = `${dir}${file.path}`;
    try {
      await parent.write(target, await child.files.read(file.path));
      written.push(target);
    } catch {
      // The parent's caps decide; one refused file must not lose the result.
    }
  }
  if (child.todos.items.length > 0) {
    const target = `${dir}/todos.md`;
    try {
      await parent.write(target, `${child.todos.render()}\n`);
      written.push(target);
    } catch {
      // as above
    }
  }
  return written;
}

/** Writes the full result of a task; returns its path, or undefined when the parent refused. */
export function writeResult(
  parent: FileBackend,
  taskId: string,
  markdown: string,
): Promise<string | undefined> {
  const path = `${taskDir(taskId)}/result.md`;
  // One handler, not an async frame around the write: every finished task comes here.
  let written: Promise<void>;
  try {
    written = parent.write(path, markdown);
  } catch {
    return Promise.resolve(undefined);
  }
  return written.then(
    () => path,
    () => undefined,
  );
}
