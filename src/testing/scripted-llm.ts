import { APIError, DEFAULT_API_CONNECT_OPTIONS, llm, type voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import { type Clock, systemClock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { ensureLogger } from '../core/log.js';
import { installRunResultWorkaround } from './upstream-workarounds.js';

/** A tool call a scripted step makes. `args` defaults to `{}`. */
export interface ScriptedToolCall {
  name: string;
  args?: Record<string, unknown>;
}

/** What the model does on one turn: say text, call tools, both, or fail. */
export interface ScriptStep {
  say?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * Makes this LLM call fail, to test how a bot copes with a model outage. A string fails
   * before anything is streamed (not retryable); a {@link ScriptedFailure} can fail after
   * streaming `say` and `toolCalls`, and be retryable (upstream's LLMStream retries the call,
   * which plays the next step of the script).
   */
  fail?: string | ScriptedFailure;
  /**
   * The model takes this long (ms, on the call's clock) before it answers: a sub-agent's
   * research that is not instant, so what happens meanwhile in the call can be tested.
   */
  afterMs?: number;
}

/** A scripted model failure (see {@link ScriptStep.fail}). */
export interface ScriptedFailure {
  message: string;
  /** Stream the step's `say` and `toolCalls` first, then fail (an error mid-stream). */
  afterOutput?: boolean;
  /** Whether the error is retryable (`APIError.retryable`). Default false. */
  retryable?: boolean;
}

/** A message of a recorded request, flattened for assertions. */
export interface RecordedMessage {
  role: string;
  text: string;
}

/** Everything the scripted model was asked on one call, for assertions. */
export interface ScriptedRequest {
  /** Id of the agent or task that was active (`session.currentAgent.id`), or "unbound". */
  agentId: string;
  /** The active agent itself, when the model is bound to a session. */
  agent: voice.Agent | undefined;
  /** 0-based index of this call among the calls made for the same script key. */
  turn: number;
  /** Script key that answered ("*" for the fallback), or undefined if unscripted. */
  key: string | undefined;
  /** Chat messages sent to the model (system, user, assistant), in order. */
  messages: RecordedMessage[];
  /** Names of the function tools offered. */
  tools: string[];
  /** Output of the last tool call, when the request follows a tool result. */
  lastToolOutput?: { name: string; output: string; value: unknown; isError: boolean };
  /** Text of the last user message. */
  lastUserText?: string;
}

/** A step, or a function that decides the step from the request (the escape hatch). */
export type ScriptEntry = ScriptStep | ((request: ScriptedRequest) => ScriptStep);

/** Identifies whose turns a script answers: an agent/task id or its class. */
// biome-ignore lint/suspicious/noExplicitAny: constructor parameter lists vary per agent class
export type AgentKey = string | (abstract new (...args: any[]) => voice.Agent);

/** Options for {@link ScriptedLLM}. */
export interface ScriptedLLMOptions {
  /**
   * Answers any request no script covers (after per-agent scripts and "*"). Return
   * undefined to leave it unscripted (recorded, and reported by `assertComplete`).
   */
  respond?: (request: ScriptedRequest) => ScriptStep | undefined;
  /**
   * The clock `afterMs` waits on. Default: the bound session's call clock (a virtual one in
   * the simulated caller), else the wall clock. A model no session is bound to (a headless
   * sub-agent's) can be given its manager's: `clock: () => manager.clock`.
   */
  clock?: Clock | (() => Clock);
}

interface ScriptQueue {
  key: AgentKey;
  label: string;
  entries: ScriptEntry[];
  consumed: number;
}

/**
 * An upstream `llm.LLM` that plays a script keyed by the active agent or task and the
 * turn index within it — never by prompt text — so a scripted conversation survives
 * prompt edits. It records every request and reports unconsumed steps.
 *
 * @example
 * const model = new ScriptedLLM()
 *   .for(FrontDesk, [{ toolCalls: [{ name: 'book', args: { day: 'mon' } }] }, { say: 'Booked.' }])
 *   .for('get_email_task', [{ toolCalls: [{ name: 'submit', args: { email: 'a@b.co' } }] }]);
 */
export class ScriptedLLM extends llm.LLM {
  private readonly queues: ScriptQueue[] = [];
  private readonly respondFn: ScriptedLLMOptions['respond'];
  private readonly clockOption: ScriptedLLMOptions['clock'];
  private session: voice.AgentSession | undefined;
  private callCounter = 0;
  /** Every request received, in order. */
  readonly requests: ScriptedRequest[] = [];
  /** Requests no script answered. */
  readonly unscripted: ScriptedRequest[] = [];

  constructor(options: ScriptedLLMOptions = {}) {
    super();
    // A scripted model means a session in a test or script: make sure one can be built.
    ensureLogger();
    installRunResultWorkaround();
    this.respondFn = options.respond;
    this.clockOption = options.clock;
  }

  /** @internal the clock a step's `afterMs` waits on. */
  _clock(): Clock {
    const given = this.clockOption;
    if (given) return typeof given === 'function' ? given() : given;
    return this.session ? callOf(this.session).clock : systemClock;
  }

  override label(): string {
    return 'taskline.ScriptedLLM';
  }

  override get model(): string {
    return 'scripted';
  }

  /** Appends steps answered while `key` (an agent/task id or class, or "*") is active. */
  for(key: AgentKey, steps: ScriptEntry[]): this {
    const existing = this.queues.find((q) => q.key === key);
    if (existing) existing.entries.push(...steps);
    else this.queues.push({ key, label: keyLabel(key), entries: [...steps], consumed: 0 });
    return this;
  }

  /** Tells the model which session's current agent decides the script. */
  bind(session: voice.AgentSession): this {
    this.session = session;
    return this;
  }

  /** Requests answered while the given agent id (or class) was active. */
  requestsFor(key: AgentKey): ScriptedRequest[] {
    return this.requests.filter((r) => (r.agent ? matches(key, r.agent) : r.agentId === key));
  }

  /** Throws, listing every step never consumed and every request no script answered. */
  assertComplete(): void {
    const left = this.queues
      .filter((q) => q.consumed < q.entries.length)
      .map((q) => `${q.label}: ${q.entries.length - q.consumed} step(s) never used`);
    const extra = this.unscripted.map(
      (r) => `unscripted call #${r.turn} while ${r.agentId} was active`,
    );
    if (left.length || extra.length) {
      throw new TasklineError(
        'script_mismatch',
        `The scripted model did not run as written:\n  ${[...left, ...extra].join('\n  ')}`,
        { left, extra },
      );
    }
  }

  override chat({
    chatCtx,
    toolCtx,
    connOptions = DEFAULT_API_CONNECT_OPTIONS,
  }: {
    chatCtx: llm.ChatContext;
    toolCtx?: llm.ToolContextLike;
    connOptions?: typeof DEFAULT_API_CONNECT_OPTIONS;
  }): llm.LLMStream {
    return new ScriptedStream(this, { chatCtx, toolCtx, connOptions });
  }

  /** @internal decides one step; used by the stream. */
  _decide(chatCtx: llm.ChatContext, toolNames: string[]): ScriptStep | undefined {
    const agent = this.currentAgent();
    const request: ScriptedRequest = {
      agentId: agent?.id ?? 'unbound',
      agent,
      turn: 0,
      key: undefined,
      tools: toolNames,
      ...describeContext(chatCtx),
    };
    const queue = this.pickQueue(agent);
    let step: ScriptStep | undefined;
    if (queue) {
      request.turn = queue.consumed;
      request.key = queue.label;
      const entry = queue.entries[queue.consumed++]!;
      this.requests.push(request);
      step = typeof entry === 'function' ? entry(request) : entry;
    } else {
      request.turn = this.unscripted.length;
      this.requests.push(request);
      step = this.respondFn?.(request);
      if (!step) this.unscripted.push(request);
    }
    return step;
  }

  /** @internal a fresh, unique tool call id. */
  _nextCallId(): string {
    this.callCounter += 1;
    return `call_scripted_${this.callCounter}`;
  }

  private currentAgent(): voice.Agent | undefined {
    if (!this.session) return undefined;
    try {
      return this.session.currentAgent;
    } catch {
      return undefined;
    }
  }

  private pickQueue(agent: voice.Agent | undefined): ScriptQueue | undefined {
    const open = (q: ScriptQueue) => q.consumed < q.entries.length;
    if (agent) {
      const byId = this.queues.find((q) => typeof q.key === 'string' && q.key === agent.id);
      if (byId && open(byId)) return byId;
      if (!byId) {
        const byClass = this.queues.find((q) => typeof q.key !== 'string' && matches(q.key, agent));
        if (byClass && open(byClass)) return byClass;
        if (byClass) return undefined;
      } else {
        return undefined;
      }
    }
    const fallback = this.queues.find((q) => q.key === '*');
    return fallback && open(fallback) ? fallback : undefined;
  }
}

class ScriptedStream extends llm.LLMStream {
  private readonly scripted: ScriptedLLM;

  constructor(
    scripted: ScriptedLLM,
    params: {
      chatCtx: llm.ChatContext;
      toolCtx?: llm.ToolContextLike;
      connOptions: typeof DEFAULT_API_CONNECT_OPTIONS;
    },
  ) {
    super(scripted, params);
    this.scripted = scripted;
  }

  protected override async run(): Promise<void> {
    const toolNames = Object.keys(this.toolCtx?.functionTools ?? {});
    const step = this.scripted._decide(this.chatCtx, toolNames);
    if (!step) return;
    const failure =
      typeof step.fail === 'string'
        ? { message: step.fail }
        : (step.fail satisfies ScriptedFailure | undefined);
    const fail = () =>
      new APIError(`scripted failure: ${failure?.message}`, {
        retryable: failure?.retryable ?? false,
      });
    if (step.afterMs !== undefined && step.afterMs > 0) {
      await this.scripted._clock().sleep(step.afterMs, this.abortController.signal);
    }
    if (failure && !failure.afterOutput) throw fail();
    if (step.say) {
      this.queue.put({ id: 'scripted', delta: { role: 'assistant', content: step.say } });
    }
    if (step.toolCalls?.length) {
      const calls = step.toolCalls.map((tc) =>
        llm.FunctionCall.create({
          callId: this.scripted._nextCallId(),
          name: tc.name,
          args: JSON.stringify(tc.args ?? {}),
        }),
      );
      this.queue.put({ id: 'scripted', delta: { role: 'assistant', toolCalls: calls } });
    }
    if (failure) throw fail();
  }
}

function matches(key: AgentKey, agent: voice.Agent): boolean {
  return typeof key === 'string' ? key === agent.id || key === '*' : agent instanceof key;
}

function keyLabel(key: AgentKey): string {
  return typeof key === 'string' ? key : key.name;
}

function describeContext(
  chatCtx: llm.ChatContext,
): Pick<ScriptedRequest, 'messages' | 'lastToolOutput' | 'lastUserText'> {
  const messages: RecordedMessage[] = [];
  let lastToolOutput: ScriptedRequest['lastToolOutput'];
  let lastUserText: string | undefined;
  for (const item of chatCtx.items) {
    if (item.type === 'message') {
      const text = item.textContent ?? '';
      messages.push({ role: item.role, text });
      if (item.role === 'user') lastUserText = text;
      lastToolOutput = undefined;
    } else if (item.type === 'function_call_output') {
      lastToolOutput = {
        name: item.name,
        output: item.output,
        value: parseJson(item.output),
        isError: item.isError,
      };
    }
  }
  return { messages, lastToolOutput, lastUserText };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
