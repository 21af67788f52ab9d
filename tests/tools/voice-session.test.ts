import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { FileToolsState } from '../../src/deep-agent/tools/files/state.js';
import { createFileTools } from '../../src/deep-agent/tools/files/tools.js';
import {
  createTodoTools,
  type TodoChangeEvent,
  TodoList,
} from '../../src/deep-agent/tools/todos.js';

const numbered = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`;

/** FakeLLM keys a reply on the last tool output, which upstream JSON-encodes. */
const outputKey = (toolOutput: string) => JSON.stringify(toolOutput);

let session: voice.AgentSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

describe('file and todo tools inside a text-only voice session', () => {
  it('writes, reads and edits a file, and keeps a todo list, through real tool calls', async () => {
    const backend = new MemoryBackend();
    const state = new FileToolsState();
    const list = new TodoList();
    const changes: TodoChangeEvent[] = [];
    list.on('change', (e) => changes.push(e));

    const created = 'Created /notes.md (2 lines, 10 bytes).';
    const read = `${numbered(1, 'milk')}\n${numbered(2, 'eggs')}`;
    const edited = 'Edited /notes.md: replaced 1 occurrence.';
    const planned = '1 todo: 0 completed, 1 in progress, 0 pending. Now: Buy groceries';
    const llm = new voice.testing.FakeLLM([
      {
        input: 'Note milk and eggs, then swap eggs for bread.',
        toolCalls: [
          {
            name: 'write_todos',
            args: { todos: [{ content: 'Buy groceries', status: 'in_progress' }] },
          },
        ],
      },
      {
        input: outputKey(planned),
        toolCalls: [
          { name: 'write_file', args: { file_path: '/notes.md', content: 'milk\neggs\n' } },
        ],
      },
      {
        input: outputKey(created),
        toolCalls: [{ name: 'read_file', args: { file_path: '/notes.md' } }],
      },
      {
        input: outputKey(read),
        toolCalls: [
          {
            name: 'edit_file',
            args: { file_path: '/notes.md', old_string: 'eggs', new_string: 'bread' },
          },
        ],
      },
      { input: outputKey(edited), content: 'Your list now says milk and bread.' },
    ]);
    session = new voice.AgentSession({ llm });
    await session.start({
      agent: new voice.Agent({
        instructions: "You keep the caller's notes in files.",
        tools: { ...createFileTools({ backend, state }), ...createTodoTools({ list }) },
      }),
    });

    const run = session.run({ userInput: 'Note milk and eggs, then swap eggs for bread.' });
    await run.wait();

    run.expect.containsFunctionCall({ name: 'write_todos' });
    run.expect.containsFunctionCallOutput({ output: outputKey(planned) });
    run.expect.containsFunctionCall({ name: 'write_file' });
    run.expect.containsFunctionCallOutput({ output: outputKey(created) });
    run.expect.containsFunctionCall({ name: 'read_file' });
    run.expect.containsFunctionCallOutput({ output: outputKey(read) });
    run.expect.containsFunctionCall({ name: 'edit_file' });
    run.expect.containsFunctionCallOutput({ output: outputKey(edited) });
    run.expect.containsMessage({ role: 'assistant' });
    expect(await backend.read('/notes.md')).toBe('milk\nbread\n');
    expect(state.readPaths).toEqual(['/notes.md']);
    expect(list.items).toEqual([{ id: '1', content: 'Buy groceries', status: 'in_progress' }]);
    expect(changes).toHaveLength(1);
  });

  it('returns the read_required error to the model, which reads and then edits', async () => {
    const backend = new MemoryBackend();
    await backend.write('/todo.md', 'call the bnak\n');
    const refused =
      'read_required: /todo.md has not been read in this session; read_file it first, then edit';
    const edit = {
      name: 'edit_file',
      args: { file_path: '/todo.md', old_string: 'bnak', new_string: 'bank' },
    };
    const llm = new voice.testing.FakeLLM([
      { input: 'Fix the typo in my todo file.', toolCalls: [edit] },
      // A tool error reaches the model as its plain message.
      { input: refused, toolCalls: [{ name: 'read_file', args: { file_path: '/todo.md' } }] },
      { input: outputKey(numbered(1, 'call the bnak')), toolCalls: [edit] },
      { input: outputKey('Edited /todo.md: replaced 1 occurrence.'), content: 'Fixed.' },
    ]);
    session = new voice.AgentSession({ llm });
    await session.start({
      agent: new voice.Agent({ instructions: 'Edit files.', tools: createFileTools({ backend }) }),
    });
    const run = session.run({ userInput: 'Fix the typo in my todo file.' });
    await run.wait();
    run.expect.containsFunctionCallOutput({ output: refused, isError: true });
    expect(await backend.read('/todo.md')).toBe('call the bank\n');
  });
});
