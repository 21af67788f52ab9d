import { EventEmitter } from 'node:events';
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { TasklineError } from '../../core/errors.js';

/** Where a todo stands. */
export type TodoStatus = 'pending' | 'in_progress' | 'completed';

/** One item of a todo list. */
export interface Todo {
  id: string;
  content: string;
  status: TodoStatus;
}

/** A todo as the model (or a caller) writes it; the id is optional and assigned if missing. */
export interface TodoInput {
  id?: string | null;
  content: string;
  status: TodoStatus;
}

/** Default most items a list holds. */
export const DEFAULT_MAX_TODOS = 50;

/** Default longest todo text, in characters. */
export const DEFAULT_MAX_TODO_CHARS = 500;

/** Sent with every change of a {@link TodoList}, for a UI. */
export interface TodoChangeEvent {
  todos: readonly Todo[];
  previous: readonly Todo[];
}

/** Events of a {@link TodoList}. */
export interface TodoListEvents {
  change: [TodoChangeEvent];
}

/** Options for {@link TodoList}. */
export interface TodoListOptions {
  /** Most items (default 50). */
  maxItems?: number;
  /** Longest item text in characters (default 500). */
  maxContentChars?: number;
}

const STATUSES: readonly TodoStatus[] = ['pending', 'in_progress', 'completed'];

function limitOption(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new TasklineError('invalid_argument', `${name} must be a whole number of at least 1`);
  }
  return value;
}

/**
 * The plan of one session or sub-agent: a bounded list of todos the model replaces as a
 * whole, observable through `on('change', ...)` so a UI can show progress. Create one per
 * session; give a sub-agent its own so it never touches the parent's list.
 */
export class TodoList extends EventEmitter<TodoListEvents> {
  #items: readonly Todo[] = [];
  /** Most items the list accepts. */
  readonly maxItems: number;
  /** Longest item text accepted, in characters. */
  readonly maxContentChars: number;

  constructor(options: TodoListOptions = {}) {
    super();
    this.maxItems = limitOption('maxItems', options.maxItems, DEFAULT_MAX_TODOS);
    this.maxContentChars = limitOption(
      'maxContentChars',
      options.maxContentChars,
      DEFAULT_MAX_TODO_CHARS,
    );
  }

  /** The current items (a frozen snapshot). */
  get items(): readonly Todo[] {
    return this.#items;
  }

  /**
   * Replaces the whole list after checking it: at most `maxItems` items, non-empty text up
   * to `maxContentChars`, a known status, unique ids (missing ids become "1", "2", ...).
   * Throws TasklineError `limit_exceeded` or `invalid_argument`; emits `change` on success.
   */
  replace(todos: readonly TodoInput[]): readonly Todo[] {
    if (!Array.isArray(todos)) {
      throw new TasklineError('invalid_argument', 'todos must be a list of items');
    }
    if (todos.length > this.maxItems) {
      throw new TasklineError(
        'limit_exceeded',
        `the list has ${todos.length} items; at most ${this.maxItems} are allowed. ` +
          'Merge small steps or drop completed ones',
      );
    }
    const used = new Set<string>();
    for (const t of todos) if (t.id !== undefined && t.id !== null && t.id !== '') used.add(t.id);
    let next = 1;
    const ids = new Set<string>();
    const items = todos.map((t, i): Todo => {
      const content = typeof t.content === 'string' ? t.content.trim() : '';
      if (content === '') {
        throw new TasklineError(
          'invalid_argument',
          `item ${i + 1} has no content; describe the step`,
        );
      }
      if (content.length > this.maxContentChars) {
        throw new TasklineError(
          'limit_exceeded',
          `item ${i + 1} is ${content.length} characters; at most ${this.maxContentChars} are ` +
            'allowed. Shorten it',
        );
      }
      if (!STATUSES.includes(t.status)) {
        throw new TasklineError(
          'invalid_argument',
          `item ${i + 1} has status ${JSON.stringify(t.status)}; use pending, in_progress or completed`,
        );
      }
      let id = t.id ?? '';
      if (id === '') {
        while (used.has(String(next))) next++;
        id = String(next++);
        used.add(id);
      }
      if (ids.has(id)) {
        throw new TasklineError(
          'invalid_argument',
          `two items have the id ${JSON.stringify(id)}; ids must be unique`,
        );
      }
      ids.add(id);
      return Object.freeze({ id, content, status: t.status });
    });
    const previous = this.#items;
    this.#items = Object.freeze(items);
    this.emit('change', { todos: this.#items, previous });
    return this.#items;
  }

  /** Empties the list (emits `change`). */
  clear(): void {
    this.replace([]);
  }

  /** One line of counts, e.g. "3 todos: 1 completed, 1 in progress, 1 pending". */
  summary(): string {
    const n = this.#items.length;
    if (n === 0) return 'The todo list is empty.';
    const count = (s: TodoStatus) => this.#items.filter((t) => t.status === s).length;
    return (
      `${n} todo${n === 1 ? '' : 's'}: ${count('completed')} completed, ` +
      `${count('in_progress')} in progress, ${count('pending')} pending.`
    );
  }

  /** The summary plus one line per item: `[x]` completed, `[>]` in progress, `[ ]` pending. */
  render(): string {
    const mark: Record<TodoStatus, string> = {
      completed: '[x]',
      in_progress: '[>]',
      pending: '[ ]',
    };
    return [
      this.summary(),
      ...this.#items.map((t) => `${mark[t.status]} ${t.id}. ${t.content}`),
    ].join('\n');
  }
}

/** Options for {@link createTodoTools}. */
export interface TodoToolsOptions {
  /** The session's list (a new one when omitted; pass your own to listen to it). */
  list?: TodoList;
}

/**
 * `write_todos` and `read_todos` as upstream function tools (object form, for an Agent's
 * `tools`). write_todos replaces the list and answers with a short summary and the step in
 * progress; read_todos returns every item. Limit errors reach the model as
 * `llm.ToolError("limit_exceeded: ...")`.
 */
export function createTodoTools(options: TodoToolsOptions = {}) {
  const list = options.list ?? new TodoList();
  return {
    write_todos: llm.tool({
      description:
        'Replace your todo list for multi-step work. Send the whole list every time; mark one ' +
        'item in_progress while you work on it and completed when done.',
      parameters: z.object({
        todos: z
          .array(
            z.object({
              id: z.string().nullish().describe('Stable id; assigned when omitted'),
              content: z.string().describe('What to do, in a short sentence'),
              status: z.enum(['pending', 'in_progress', 'completed']),
            }),
          )
          .describe('The complete new list'),
      }),
      execute: async ({ todos }) => {
        try {
          list.replace(todos);
        } catch (err) {
          if (err instanceof TasklineError) throw new llm.ToolError(`${err.code}: ${err.message}`);
          throw err;
        }
        const current = list.items.find((t) => t.status === 'in_progress');
        return current ? `${list.summary()} Now: ${current.content}` : list.summary();
      },
    }),
    read_todos: llm.tool({
      description: 'Show your current todo list.',
      execute: async () => list.render(),
    }),
  };
}

/** The record {@link createTodoTools} returns. */
export type TodoTools = ReturnType<typeof createTodoTools>;
