// Pins async tools: the first ctx.update(...) returns to the model at once while the tool keeps
// running; the final return value is later inserted into the owning agent's context and spoken
// through a deferred reply once the session is idle.
//
// These tests drive turns with session.generateReply, not session.run: in 1.9.0, once a session
// has used session.run(), every later async-tool final value (or second update) throws an
// unhandled TypeError, and a run active at that moment never settles (livekit/agents-js#2354,
// pinned by the last test in this file).
import { Future, llm, voice } from '@livekit/agents';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isAssistantText, labels, userSays, whenItemAdded, withSession } from './helpers.js';

function buildLookupAgent(options: { updateTemplate?: string } = {}) {
  const release = new Future<void>();
  const state = { finished: false };
  const agent = new voice.Agent({
    instructions: 'caller',
    toolHandling: {
      asyncOptions: {
        ...(options.updateTemplate ? { updateTemplate: options.updateTemplate } : {}),
        // Let FakeLLM key the deferred reply on the last line of its system prompt.
        replyAtTailTemplate: 'instructions:async_result',
        replyMaybeCoveredTemplate: 'instructions:async_result',
      },
    },
    tools: {
      lookup: llm.tool({
        description: 'Look up the order status.',
        execute: async (_args, { ctx }) => {
          await ctx.update('searching');
          await release.await;
          state.finished = true;
          return 'shipped';
        },
      }),
    },
  });
  return { agent, release, state };
}

/** Lets the tool finish and waits for its deferred reply, so no tool is left running at close. */
async function finishLookup(session: voice.AgentSession, release: Future<void>): Promise<void> {
  const spoken = whenItemAdded(session, (item) => isAssistantText(item, 'Your order has shipped.'));
  release.resolve();
  await spoken;
}

const replies = [
  { input: 'where is my order', toolCalls: [{ name: 'lookup', args: {} }] },
  { input: '"lookup: searching"', content: 'Still looking.' },
  { input: 'instructions:async_result', content: 'Your order has shipped.' },
];

