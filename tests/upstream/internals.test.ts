// Pins every reach src/upstream/internals.ts makes into @livekit/agents 1.9 internals, one
// `describe` per function (the names its TSDoc gives). When one fails after an upgrade, fix
// that function in src/upstream/internals.ts; its call sites stay as they are.
import { Future, llm, voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import {
  agentChatContext,
  attachSessionToolset,
  isOwnerFinishedError,
  isSessionClosing,
  linkedParticipantIdentity,
  onEnterTaskOf,
  summarizeChatContext,
} from '../../src/upstream/internals.js';
import { userSays, withSession } from './helpers.js';

describe('isSessionClosing', () => {
  it('is false while the session runs and true by the time the agent exits on close', async () => {
    const during: boolean[] = [];
    let session!: voice.AgentSession;
    class Leaving extends voice.Agent {
      constructor() {
        super({ instructions: 'leaving' });
      }
      override async onExit(): Promise<void> {
        during.push(isSessionClosing(session));
      }
    }
    session = new voice.AgentSession({ llm: new voice.testing.FakeLLM([]) });
    await session.start({ agent: new Leaving() });
    expect(isSessionClosing(session)).toBe(false);
    expect(isSessionClosing(undefined)).toBe(false);
    await session.close();
    expect(during).toEqual([true]);
  });
});

describe('linkedParticipantIdentity', () => {
  it('is undefined for a session without a room (tests/app/room-entry pins a real room)', async () => {
    await withSession({ agent: new voice.Agent({ instructions: 'x' }), replies: [] }, async (s) => {
      expect(linkedParticipantIdentity(s)).toBeUndefined();
      // The field upstream keeps its room I/O under: declared on the session, unset here.
      expect(s._roomIO).toBeUndefined();
    });
  });
});

describe('summarizeChatContext', () => {
  it("asks the model for a summary and puts it in the context's place", async () => {
    const ctx = llm.ChatContext.empty();
    ctx.addMessage({ role: 'user', content: 'my order is 42' });
    ctx.addMessage({ role: 'assistant', content: 'found order 42' });
    const model = new voice.testing.FakeLLM([
      {
        input:
          'Conversation to summarize:\n\n<user>\nmy order is 42\n</user>\n<assistant>\nfound order 42\n</assistant>',
        content: 'The caller asked about order 42.',
      },
    ]);
    const summary = await summarizeChatContext(ctx, model, { keepLastTurns: 0 });
    const texts = summary.items.map((i) => (i.type === 'message' ? i.textContent : i.type));
    expect(texts).toEqual([
      '<chat_history_summary>\nThe caller asked about order 42.\n</chat_history_summary>',
    ]);
  });
});

describe('agentChatContext', () => {
  it("is the agent's own context: what is added there shows in the public copy", () => {
    const agent = new voice.Agent({ instructions: 'x' });
    agentChatContext(agent).addMessage({ role: 'user', content: 'added in place' });
    const texts = agent.chatCtx.items.map((i) => (i.type === 'message' ? i.textContent : ''));
    expect(texts).toContain('added in place');
  });
});

describe('attachSessionToolset', () => {
  it("returns the toolset's executor, ready to run and drain tool calls", async () => {
    await withSession({ agent: new voice.Agent({ instructions: 'x' }), replies: [] }, async (s) => {
      const toolset = llm.AsyncToolset.create({ id: 'pin', tools: [] });
      const executor = attachSessionToolset(toolset, s);
      expect(typeof executor.execute).toBe('function');
      expect(typeof executor.drain).toBe('function');
      await toolset.aclose();
    });
  });
});

describe('onEnterTaskOf', () => {
  it("is the running onEnter of the agent's activity, settling when onEnter returns", async () => {
    const release = new Future<void>();
    class Slow extends voice.Agent {
      constructor() {
        super({ instructions: 'slow' });
      }
      override async onEnter(): Promise<void> {
        await release.await;
      }
    }
    const agent = new Slow();
    expect(onEnterTaskOf(agent)).toBeUndefined();
    await withSession({ agent, replies: [] }, async () => {
      const task = onEnterTaskOf(agent);
      expect(task).toBeDefined();
      release.resolve();
      await expect(task?.result).resolves.toBeUndefined();
    });
  });
});

describe('isOwnerFinishedError', () => {
  it('recognises the error upstream completes a task with when the tool that started it ended', async () => {
    const failed = new Future<unknown>();
    class Orphan extends voice.AgentTask<number> {
      constructor() {
        super({ instructions: 'orphan' });
      }
    }
    const caller = new voice.Agent({
      instructions: 'caller',
      tools: {
        start_orphan: llm.tool({
          description: 'Starts a task and returns without awaiting it.',
          execute: async () => {
            new Orphan().run().catch((error: unknown) => failed.resolve(error));
            return 'started';
          },
        }),
      },
    });
    const replies = [{ input: 'go', toolCalls: [{ name: 'start_orphan', args: {} }] }];
    await withSession({ agent: caller, replies }, async (session) => {
      // The run fails with the same error (the task's failure ends the tool's turn).
      const run = await userSays(session, 'go').catch((error: unknown) => error);
      const error = await failed.await;
      expect(run).toBe(error);
      expect(error).toBeInstanceOf(Error);
      expect(isOwnerFinishedError(error as Error)).toBe(true);
      expect(isOwnerFinishedError(new Error('the program failed'))).toBe(false);
    });
  });
});
