/**
 * createDeepAgent on a call with the real openai plugin against the local server: the prompt
 * and tools of the parts that are on, dangling tool calls repaired before the model sees the
 * history (the server strict like OpenAI), long calls summarized with the full history
 * offloaded and todos and captured values kept, and AGENTS.md memory that survives to the
 * caller's next call on one SQLite store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { llm } from '@livekit/agents';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { createDeepAgent } from '../../src/deep-agent/agent.js';
import { CANCELLED_OUTPUT, repairDanglingToolCalls } from '../../src/deep-agent/dangling.js';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { SqliteFileStore } from '../../src/deep-agent/tools/files/backends/store-sqlite.js';
import { TodoList } from '../../src/deep-agent/tools/todos.js';
import { startDeepCall, systemText, toolResults } from './helpers.js';

/** The tool the restored history called (a context only keeps calls of tools it has). */
const sendMoney = {
  send_money: llm.tool({
    description: 'Send money to a contact.',
    parameters: z.object({ amount: z.number(), to: z.string() }),
    execute: async () => 'sent',
  }),
};

/** A history restored after a crash: the last transfer call never got its result. */
function crashedHistory(): llm.ChatContext {
  const ctx = llm.ChatContext.empty();
  const t = Date.now() - 60_000;
  ctx.addMessage({ role: 'user', content: 'Send 20 dollars to Ana.', createdAt: t });
  ctx.insert(
    llm.FunctionCall.create({
      callId: 'call_lost',
      name: 'send_money',
      args: '{"amount":20,"to":"Ana"}',
      createdAt: t + 1,
    }),
  );
  return ctx;
}

describe('the factory', () => {
  it('offers the tools of the parts that are on and describes them in the prompt', async () => {
    const agent = createDeepAgent({
      instructions: 'You are a concierge.',
      execution: { python: false },
    });
    const { server, caller } = await startDeepCall(agent, [{ content: 'Hello!' }]);
    await caller.say('hi');
    const request = server.requests[0];
    expect(request?.tools?.map((t) => t.function.name).sort()).toEqual([
      'delete_file',
      'edit_file',
      'execute',
      'glob',
      'grep',
      'ls',
      'read_file',
      'read_todos',
      'write_file',
      'write_todos',
    ]);
    const prompt = systemText(request);
    expect(prompt.startsWith('You are a concierge.')).toBe(true);
    expect(prompt).toContain('## Planning');
    expect(prompt).toContain('execute runs bash in a sandbox');
    expect(prompt).not.toContain('execute_python');
    expect(prompt).not.toContain('## Skills');
  });
});

describe('dangling tool calls', () => {
  it('get a cancelled result the model sees, and the strict server accepts the history', async () => {
    const agent = createDeepAgent({
      instructions: 'You send money.',
      tools: sendMoney,
      chatCtx: crashedHistory(),
    });
    const { server, caller } = await startDeepCall(
      agent,
      [{ content: 'That transfer was interrupted; let me check before trying again.' }],
      { strictToolHistory: true },
    );
    await caller.say('Did it go through?');
    expect(server.failures).toEqual([]);
    const messages = server.requests[0]?.messages ?? [];
    const at = messages.findIndex((m) => m.tool_calls?.some((c) => c.id === 'call_lost'));
    expect(at).toBeGreaterThan(0);
    expect(messages[at + 1]).toEqual({
      role: 'tool',
      tool_call_id: 'call_lost',
      content: CANCELLED_OUTPUT,
    });
    expect(caller.agentLines.at(-1)).toContain('interrupted');
  });

  it('without the repair, upstream drops the call and the model never learns it was tried', async () => {
    const agent = createDeepAgent({
      instructions: 'You send money.',
      tools: sendMoney,
      chatCtx: crashedHistory(),
      repairToolCalls: false,
    });
    const { server, caller } = await startDeepCall(agent, [{ content: 'OK.' }], {
      strictToolHistory: true,
    });
    await caller.say('Did it go through?');
    const messages = server.requests[0]?.messages ?? [];
    expect(messages.some((m) => m.tool_calls?.length)).toBe(false);
  });

  it('repairs in place, once, after the whole turn', () => {
    const ctx = crashedHistory();
    ctx.insert(
      llm.FunctionCall.create({
        callId: 'call_b',
        name: 'note',
        args: '{}',
        createdAt: Date.now() - 59_000,
      }),
    );
    ctx.insert(
      llm.FunctionCallOutput.create({
        callId: 'call_b',
        name: 'note',
        output: 'ok',
        isError: false,
        createdAt: Date.now() - 58_000,
      }),
    );
    expect(repairDanglingToolCalls(ctx).map((c) => c.callId)).toEqual(['call_lost']);
    expect(repairDanglingToolCalls(ctx)).toEqual([]);
    expect(ctx.items.map((i) => (i.type === 'message' ? i.role : `${i.type}`))).toEqual([
      'user',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
    ]);
  });
});

