/**
 * The deep agent for voice: one `voice.Agent` with todos, files, delegation, sandboxed code
 * execution, skills, memory, summarization of long calls, spoken approval of sensitive tools
 * and repair of dangling tool calls — each optional, each bounded — and a system prompt
 * assembled from the parts that are on.
 */
import { llm, voice } from '@livekit/agents';
import { callOf } from '../core/call.js';
import type { Clock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { logLine } from '../core/log.js';
import { TaskManager, type TaskManagerOptions } from '../delegation/manager.js';
import { createDelegationTools } from '../delegation/task-tools.js';
import { ApprovalGate } from './approval/guard.js';
import type { ApprovalPolicy } from './approval/types.js';
import { repairDanglingToolCalls } from './dangling.js';
import {
  DEFAULT_MEMORY_PATH,
  loadMemory,
  type MemoryFile,
  type MemoryOptions,
  memoryPrompt,
} from './memory.js';
import { assemblePrompt } from './prompt.js';
import { type SummarizationOptions, Summarizer } from './summarize.js';
import { LocalShell } from './tools/execute/local.js';
import { type ExecutionOptions, ExecutionSandbox } from './tools/execute/sandbox.js';
import { createExecutionTools } from './tools/execute/tools.js';
import type { FileBackend } from './tools/files/backend.js';
import { CompositeBackend } from './tools/files/backends/composite.js';
import { MemoryBackend } from './tools/files/backends/memory.js';
import { FileToolsState } from './tools/files/state.js';
import { createFileTools, type FileToolsOptions } from './tools/files/tools.js';
import type { Skill } from './tools/skills/skill.js';
import { createSkillTools, loadSkills, skillsPrompt } from './tools/skills/tools.js';
import { createTodoTools, TodoList } from './tools/todos.js';

/** Id of the instructions message upstream keeps at the top of a context (voice/generation.ts). */
const INSTRUCTIONS_ID = 'lk.agent_task.instructions';

/** Options of {@link createDeepAgent}. Everything but `instructions` is optional. */
export interface DeepAgentOptions {
  /** What the agent is for; the assembled prompt starts with it. */
  instructions: string;
  /** Agent id (for scripted models and reports). */
  id?: string;
  /** The agent's model (the session's otherwise). */
  llm?: llm.LLM;
  /** History the agent starts from (e.g. restored after a crash). */
  chatCtx?: llm.ChatContext;
  /** The workspace every tool shares (default: in memory, for this call). */
  backend?: FileBackend;
  /** The app's own tools. */
  tools?: llm.ToolContextLike;
  /** Todo tools (default on); pass a list to read it after the call. */
  todos?: boolean | TodoList;
  /** File tools (default on), with their options. */
  files?: boolean | Omit<FileToolsOptions, 'backend' | 'state'>;
  /** Sub-agents through a TaskManager (default off): a manager, or its options. */
  delegation?: TaskManager | TaskManagerOptions;
  /** Skill folders on the backend (each holds skill folders with a SKILL.md). Default none. */
  skills?: readonly string[];
  /** AGENTS.md memory (default off; `true` for /memories/AGENTS.md on the backend). */
  memory?: boolean | MemoryOptions;
  /** Code execution (default off; `true` for bash and Python sandboxes). */
  execution?: boolean | Omit<ExecutionOptions, 'backend' | 'clock'>;
  /** Tools that need approval before they run (default none). */
  approval?: ApprovalPolicy;
  /** Summarization of long calls (default on, deterministic; `false` to turn off). */
  summarization?: boolean | SummarizationOptions;
  /** Give dangling tool calls a "cancelled" output before each model call (default true). */
  repairToolCalls?: boolean;
  /** Said when the agent starts (after skills and memory are loaded). */
  greeting?: string;
  /** Clock of time limits (default: the call's). */
  clock?: Clock;
}

/** A `voice.Agent` with the deep-agent parts wired in; see {@link createDeepAgent}. */
export class DeepAgent extends voice.Agent {
  /** The workspace every tool shares. */
  readonly backend: FileBackend;
  /** The todo list (when todos are on). */
  readonly todos: TodoList | undefined;
  /** What the file tools have read (memory files are marked read when loaded). */
  readonly fileState: FileToolsState;
  /** The code sandboxes (when execution is on). */
  readonly execution: ExecutionSandbox | undefined;
  /** The sub-agent manager (when delegation is on). */
  readonly manager: TaskManager | undefined;
  /** The approval gate (when approval is on); its `decision` events report every decision. */
  readonly approvals: ApprovalGate | undefined;
  /** Skills loaded by {@link ready} (in place, so the skill tools see them). */
  readonly skills: Skill[] = [];
  /** Memory files loaded by {@link ready}. */
  memory: MemoryFile[] = [];
  /** The summarizer (created when the call starts, when summarization is on). */
  summarizer: Summarizer | undefined;
  /** Problems found while loading skills or memory at the start of a call. */
  readonly loadErrors: Error[] = [];
  readonly #options: DeepAgentOptions;
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(options: DeepAgentOptions, parts: DeepAgentParts) {
    super({
      instructions: parts.prompt(),
      tools: parts.tools,
      ...(options.id ? { id: options.id } : {}),
      ...(options.llm ? { llm: options.llm } : {}),
      ...(options.chatCtx ? { chatCtx: options.chatCtx } : {}),
    });
    this.#options = options;
    this.backend = parts.backend;
    this.todos = parts.todos;
    this.fileState = parts.fileState;
    this.execution = parts.execution;
    this.manager = parts.manager;
    this.approvals = parts.approvals;
    this.skills = parts.skills;
    this.#prompt = parts.prompt;
  }

  readonly #prompt: (extra?: { skills?: string; memory?: string; historyPath?: string }) => string;

  /**
   * Loads skills and memory and puts them in the instructions. Runs once (the agent calls it
   * when it starts); call it earlier to fail fast: an invalid SKILL.md rejects with
   * `invalid_argument` naming the file.
   */
  ready(): Promise<void> {
    this.#ready ??= this.#load();
    return this.#ready;
  }

  async #load(): Promise<void> {
    const options = this.#options;
    if (options.skills && options.skills.length > 0) {
      const loaded = await loadSkills(this.backend, options.skills);
      this.skills.splice(0, this.skills.length, ...loaded);
    }
    if (options.memory) {
      const mem = typeof options.memory === 'object' ? options.memory : {};
      this.memory = await loadMemory(
        this.backend,
        mem.paths ?? [DEFAULT_MEMORY_PATH],
        this.fileState,
      );
    }
    await this.updateInstructions(this.#instructions());
  }

  #instructions(): string {
    const mem = typeof this.#options.memory === 'object' ? this.#options.memory : {};
    return this.#prompt({
      ...(this.skills.length > 0 ? { skills: skillsPrompt(this.skills) } : {}),
      ...(this.#options.memory ? { memory: memoryPrompt(this.memory, mem.maxChars) } : {}),
      ...(this.summarizer ? { historyPath: this.summarizer.historyPath } : {}),
    });
  }

  override async onEnter(): Promise<void> {
    const session = this.session;
    const call = callOf(session);
    if (this.#options.summarization !== false && !this.summarizer) {
      this.summarizer = new Summarizer(
        typeof this.#options.summarization === 'object' ? this.#options.summarization : {},
        {
          backend: this.backend,
          ...(this.todos ? { todos: this.todos } : {}),
          clock: this.#options.clock ?? call.clock,
          callId: call.callId,
        },
      );
    }
    if (this.#options.greeting) session.say(this.#options.greeting);
    await this.#readyOrLogged();
    if (this.summarizer) await this.updateInstructions(this.#instructions());
    session.once(voice.AgentSessionEventTypes.Close, () => {
      void this.close();
    });
    if (this.execution?.prewarmPython) {
      this.execution.warm().catch((err: Error) => {
        logLine('deep-agent', 'warn', `the Python sandbox could not be prewarmed: ${err.message}`);
      });
    }
  }

  /** {@link ready}, but a broken skill or memory file must not end the call: go on without it. */
  async #readyOrLogged(): Promise<void> {
    try {
      await this.ready();
    } catch (err) {
      if (!this.loadErrors.includes(err as Error)) {
        this.loadErrors.push(err as Error);
        logLine(
          'deep-agent',
          'error',
          `deep agent started without skills/memory: ${(err as Error).message}`,
        );
        await this.updateInstructions(this.#instructions());
      }
    }
  }

  override async llmNode(
    chatCtx: llm.ChatContext,
    toolCtx: llm.ToolContext,
    modelSettings: voice.ModelSettings,
  ) {
    // The first reply waits for skills and memory (the greeting does not); the context was
    // built before they were in the instructions, so its instructions message is refreshed.
    await this.#readyOrLogged();
    let ctx = chatCtx;
    const at = ctx.indexById(INSTRUCTIONS_ID);
    const current = String(this.instructions);
    const item = at === undefined ? undefined : ctx.items[at];
    if (at !== undefined && item?.type === 'message' && item.textContent !== current) {
      ctx.items[at] = llm.ChatMessage.create({
        id: INSTRUCTIONS_ID,
        role: 'system',
        content: [current],
        createdAt: item.createdAt,
      });
    }
    if (this.#options.repairToolCalls !== false) repairDanglingToolCalls(ctx);
    if (this.summarizer) {
      const done = await this.summarizer.maybeSummarize(ctx);
      if (done) {
        ctx = done.chatCtx;
        // Keep the agent's own history in step: the same turns out, the summary in.
        const kept = this.chatCtx.items.filter((i) => !done.removedIds.has(i.id));
        const firstKept = kept.findIndex(
          (i) => !(i.type === 'message' && (i.role === 'system' || i.role === 'developer')),
        );
        const at = firstKept < 0 ? kept.length : firstKept;
        kept.splice(at, 0, done.summary);
        await this.updateChatCtx(new llm.ChatContext(kept));
      }
    }
    return voice.Agent.default.llmNode(this, ctx, toolCtx, modelSettings);
  }

  /** Stops the sandboxes (done when the call ends). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.execution?.close();
  }
}

/** What the factory builds before the agent exists. @internal */
export interface DeepAgentParts {
  backend: FileBackend;
  todos: TodoList | undefined;
  fileState: FileToolsState;
  execution: ExecutionSandbox | undefined;
  manager: TaskManager | undefined;
  approvals: ApprovalGate | undefined;
  skills: Skill[];
  tools: llm.FunctionTool[];
  prompt: (extra?: { skills?: string; memory?: string; historyPath?: string }) => string;
}

/** Named function tools from any tool map or list, later ones replacing earlier ones. */
export function toolList(...groups: (llm.ToolContextLike | undefined)[]): llm.FunctionTool[] {
  const byName = new Map<string, llm.FunctionTool>();
  for (const group of groups) {
    if (group === undefined) continue;
    for (const tool of Object.values(llm.toToolContext(group).functionTools)) {
      byName.set(tool.name, tool);
    }
  }
  return [...byName.values()];
}

/** The workspace: the given backend, with a memory backend mounted at /memories/ if given. */
function workspaceOf(options: DeepAgentOptions): FileBackend {
  const base = options.backend ?? new MemoryBackend();
  const mem = typeof options.memory === 'object' ? options.memory : undefined;
  if (!mem?.backend) return base;
  return new CompositeBackend({ default: base, routes: { '/memories/': mem.backend } });
}

/** Builds the parts every deep agent (voice or headless) shares. @internal */
export function buildParts(
  options: DeepAgentOptions,
  origin: 'voice' | { subagent: string },
): DeepAgentParts {
  if (!options || typeof options.instructions !== 'string' || options.instructions.trim() === '') {
    throw new TasklineError(
      'invalid_argument',
      'createDeepAgent needs instructions (what the agent is for).',
    );
  }
  const backend = workspaceOf(options);
  const fileState = new FileToolsState();
  const todos =
    options.todos === false
      ? undefined
      : options.todos instanceof TodoList
        ? options.todos
        : new TodoList();
  const execution = options.execution
    ? new ExecutionSandbox({
        ...(typeof options.execution === 'object' ? options.execution : {}),
        backend,
        ...(options.clock ? { clock: options.clock } : {}),
      })
    : undefined;
  const manager =
    options.delegation instanceof TaskManager
      ? options.delegation
      : options.delegation
        ? new TaskManager({ files: backend, ...options.delegation })
        : undefined;
  const approvals = options.approval
    ? new ApprovalGate(options.approval, options.clock ? { clock: options.clock } : {})
    : undefined;
  const skills: Skill[] = [];
  const fileOptions = typeof options.files === 'object' ? options.files : {};
  const tools = toolList(
    todos ? createTodoTools({ list: todos }) : undefined,
    options.files !== false
      ? createFileTools({ ...fileOptions, backend, state: fileState })
      : undefined,
    manager ? createDelegationTools(manager) : undefined,
    execution ? toolsOf(createExecutionTools(execution)) : undefined,
    options.skills && options.skills.length > 0
      ? toolsOf(createSkillTools({ backend, skills, ...(execution ? { sandbox: execution } : {}) }))
      : undefined,
    options.tools,
  );
  const guarded = approvals ? approvals.guard(tools, origin) : tools;
  // Sub-agents inherit the policy: the same tools are guarded in every headless run.
  if (approvals && manager && options.approval?.subagents !== false) {
    manager.guardSubAgentTools((list, run) =>
      approvals.guard(list, { subagent: run.name }, { partial: true }),
    );
  }
  const shell = execution?.shell;
  const prompt = (extra: { skills?: string; memory?: string; historyPath?: string } = {}) =>
    assemblePrompt({
      instructions: options.instructions,
      todos: todos !== undefined,
      files: options.files !== false,
      ...(shell ? { bash: shell instanceof LocalShell ? 'local' : 'sandbox' } : {}),
      python: execution?.python !== undefined,
      delegation: manager !== undefined,
      ...extra,
      ...(approvals ? { approvalTools: [...approvals.names] } : {}),
    });
  return {
    backend,
    todos,
    fileState,
    execution,
    manager,
    approvals,
    skills,
    tools: guarded,
    prompt,
  };
}

/** The defined entries of a tool map (the execution and skill factories leave some out). */
function toolsOf(map: object): llm.FunctionTool[] {
  const entries = Object.entries(map).filter(([, t]) => t !== undefined);
  return Object.values(llm.toToolContext(Object.fromEntries(entries)).functionTools);
}

/**
 * Creates the deep agent for a call: a `voice.Agent` (a {@link DeepAgent}) with todos and
 * files on by default, and delegation, execution, skills, memory and approval when asked
 * for; long calls are summarized and dangling tool calls repaired by default. Skills and
 * memory load when the agent starts (or on `await agent.ready()`).
 *
 * @example
 * const agent = createDeepAgent({
 *   instructions: 'You are the concierge of Example Bank.',
 *   execution: true,
 *   skills: ['/skills'],
 *   memory: { backend: new SqliteFileStore({ path: 'memory.db', tenant: 'bank', user: caller }) },
 *   approval: { tools: ['transfer_funds'] },
 *   tools: { transfer_funds },
 * });
 */
export function createDeepAgent(options: DeepAgentOptions): DeepAgent {
  return new DeepAgent(options, buildParts(options, 'voice'));
}
