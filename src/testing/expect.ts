import { isDeepStrictEqual } from 'node:util';
import type { voice } from '@livekit/agents';
import { TasklineError } from '../core/errors.js';
import type { AgentKey, ScriptedLLM } from './scripted-llm.js';
import type { SimulatedCaller, TranscriptLine } from './simulated-caller.js';

/** A recorded tool call, as found in the session history. */
export interface RecordedToolCall {
  name: string;
  args: Record<string, unknown>;
  output?: string;
  isError?: boolean;
}

/**
 * Assertions that read like the call ("the agent said…", "task X was visited"), for any
 * test runner: each throws a TasklineError (`expectation_failed`) that shows what did
 * happen, and returns the expectation for chaining.
 */
export class CallExpectation {
  constructor(
    private readonly caller: SimulatedCaller,
    private readonly model?: ScriptedLLM,
  ) {}

  /** Some agent line equals `text` (a string) or matches it (a RegExp). */
  agentSaid(text: string | RegExp): this {
    const lines = this.caller.agentLines;
    if (!lines.some((l) => (typeof text === 'string' ? l === text : text.test(l)))) {
      this.fail(`the agent to say ${String(text)}`, `it said:\n${quote(lines)}`);
    }
    return this;
  }

  /** No agent line contains `text` (e.g. a PIN that must never be spoken). */
  agentNeverSaid(text: string | RegExp): this {
    const hit = this.caller.agentLines.find((l) =>
      typeof text === 'string' ? l.includes(text) : text.test(l),
    );
    if (hit !== undefined) this.fail(`the agent never to say ${String(text)}`, `it said "${hit}"`);
    return this;
  }

  /** A tool called `name` ran, with arguments containing `args` (deep, partial). */
  toolCalled(name: string, args?: Record<string, unknown>): this {
    const calls = this.toolCalls();
    const found = calls.some((c) => c.name === name && (!args || containsDeep(c.args, args)));
    if (!found) {
      const seen = calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`);
      this.fail(
        `a call of ${name}${args ? ` with ${JSON.stringify(args)}` : ''}`,
        `calls: ${seen.join(', ') || 'none'}`,
      );
    }
    return this;
  }

  /** The agent or task with this id became active during the call. */
  visited(agentId: string): this {
    if (!this.caller.visited.includes(agentId)) {
      this.fail(
        `${agentId} to be visited`,
        `visited: ${this.caller.visited.join(' → ') || 'none'}`,
      );
    }
    return this;
  }

  /** The scripted model was never called while `key` (a task id or class) was active. */
  noModelCallWhile(key: AgentKey): this {
    if (!this.model) {
      throw new TasklineError(
        'invalid_state',
        'noModelCallWhile() needs the ScriptedLLM: pass it to expectCall(caller, model).',
      );
    }
    const calls = this.model.requestsFor(key);
    if (calls.length > 0) {
      this.fail(
        `no model call while ${typeof key === 'string' ? key : key.name} was active`,
        `${calls.length} call(s), the first after: ${calls[0]?.lastUserText ?? '(no user text)'}`,
      );
    }
    return this;
  }

  /** The transcript, as "role: text" lines, equals `lines` exactly. */
  transcriptEquals(lines: string[]): this {
    const actual = this.caller.transcript.map(formatLine);
    if (!isDeepStrictEqual(actual, lines)) {
      this.fail(`the transcript\n${quote(lines)}`, `it was\n${quote(actual)}`);
    }
    return this;
  }

  /** Every tool call in the session history, in order. */
  toolCalls(): RecordedToolCall[] {
    return toolCallsOf(this.caller.session);
  }

  private fail(expected: string, actual: string): never {
    throw new TasklineError('expectation_failed', `Expected ${expected}, but ${actual}`);
  }
}

/** Every tool call in a session's history, in order, with its output once it has one. */
export function toolCallsOf(session: voice.AgentSession): RecordedToolCall[] {
  const calls: RecordedToolCall[] = [];
  const byId = new Map<string, RecordedToolCall>();
  for (const item of session.history.items) {
    if (item.type === 'function_call') {
      const call: RecordedToolCall = { name: item.name, args: parseArgs(item.args) };
      calls.push(call);
      byId.set(item.callId, call);
    } else if (item.type === 'function_call_output') {
      const call = byId.get(item.callId);
      if (call) {
        call.output = item.output;
        call.isError = item.isError;
      }
    }
  }
  return calls;
}

/** Starts call expectations on a simulated call (pass the ScriptedLLM for model checks). */
export function expectCall(caller: SimulatedCaller, model?: ScriptedLLM): CallExpectation {
  return new CallExpectation(caller, model);
}

/** A transcript line as "agent: …" / "caller: …", the form `transcriptEquals` compares. */
export function formatLine(line: TranscriptLine): string {
  const text = line.via === 'dtmf' ? `[keys ${line.text}]` : line.text;
  const heard = line.heard === undefined ? '' : `  [heard: ${line.heard || '(nothing)'}]`;
  return `${line.role}: ${text}${heard}`;
}

function quote(lines: readonly string[]): string {
  return lines.map((l) => `  | ${l}`).join('\n') || '  (nothing)';
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function containsDeep(actual: unknown, expected: unknown): boolean {
  if (typeof expected !== 'object' || expected === null) return isDeepStrictEqual(actual, expected);
  if (typeof actual !== 'object' || actual === null) return false;
  if (Array.isArray(expected)) return isDeepStrictEqual(actual, expected);
  return Object.entries(expected).every(([k, v]) =>
    containsDeep((actual as Record<string, unknown>)[k], v),
  );
}