describe('summarization of a long call', () => {
  it('offloads the older turns, keeps todos and captured values, and the model gets the summary', async () => {
    const history = llm.ChatContext.empty();
    const t = Date.now() - 3_600_000;
    let n = 0;
    history.addMessage({
      role: 'user',
      content: 'My email is ana@example.com, keep it.',
      createdAt: t + n++,
    });
    history.insert(
      llm.FunctionCall.create({
        callId: 'call_email',
        name: 'collect_email',
        args: '{}',
        createdAt: t + n++,
      }),
    );
    history.insert(
      llm.FunctionCallOutput.create({
        callId: 'call_email',
        name: 'collect_email',
        output: '{"status":"ok","value":"ana@example.com"}',
        isError: false,
        createdAt: t + n++,
      }),
    );
    for (let i = 0; i < 40; i++) {
      history.addMessage({
        role: 'user',
        content: `Question ${i}: tell me about room ${i} in detail please.`,
        createdAt: t + n++,
      });
      history.addMessage({
        role: 'assistant',
        content: `Room ${i} has a view of the garden and a large desk. `.repeat(3),
        createdAt: t + n++,
      });
    }
    const backend = new MemoryBackend();
    const todos = new TodoList();
    todos.replace([{ content: 'Book the airport taxi', status: 'in_progress' }]);
    const agent = createDeepAgent({
      instructions: 'You are a hotel concierge.',
      tools: {
        collect_email: llm.tool({
          description: "Capture the caller's email address.",
          execute: async () => ({ status: 'ok', value: 'ana@example.com' }),
        }),
      },
      backend,
      todos,
      chatCtx: history,
      summarization: { contextWindowTokens: 4_000, trigger: 0.5, keep: 0.15 },
    });
    const { server, caller } = await startDeepCall(
      agent,
      [{ content: 'Your taxi is on my list.' }],
      {
        callId: 'call-42',
      },
    );
    await caller.say('What is still open?');

    const request = server.requests[0];
    const summary = (request?.messages ?? []).find(
      (m) =>
        m.role === 'system' && typeof m.content === 'string' && m.content.startsWith('[Summary'),
    )?.content as string;
    expect(summary).toContain('/conversation_history/call-42.md');
    expect(summary).toContain('collect_email: {"status":"ok","value":"ana@example.com"}');
    expect(summary).toContain('Book the airport taxi');
    // Recent turns stay verbatim; the oldest ones are gone from the request...
    const texts = (request?.messages ?? []).map((m) =>
      typeof m.content === 'string' ? m.content : '',
    );
    expect(texts).toContain('What is still open?');
    expect(texts).toContain('Question 39: tell me about room 39 in detail please.');
    expect(texts).not.toContain('Question 0: tell me about room 0 in detail please.');
    // ...but saved in full, never dropped.
    const saved = await backend.read('/conversation_history/call-42.md');
    expect(saved).toContain('Caller: Question 0: tell me about room 0 in detail please.');
    expect(saved).toContain(
      'Tool result (collect_email): {"status":"ok","value":"ana@example.com"}',
    );
    // The agent's own history now holds the summary, so the next turn does not redo it.
    expect(agent.chatCtx.items.some((i) => i.id.startsWith('taskline_summary_'))).toBe(true);
    expect(todos.items).toEqual([
      { id: '1', content: 'Book the airport taxi', status: 'in_progress' },
    ]);
    expect(server.failures).toEqual([]);
  });

  it('does not summarize when the history cannot be saved (nothing is dropped)', async () => {
    const history = llm.ChatContext.empty();
    for (let i = 0; i < 30; i++) {
      history.addMessage({
        role: 'user',
        content: `Turn ${i} `.repeat(30),
        createdAt: Date.now() - 100_000 + i,
      });
    }
    const agent = createDeepAgent({
      instructions: 'x',
      backend: new MemoryBackend({ maxTotalBytes: 100 }),
      chatCtx: history,
      summarization: { contextWindowTokens: 2_000, trigger: 0.5, keep: 0.1 },
    });
    const { server, caller } = await startDeepCall(agent, [{ content: 'ok' }]);
    await caller.say('hello');
    const texts = (server.requests[0]?.messages ?? []).map((m) => m.content);
    expect(texts).toContain(`${'Turn 0 '.repeat(30)}`);
    expect(texts.some((t) => typeof t === 'string' && t.startsWith('[Summary'))).toBe(false);
  });
});

