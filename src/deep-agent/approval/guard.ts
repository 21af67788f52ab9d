/**
 * Puts an approval gate in front of sensitive tools: the wrapped tool asks (the caller, or a
 * supervisor) before it runs, runs with the approved — possibly changed — arguments, and
 * otherwise returns a rejection the model can act on, as a normal tool result. The same gate
 * wraps a sub-agent's tools, so delegating never bypasses the policy.
 */
import { EventEmitter } from 'node:events';
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { type Clock, systemClock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { editDistance } from '../../tasks/parsers/correct.js';
import { askCaller } from './caller.js';
import { askCallback, askThroughRecords } from './supervisor.js';
import {
  type ApprovalDecision,
  type ApprovalPolicy,
  type ApprovalRequest,
  guardedNames,
  toolOptions,
} from './types.js';

/** Default longest wait for a supervisor. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;
/** Default most argument changes per approval. */
export const DEFAULT_MAX_CHANGES = 2;

/** One decision, as the gate reports it. */
export interface ApprovalEvent {
  request: ApprovalRequest;
  decision: ApprovalDecision;
  /** Who decided. */
  by: 'caller' | 'supervisor' | 'policy';
  /** The arguments the tool ran with (absent when it did not run). */
  ranWith?: Record<string, unknown>;
}

/** Events of an {@link ApprovalGate}. */
export interface ApprovalGateEvents {
  decision: [ApprovalEvent];
}

/** Says an action in words: "transfer funds (amount: 500, to account: savings)". */
export function describeCall(tool: string, args: Record<string, unknown>): string {
  const parts = Object.entries(args)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const action = tool.replace(/_/g, ' ');
  return parts.length > 0 ? `${action} (${parts.join(', ')})` : action;
}

/**
 * Tools that change the workspace every tool shares. Guarding one while another stays open
 * guards nothing, so a policy must take all of those an agent has, or none.
 */
export const WORKSPACE_WRITERS: ReadonlySet<string> = new Set([
  'write_file',
  'edit_file',
  'delete_file',
  'execute',
  'execute_python',
  'run_script',
]);

/** The policy's tool names, checked: a name that cannot be a tool's fails here. */
function checkedNames(policy: ApprovalPolicy): string[] {
  const tools = policy?.tools as unknown;
  if (tools === null || typeof tools !== 'object') {
    throw new TasklineError(
      'invalid_argument',
      'approval.tools must list the tools that need approval: names, or an object of names to options.',
    );
  }
  const names = guardedNames(policy);
  if (names.length === 0) {
    throw new TasklineError('invalid_argument', 'approval.tools must name at least one tool.');
  }
  for (const name of names) {
    if (typeof name !== 'string' || name.trim() === '' || !/^[A-Za-z0-9_.:-]+$/u.test(name)) {
      const trimmed = typeof name === 'string' ? name.trim() : '';
      throw new TasklineError(
        'invalid_argument',
        `approval.tools has ${JSON.stringify(name)}, which is not a tool name${trimmed && trimmed !== name ? ` (did you mean "${trimmed}"?)` : ''}: names are exact, with no spaces.`,
        { name },
      );
    }
  }
  return names;
}

/** The name in `names` closest to `name` (same letters in another case, or one or two edits away). */
function closest(name: string, names: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const same = names.find((n) => n.toLowerCase() === lower);
  if (same) return same;
  let best: { name: string; d: number } | undefined;
  for (const n of names) {
    const d = editDistance(lower, n.toLowerCase());
    if (d <= 2 && (best === undefined || d < best.d)) best = { name: n, d };
  }
  return best?.name;
}

function zodOf(parameters: unknown): z.ZodType | undefined {
  return parameters instanceof z.ZodType ? parameters : undefined;
}

function hasSession(ctx: unknown): boolean {
  return (
    typeof ctx === 'object' &&
    ctx !== null &&
    'session' in ctx &&
    Boolean((ctx as { session?: unknown }).session)
  );
}

/** The approval policy of one agent (and its sub-agents), with its decisions as events. */
export class ApprovalGate extends EventEmitter<ApprovalGateEvents> {
  readonly policy: ApprovalPolicy;
  readonly names: ReadonlySet<string>;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #maxChanges: number;
  /** Tools this gate already wraps: guarding them again would ask twice. */
  readonly #wrapped = new WeakSet<llm.FunctionTool>();

  constructor(policy: ApprovalPolicy, options: { clock?: Clock } = {}) {
    super();
    const names = checkedNames(policy);
    if (policy.caller === false && !policy.supervisor && !policy.delegations) {
      throw new TasklineError(
        'invalid_argument',
        'approval needs someone to approve: leave caller on, or give a supervisor callback or delegations.',
      );
    }
    this.policy = policy;
    this.names = new Set(names);
    this.#clock = options.clock ?? systemClock;
    this.#timeoutMs = policy.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    this.#maxChanges = policy.maxChanges ?? DEFAULT_MAX_CHANGES;
  }

  /** The clock supervisor waits run on. */
  get clock(): Clock {
    return this.#clock;
  }

  /**
   * The tools with every guarded one wrapped (unguarded ones unchanged), as a list an
   * `Agent` or a sub-agent takes. `origin` says whose tools these are.
   *
   * Throws `invalid_argument` when the policy names a tool that is not among `tools` (a typo
   * would otherwise leave the real tool unguarded) — unless `partial`, for an inherited
   * policy whose tools a sub-agent may not have — and when a guarded tool that writes the
   * workspace sits beside another writer the policy leaves open (guarding `write_file` while
   * `execute` can write the same files guards nothing).
   */
  guard(
    tools: llm.ToolContextLike,
    origin: ApprovalRequest['origin'] = 'voice',
    options: { partial?: boolean } = {},
  ): llm.FunctionTool[] {
    const all = Object.values(llm.toToolContext(tools).functionTools);
    const present = all.map((tool) => tool.name);
    if (!options.partial) this.#assertAllPresent(present);
    this.#assertNoOpenWriter(present);
    return all.map((tool) =>
      this.names.has(tool.name) && !this.#wrapped.has(tool) ? this.#wrap(tool, origin) : tool,
    );
  }

  #assertAllPresent(present: readonly string[]): void {
    const missing = [...this.names].filter((name) => !present.includes(name));
    if (missing.length === 0) return;
    const hints = missing.map((name) => {
      const near = closest(name, present);
      return near ? `"${name}" (did you mean "${near}"?)` : `"${name}"`;
    });
    throw new TasklineError(
      'invalid_argument',
      `approval.tools names ${hints.join(', ')}, which ${missing.length === 1 ? 'is not a tool' : 'are not tools'} of this agent, so nothing would be guarded. Tool names are exact and case-sensitive; this agent's tools are: ${present.join(', ')}.`,
      { unknown: missing, tools: [...present] },
    );
  }

  #assertNoOpenWriter(present: readonly string[]): void {
    const writers = present.filter((name) => WORKSPACE_WRITERS.has(name));
    if (this.policy.subagents === false && present.includes('task')) writers.push('task');
    const guarded = writers.filter((name) => this.names.has(name));
    const open = writers.filter((name) => !this.names.has(name));
    if (guarded.length === 0 || open.length === 0) return;
    throw new TasklineError(
      'invalid_argument',
      `approval.tools guards ${guarded.join(', ')}, but ${open.join(', ')} can change the same files without approval. Add ${open.length === 1 ? 'it' : 'them'} to approval.tools, or turn ${open.length === 1 ? 'it' : 'them'} off.`,
      { guarded, unguarded: open },
    );
  }

  #wrap(tool: llm.FunctionTool, origin: ApprovalRequest['origin']): llm.FunctionTool {
    const schema = zodOf(tool.parameters);
    const describe = toolOptions(this.policy, tool.name).describe;
    const say = (args: Record<string, unknown>) =>
      describe ? describe(args) : describeCall(tool.name, args);
    const wrapped: llm.FunctionTool = {
      ...tool,
      execute: async (args, options) => {
        const request: ApprovalRequest = {
          tool: tool.name,
          args: { ...(args as Record<string, unknown>) },
          toolCallId: options.toolCallId,
          description: say(args as Record<string, unknown>),
          origin,
        };
        const {
          decision,
          by,
          args: finalArgs,
        } = await this.#decide(request, schema, say, hasSession(options.ctx), options.abortSignal);
        if (decision.decision === 'reject') {
          this.emit('decision', { request, decision, by });
          const who =
            by === 'caller'
              ? 'The caller'
              : by === 'supervisor'
                ? 'The supervisor'
                : 'The approval policy';
          return (
            `rejected: ${who} did not approve ${request.description}. ` +
            `${decision.reason ? `Reason: ${decision.reason}. ` : ''}` +
            'Nothing was done. Do not try it again unless asked; tell the caller and ask what they want instead.'
          );
        }
        this.emit('decision', { request, decision, by, ranWith: finalArgs });
        const result = await tool.execute(finalArgs as Parameters<typeof tool.execute>[0], options);
        if (decision.decision !== 'change') return result;
        const note = `(Approved with changes by the ${by}: ${JSON.stringify(decision.changes)}.)`;
        return typeof result === 'string' ? `${note} ${result}` : { note, result };
      },
    };
    this.#wrapped.add(wrapped);
    return wrapped;
  }

  async #decide(
    request: ApprovalRequest,
    schema: z.ZodType | undefined,
    say: (args: Record<string, unknown>) => string,
    voice: boolean,
    signal: AbortSignal | undefined,
  ): Promise<{
    decision: ApprovalDecision;
    by: ApprovalEvent['by'];
    args: Record<string, unknown>;
  }> {
    if (voice && request.origin === 'voice' && this.policy.caller !== false) {
      const answer = await askCaller({
        tool: request.tool,
        args: request.args,
        describe: say,
        ...(schema ? { schema } : {}),
        maxChanges: this.#maxChanges,
      });
      return { decision: answer.decision, by: 'caller', args: answer.args };
    }
    let decision: ApprovalDecision;
    if (this.policy.supervisor) {
      decision = await askCallback(
        this.policy.supervisor,
        request,
        this.#timeoutMs,
        this.#clock,
        signal,
      );
    } else if (this.policy.delegations) {
      decision = await askThroughRecords(
        this.policy.delegations,
        request,
        this.#timeoutMs,
        this.#clock,
        signal,
      );
    } else {
      return {
        decision: {
          decision: 'reject',
          reason:
            "it needs the caller's approval, which a sub-agent cannot ask for; report back what " +
            'you want to do so the main agent can ask the caller',
        },
        by: 'policy',
        args: request.args,
      };
    }
    if (decision.decision !== 'change') return { decision, by: 'supervisor', args: request.args };
    const merged = { ...request.args, ...decision.changes };
    const checked = schema?.safeParse(merged);
    if (checked && !checked.success) {
      return {
        decision: {
          decision: 'reject',
          reason: `the supervisor's changes are not valid arguments (${z.prettifyError(checked.error)})`,
        },
        by: 'supervisor',
        args: request.args,
      };
    }
    return {
      decision,
      by: 'supervisor',
      args: checked?.success ? (checked.data as Record<string, unknown>) : merged,
    };
  }
}
