import { describe, expect, it } from 'vitest';
import { TasklineError } from '../../src/core/errors.js';
import {
  createTodoTools,
  type TodoChangeEvent,
  TodoList,
} from '../../src/deep-agent/tools/todos.js';
import { callTool, toolError } from './tool-helpers.js';

describe('TodoList', () => {
  it('replaces the list, assigns missing ids and emits change events', () => {
    const list = new TodoList();
    const events: TodoChangeEvent[] = [];
    list.on('change', (e) => events.push(e));
    list.replace([
      { content: 'Find the account', status: 'completed' },
      { id: 'x', content: 'Read the balance', status: 'in_progress' },
      { content: '  Say goodbye  ', status: 'pending' },
    ]);
    expect(list.items).toEqual([
      { id: '1', content: 'Find the account', status: 'completed' },
      { id: 'x', content: 'Read the balance', status: 'in_progress' },
      { id: '2', content: 'Say goodbye', status: 'pending' },
    ]);
    list.replace([{ id: 'x', content: 'Read the balance', status: 'completed' }]);
    expect(events).toHaveLength(2);
    expect(events[1]?.previous).toHaveLength(3);
    expect(events[1]?.todos).toEqual([
      { id: 'x', content: 'Read the balance', status: 'completed' },
    ]);
    expect(Object.isFrozen(list.items)).toBe(true);
  });

  it('skips ids the caller already uses when assigning new ones', () => {
    const list = new TodoList();
    list.replace([
      { content: 'a', status: 'pending' },
      { id: '1', content: 'b', status: 'pending' },
    ]);
    expect(list.items.map((t) => t.id)).toEqual(['2', '1']);
  });

  it('enforces item count, text length, status and unique ids, leaving the list as it was', () => {
    const list = new TodoList({ maxItems: 2, maxContentChars: 10 });
    list.replace([{ content: 'keep', status: 'pending' }]);
    const events: unknown[] = [];
    list.on('change', (e) => events.push(e));
    const bad: Array<[Parameters<TodoList['replace']>[0], string, RegExp]> = [
      [
        [
          { content: 'a', status: 'pending' },
          { content: 'b', status: 'pending' },
          { content: 'c', status: 'pending' },
        ],
        'limit_exceeded',
        /the list has 3 items; at most 2 are allowed/,
      ],
      [
        [{ content: 'x'.repeat(11), status: 'pending' }],
        'limit_exceeded',
        /item 1 is 11 characters/,
      ],
      [[{ content: '   ', status: 'pending' }], 'invalid_argument', /item 1 has no content/],
      [
        [{ content: 'a', status: 'done' as 'pending' }],
        'invalid_argument',
        /use pending, in_progress or completed/,
      ],
      [
        [
          { id: 'a', content: 'a', status: 'pending' },
          { id: 'a', content: 'b', status: 'pending' },
        ],
        'invalid_argument',
        /two items have the id "a"/,
      ],
    ];
    for (const [todos, code, message] of bad) {
      let caught: unknown;
      try {
        list.replace(todos);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(TasklineError);
      expect((caught as TasklineError).code).toBe(code);
      expect((caught as TasklineError).message).toMatch(message);
    }
    expect(list.items.map((t) => t.content)).toEqual(['keep']);
    expect(events).toEqual([]);
  });

  it('summarizes and renders for the model', () => {
    const list = new TodoList();
    expect(list.summary()).toBe('The todo list is empty.');
    list.replace([
      { content: 'one', status: 'completed' },
      { content: 'two', status: 'in_progress' },
      { content: 'three', status: 'pending' },
    ]);
    expect(list.render()).toBe(
      '3 todos: 1 completed, 1 in progress, 1 pending.\n[x] 1. one\n[>] 2. two\n[ ] 3. three',
    );
    list.clear();
    expect(list.items).toEqual([]);
  });
});

describe('write_todos and read_todos', () => {
  it('round-trip a list and answer with a short summary', async () => {
    const list = new TodoList();
    const tools = createTodoTools({ list });
    expect(
      await callTool(tools.write_todos, {
        todos: [
          { content: 'Verify the caller', status: 'completed' },
          { id: null, content: 'Check the order', status: 'in_progress' },
          { content: 'Offer a refund', status: 'pending' },
        ],
      }),
    ).toBe('3 todos: 1 completed, 1 in progress, 1 pending. Now: Check the order');
    expect(await callTool(tools.read_todos, {})).toBe(
      '3 todos: 1 completed, 1 in progress, 1 pending.\n' +
        '[x] 1. Verify the caller\n[>] 2. Check the order\n[ ] 3. Offer a refund',
    );
    expect(await callTool(tools.write_todos, { todos: [] })).toBe('The todo list is empty.');
  });

  it('return limit errors to the model with a stable code', async () => {
    const tools = createTodoTools({ list: new TodoList({ maxItems: 1 }) });
    expect(
      await toolError(
        callTool(tools.write_todos, {
          todos: [
            { content: 'a', status: 'pending' },
            { content: 'b', status: 'pending' },
          ],
        }),
      ),
    ).toBe(
      'limit_exceeded: the list has 2 items; at most 1 are allowed. Merge small steps or drop completed ones',
    );
  });

  it('keeps a sub-agent list apart from the parent list', async () => {
    const parent = new TodoList();
    const child = new TodoList();
    const parentTools = createTodoTools({ list: parent });
    const childTools = createTodoTools({ list: child });
    await callTool(parentTools.write_todos, { todos: [{ content: 'parent', status: 'pending' }] });
    await callTool(childTools.write_todos, { todos: [{ content: 'child', status: 'pending' }] });
    expect(parent.items.map((t) => t.content)).toEqual(['parent']);
    expect(child.items.map((t) => t.content)).toEqual(['child']);
    expect(await callTool(createTodoTools().read_todos, {})).toBe('The todo list is empty.');
  });
});