describe('memory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskline-memory-'));
  const dbPath = join(dir, 'memory.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function concierge(user: string) {
    const store = new SqliteFileStore({ path: dbPath, tenant: 'hotel', user });
    return {
      store,
      agent: createDeepAgent({
        instructions: 'You are a hotel concierge.',
        memory: { backend: store },
      }),
    };
  }

  it("keeps a caller's preference for their next call, and only for them", async () => {
    const first = concierge('+15550001111');
    const one = await startDeepCall(first.agent, [
      {
        toolCalls: [
          {
            name: 'write_file',
            args: { file_path: '/memories/AGENTS.md', content: '# Caller\n- Call them Sam.\n' },
          },
        ],
      },
      { content: 'Of course, Sam.' },
    ]);
    await one.caller.say('Please call me Sam from now on.');
    expect(systemText(one.server.requests[0])).toContain('(empty: create it with write_file');
    expect(one.caller.agentLines.at(-1)).toBe('Of course, Sam.');
    expect(toolResults(one.server.requests[1]).write_file?.[0]).toContain(
      'Created /memories/AGENTS.md',
    );
    first.store.close();

    // The next call: a new agent, a new store handle on the same database file.
    const second = concierge('+15550001111');
    const two = await startDeepCall(second.agent, [
      {
        toolCalls: [
          {
            name: 'edit_file',
            args: {
              file_path: '/memories/AGENTS.md',
              old_string: 'Call them Sam.',
              new_string: 'Call them Samantha.',
            },
          },
        ],
      },
      { content: 'Hello Samantha!' },
    ]);
    await two.caller.say('Actually, Samantha please.');
    const prompt = systemText(two.server.requests[0]);
    expect(prompt).toContain('### /memories/AGENTS.md\n# Caller\n- Call them Sam.');
    expect(prompt).toContain('Never store secrets');
    // Loaded memory counts as read: the edit needs no read_file first.
    expect(toolResults(two.server.requests[1]).edit_file?.[0]).toContain(
      'Edited /memories/AGENTS.md',
    );
    // The store is mounted at /memories/: it holds the file under its own root.
    expect(await second.store.read('/AGENTS.md')).toBe('# Caller\n- Call them Samantha.\n');
    second.store.close();

    const stranger = concierge('+15559999999');
    const three = await startDeepCall(stranger.agent, [{ content: 'Hello!' }]);
    await three.caller.say('Hi');
    expect(systemText(three.server.requests[0])).not.toContain('Samantha');
    stranger.store.close();
  });
});