describe('async tools (ctx.update)', () => {
  it('returns the first update to the model at once while the tool keeps running', async () => {
    const { agent, release, state } = buildLookupAgent({
      updateTemplate: '{functionName}: {message}',
    });

    await withSession({ agent, replies }, async (session) => {
      const handle = session.generateReply({ userInput: 'where is my order' });
      await handle.waitForPlayout();

      expect(state.finished).toBe(false);
      const seen = labels(agent.chatCtx.items);
      expect(seen).toEqual(
        expect.arrayContaining([
          'call lookup',
          'output lookup: "lookup: searching"',
          'assistant: Still looking.',
        ]),
      );
      const call = agent.chatCtx.items.find((i) => i.type === 'function_call');
      expect(call?.type === 'function_call' && call.extra.__livekit_agents_tool_non_blocking).toBe(
        true,
      );

      await finishLookup(session, release);
    });
  });

  it('renders a string update through the default template that tells the model to wait', async () => {
    const { agent, release } = buildLookupAgent();
    const output = new Future<string>();

    await withSession({ agent, replies }, async (session) => {
      session.on(voice.AgentSessionEventTypes.FunctionToolsExecuted, (ev) => {
        const first = ev.functionCallOutputs[0];
        if (first) output.resolve(first.output);
      });
      const handle = session.generateReply({ userInput: 'where is my order' });
      await handle.waitForPlayout();

      const text: unknown = JSON.parse(await output.await);
      expect(text).toBe(
        'The tool `lookup` has updated, message: searching\n' +
          "The task is still running, so DON'T make up or give information not included in the message above.",
      );
      await finishLookup(session, release);
    });
  });

  it('inserts the final value as a <callId>_final call/output pair and speaks a deferred reply', async () => {
    const { agent, release, state } = buildLookupAgent({
      updateTemplate: '{functionName}: {message}',
    });

    await withSession({ agent, replies }, async (session) => {
      const handle = session.generateReply({ userInput: 'where is my order' });
      await handle.waitForPlayout();
      expect(state.finished).toBe(false);

      await finishLookup(session, release);

      expect(state.finished).toBe(true);
      const items = agent.chatCtx.items;
      const finalCall = items.find(
        (i) => i.type === 'function_call' && i.callId.endsWith('_final'),
      );
      const finalOutput = items.find(
        (i) => i.type === 'function_call_output' && i.callId.endsWith('_final'),
      );
      expect(finalCall?.type === 'function_call' && finalCall.callId).toBe('fake_call_0_final');
      // Unlike a normal tool output, the final string is inserted raw (not JSON-encoded).
      expect(finalOutput?.type === 'function_call_output' && finalOutput.output).toBe('shipped');

      // The first call/update, the interim reply, then the final pair and the deferred reply.
      const seen = labels(items);
      const order = [
        seen.indexOf('call lookup'),
        seen.indexOf('output lookup: "lookup: searching"'),
        seen.indexOf('assistant: Still looking.'),
        seen.lastIndexOf('call lookup'),
        seen.indexOf('output lookup: shipped'),
        seen.indexOf('assistant: Your order has shipped.'),
      ];
      expect(order.every((index) => index >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(new Set(order).size).toBe(order.length);
      // The session history gets the same final pair.
      expect(labels(session.history.items)).toContain('output lookup: shipped');
    });
  });
});

// A NON-cancellable running async tool is awaited by close() (ToolExecutor.drain) with no upper
// bound, only a warning after 5 s; that cannot be pinned without waiting, so only the
// cancellable path is pinned here.
describe('async tools at session close', () => {
  it('aborts a CANCELLABLE running async tool and session.close() resolves without its result', async () => {
    const aborted = new Future<void>();
    const agent = new voice.Agent({
      instructions: 'caller',
      toolHandling: { asyncOptions: { updateTemplate: '{functionName}: {message}' } },
      tools: {
        lookup: llm.tool({
          description: 'Look up the order status.',
          flags: llm.ToolFlag.CANCELLABLE,
          execute: async (_args, { ctx, abortSignal }) => {
            await ctx.update('searching');
            await new Promise<void>((resolve) => {
              abortSignal.addEventListener('abort', () => resolve(), { once: true });
            });
            aborted.resolve();
            return 'too late';
          },
        }),
      },
    });

    await withSession({ agent, replies }, async (session) => {
      const handle = session.generateReply({ userInput: 'where is my order' });
      await handle.waitForPlayout();
      expect(aborted.done).toBe(false);

      await expect(session.close()).resolves.toBeUndefined();

      expect(aborted.done).toBe(true);
      expect(labels(session.history.items)).not.toContain('output lookup: too late');
    });
  }, 10_000);
});

describe('known upstream bug livekit/agents-js#2354 (async tool result after session.run())', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('still hands RunResult._watchHandle a bare promise; flip this test when upstream fixes it', async () => {
    const { agent, release } = buildLookupAgent({ updateTemplate: '{functionName}: {message}' });
    const watchErrors: unknown[] = [];
    const original = voice.testing.RunResult.prototype._watchHandle;
    vi.spyOn(voice.testing.RunResult.prototype, '_watchHandle').mockImplementation(function (
      this: voice.testing.RunResult,
      handle,
    ) {
      try {
        original.call(this, handle);
      } catch (error) {
        // Swallowed here so the bug is observed instead of surfacing as an unhandled rejection.
        watchErrors.push(error);
      }
    });

    await withSession({ agent, replies }, async (session) => {
      const first = await userSays(session, 'where is my order');
      first.expect.containsMessage({ role: 'assistant' });

      await finishLookup(session, release);

      expect(watchErrors).toHaveLength(1);
      expect(String(watchErrors[0])).toContain('addDoneCallback is not a function');
    });
  });
});
