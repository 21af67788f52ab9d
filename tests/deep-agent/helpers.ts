import * as openai from '@livekit/agents-plugin-openai';
import { afterEach } from 'vitest';
import type { DeepAgent } from '../../src/deep-agent/agent.js';
import {
  type FakeOpenAIOptions,
  type FakeOpenAIServer,
  type OpenAIChatRequest,
  type OpenAIReply,
  type OpenAIResponder,
  startFakeOpenAI,
} from '../../src/testing/openai-server.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const servers: FakeOpenAIServer[] = [];
const callers: SimulatedCaller[] = [];

afterEach(async () => {
  await Promise.all(callers.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A deep agent on a call with the real openai plugin against the local server. */
export async function startDeepCall(
  agent: DeepAgent,
  script: OpenAIReply[] | OpenAIResponder,
  options: FakeOpenAIOptions & { callId?: string } = {},
): Promise<{ server: FakeOpenAIServer; caller: SimulatedCaller }> {
  const server = await startFakeOpenAI(script, options);
  servers.push(server);
  const model = new openai.LLM({ model: 'gpt-4o-mini', baseURL: server.url, apiKey: 'test' });
  const caller = await SimulatedCaller.start({
    agent,
    llm: model,
    ...(options.callId ? { callId: options.callId } : {}),
    sessionOptions: { connOptions: { llmConnOptions: { maxRetry: 0 } }, maxToolSteps: 8 },
  });
  callers.push(caller);
  return { server, caller };
}

/** The system messages of a request, joined. */
export function systemText(request: OpenAIChatRequest | undefined): string {
  return (request?.messages ?? [])
    .filter((m) => m.role === 'system')
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');
}

/** The tool results of a request by tool name (from the ids of earlier tool calls). */
export function toolResults(request: OpenAIChatRequest | undefined): Record<string, string[]> {
  const messages = request?.messages ?? [];
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  const out: Record<string, string[]> = {};
  for (const m of messages) {
    if (m.role !== 'tool') continue;
    const name = names.get(m.tool_call_id ?? '') ?? '?';
    const list = out[name] ?? [];
    list.push(typeof m.content === 'string' ? m.content : '');
    out[name] = list;
  }
  return out;
}
