import { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { FileToolsState } from '../../src/deep-agent/tools/files/state.js';
import { createFileTools } from '../../src/deep-agent/tools/files/tools.js';
import {
  createTodoTools,
  type TodoChangeEvent,
  TodoList,
} from '../../src/deep-agent/tools/todos.js';
import {
  type FakeOpenAIServer,
  type OpenAIChatRequest,
  startFakeOpenAI,
} from '../../src/testing/openai-server.js';

const numbered = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`;

/** The tool results a request carries after its last assistant turn, by tool name. */
function toolResults(request: OpenAIChatRequest | undefined): Record<string, unknown[]> {
  const messages = request?.messages ?? [];
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const call of m.tool_calls ?? []) names.set(call.id, call.function.name);
  }
  let from = messages.length;
  while (from > 0 && messages[from - 1]?.role === 'tool') from--;
  const out: Record<string, unknown[]> = {};
  for (const m of messages.slice(from)) {
    const name = names.get(m.tool_call_id ?? '') ?? '?';
    const results = out[name] ?? [];
    results.push(m.content);
    out[name] = results;
  }
  return out;
}

let server: FakeOpenAIServer | undefined;
let session: voice.AgentSession | undefined;
afterEach(async () => {
  await session?.close();
  await server?.close();
  session = undefined;
  server = undefined;
});

describe('file and todo tools with the real openai plugin in a voice session', () => {
  it('writes, reads and edits files through tool calls, errors coming back with their codes', async () => {
    const backend = new MemoryBackend();
    await backend.write('/notes.md', 'call the bnak\nbuy milk\n'); // there before the call
    const state = new FileToolsState();
    const list = new TodoList();
    const changes: TodoChangeEvent[] = [];
    list.on('change', (e) => changes.push(e));

    server = await startFakeOpenAI([
      // 0: plan, and create the shopping list (two tool calls in one turn).
      {
        toolCalls: [
          {
            name: 'write_todos',
            args: { todos: [{ content: 'Tidy my notes', status: 'in_progress' }] },
          },
          { name: 'write_file', args: { file_path: '/list.md', content: 'milk\neggs\ntea\n' } },
        ],
      },
      // 1: edit a file it has not read: refused with read_required.
      {
        toolCalls: [
          {
            name: 'edit_file',
            args: { file_path: '/notes.md', old_string: 'bnak', new_string: 'bank' },
          },
        ],
      },
      // 2: read it, and page through the list.
      {
        toolCalls: [
          { name: 'read_file', args: { file_path: '/notes.md' } },
          { name: 'read_file', args: { file_path: '/list.md', offset: 1, limit: 1 } },
        ],
      },
      // 3: an ambiguous edit, then the right one.
      {
        toolCalls: [
          { name: 'edit_file', args: { file_path: '/notes.md', old_string: 'b', new_string: 'B' } },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            args: { file_path: '/notes.md', old_string: 'bnak', new_string: 'bank' },
          },
        ],
      },
      // 5: speak.
      { content: 'Done: your note now says call the bank.' },
    ]);
    const model = new openai.LLM({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test' });
    session = new voice.AgentSession({
      llm: model,
      connOptions: { llmConnOptions: { maxRetry: 0 } },
      // Upstream stops a turn after 3 tool rounds by default; file work needs a few more.
      maxToolSteps: 8,
    });
    await session.start({
      agent: new voice.Agent({
        instructions: "You keep the caller's notes in files.",
        tools: { ...createFileTools({ backend, state }), ...createTodoTools({ list }) },
      }),
    });

    const run = session.run({ userInput: 'Fix the typo in my notes and start a shopping list.' });
    await run.wait();

    // What the caller got: the spoken answer, and the files as the tools left them.
    const said = run.events.flatMap((e) =>
      e.type === 'message' && e.item.role === 'assistant' ? [e.item.textContent] : [],
    );
    expect(said).toEqual(['Done: your note now says call the bank.']);
    expect(await backend.read('/notes.md')).toBe('call the bank\nbuy milk\n');
    expect(await backend.read('/list.md')).toBe('milk\neggs\ntea\n');
    expect(list.items).toEqual([{ id: '1', content: 'Tidy my notes', status: 'in_progress' }]);
    expect(changes).toHaveLength(1);
    expect(state.readPaths.slice().sort()).toEqual(['/list.md', '/notes.md']);

    // What the model was sent back, request by request.
    expect(server.failures).toEqual([]);
    const r = server.requests;
    expect(r).toHaveLength(6);
    expect(r[0]?.tools?.map((t) => t.function.name).sort()).toEqual([
      'delete_file',
      'edit_file',
      'glob',
      'grep',
      'ls',
      'read_file',
      'read_todos',
      'write_file',
      'write_todos',
    ]);
    expect(
      r[0]?.tools?.find((t) => t.function.name === 'edit_file')?.function.parameters,
    ).toMatchObject({
      properties: {
        file_path: { type: 'string' },
        old_string: { type: 'string' },
        new_string: { type: 'string' },
      },
    });
    expect(toolResults(r[1])).toEqual({
      write_todos: ['"1 todo: 0 completed, 1 in progress, 0 pending. Now: Tidy my notes"'],
      write_file: ['"Created /list.md (3 lines, 14 bytes)."'],
    });
    expect(toolResults(r[2])).toEqual({
      edit_file: [
        'read_required: /notes.md has not been read in this session; read_file it first, then edit',
      ],
    });
    expect(toolResults(r[3])).toEqual({
      read_file: [
        JSON.stringify(`${numbered(1, 'call the bnak')}\n${numbered(2, 'buy milk')}`),
        JSON.stringify(`${numbered(2, 'eggs')}\n(... 1 more lines; continue with offset=2)`),
      ],
    });
    expect(toolResults(r[4]).edit_file?.[0]).toMatch(
      /^ambiguous_match: old_string occurs 2 times in \/notes\.md; .*replace_all/,
    );
    expect(toolResults(r[5])).toEqual({
      edit_file: ['"Edited /notes.md: replaced 1 occurrence."'],
    });
  });
});
