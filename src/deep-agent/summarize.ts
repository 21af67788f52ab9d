/**
 * Summarization of long calls. When the chat context's estimated size passes a fraction of
 * the model's window, the older turns are written to the backend (appended to
 * `/conversation_history/<call>.md`, never dropped: no save, no summary) and replaced by one
 * summary message; the recent turns stay verbatim. The summary is deterministic by default
 * (who said what, cut to fit) with a model-written one optional; either way it ends with what
 * must survive: the results of tool calls (the values captured so far) and the todo list.
 */
import { llm } from '@livekit/agents';
import type { Clock } from '../core/clock.js';
import { TasklineError } from '../core/errors.js';
import { type FileBackend, FileError } from './tools/files/backend.js';
import type { TodoList } from './tools/todos.js';

/** Default model window, in tokens. */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 128_000;
/** Default fraction of the window at which older turns are summarized. */
export const DEFAULT_TRIGGER_FRACTION = 0.75;
/** Default fraction of the window kept verbatim (the most recent turns). */
export const DEFAULT_KEEP_FRACTION = 0.25;
/** Default longest summary, in characters. */
export const DEFAULT_MAX_SUMMARY_CHARS = 6_000;
/** Where full histories are offloaded. */
export const DEFAULT_HISTORY_DIR = '/conversation_history';
/** Prefix of summary message ids. */
export const SUMMARY_ID_PREFIX = 'taskline_summary_';

/** Options of summarization. */
export interface SummarizationOptions {
  /** The model's context window in tokens (default 128,000). */
  contextWindowTokens?: number;
  /** Summarize when the estimate passes this fraction of the window (default 0.75). */
  trigger?: number;
  /** Keep this fraction of the window of recent turns verbatim (default 0.25). */
  keep?: number;
  /** A model to write the summary (default: none, a deterministic summary). */
  model?: llm.LLM;
  /** Longest time the model may take (default 15 s); then the deterministic summary is used. */
  modelTimeoutMs?: number;
  /** Longest summary in characters (default 6,000). */
  maxSummaryChars?: number;
  /** Folder of the offloaded histories (default /conversation_history). */
  historyDir?: string;
}

/** The estimated size of a chat item, in tokens (about four characters each). */
export function itemTokens(item: llm.ChatItem): number {
  return Math.ceil(itemText(item).length / 4) + 4;
}

/** The estimated size of a chat context, in tokens. */
export function estimateTokens(chatCtx: llm.ChatContext): number {
  return chatCtx.items.reduce((n, item) => n + itemTokens(item), 0);
}

function itemText(item: llm.ChatItem): string {
  switch (item.type) {
    case 'message':
      return item.textContent ?? '';
    case 'function_call':
      return `${item.name}(${item.args})`;
    case 'function_call_output':
      return item.output;
    default:
      return '';
  }
}

/** One line of the transcript for an item, or undefined for items without words. */
function transcriptLine(item: llm.ChatItem): string | undefined {
  if (item.type === 'message') {
    const text = (item.textContent ?? '').trim();
    if (!text) return undefined;
    const who = item.role === 'user' ? 'Caller' : item.role === 'assistant' ? 'Assistant' : 'Note';
    return `${who}: ${text}`;
  }
  if (item.type === 'function_call') return `Tool call: ${item.name} ${item.args}`;
  if (item.type === 'function_call_output') {
    return `Tool result (${item.name || item.callId})${item.isError ? ' [error]' : ''}: ${item.output}`;
  }
  return undefined;
}

function cut(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= chars ? flat : `${flat.slice(0, chars - 1)}…`;
}

/** The split of a context into instructions, older turns and the recent turns kept. */
interface Split {
  head: llm.ChatItem[];
  older: llm.ChatItem[];
  recent: llm.ChatItem[];
}

/** Where the kept tail starts: at a caller message, never between a call and its output. */
function splitFor(items: readonly llm.ChatItem[], keepTokens: number): Split | undefined {
  let start = 0;
  while (start < items.length) {
    const it = items[start]!;
    const system = it.type === 'message' && (it.role === 'system' || it.role === 'developer');
    if (!system || it.id.startsWith(SUMMARY_ID_PREFIX)) break;
    start++;
  }
  let budget = keepTokens;
  let cutAt = items.length;
  for (let i = items.length - 1; i > start; i--) {
    budget -= itemTokens(items[i]!);
    if (budget < 0) break;
    cutAt = i;
  }
  // Move the boundary back to the nearest caller message at or before it.
  let boundary = cutAt;
  while (boundary > start) {
    const it = items[boundary];
    if (it && it.type === 'message' && it.role === 'user') break;
    boundary--;
  }
  if (boundary <= start) return undefined;
  return {
    head: items.slice(0, start),
    older: items.slice(start, boundary),
    recent: items.slice(boundary),
  };
}

/** What must survive a summary: tool results (captured values) and the todo list. */
function survivors(older: readonly llm.ChatItem[], todos: TodoList | undefined): string {
  const parts: string[] = [];
  const results = older.filter(
    (i): i is llm.FunctionCallOutput => i.type === 'function_call_output' && !i.isError,
  );
  if (results.length > 0) {
    parts.push('Results of tool calls so far (values captured in this call):');
    for (const r of results) parts.push(`- ${r.name || r.callId}: ${cut(r.output, 300)}`);
  }
  if (todos && todos.items.length > 0) {
    parts.push('Current todo list:', todos.render());
  }
  return parts.join('\n');
}

/** The deterministic summary: earlier lines, newest kept first when it must be cut. */
export function deterministicSummary(older: readonly llm.ChatItem[], maxChars: number): string {
  const lines: string[] = [];
  for (const item of older) {
    if (item.type === 'message' && item.id.startsWith(SUMMARY_ID_PREFIX)) {
      lines.push(`Earlier summary: ${cut(item.textContent ?? '', 1500)}`);
      continue;
    }
    if (item.type === 'function_call_output') continue; // listed with the survivors
    const line = transcriptLine(item);
    if (line) lines.push(cut(line, 240));
  }
  const kept: string[] = [];
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (size + line.length + 1 > maxChars) {
      kept.unshift(`(${i + 1} earlier lines are only in the saved transcript)`);
      break;
    }
    kept.unshift(line);
    size += line.length + 1;
  }
  return kept.join('\n');
}

async function modelSummary(
  model: llm.LLM,
  older: readonly llm.ChatItem[],
  maxChars: number,
  timeoutMs: number,
  clock: Clock,
): Promise<string | undefined> {
  const transcript = older
    .map(transcriptLine)
    .filter((l): l is string => l !== undefined)
    .join('\n')
    .slice(-60_000);
  const ctx = new llm.ChatContext();
  ctx.addMessage({
    role: 'system',
    content:
      'Summarize this part of a phone call for the assistant who continues it. Keep every ' +
      'fact, number, name, decision and open request; drop greetings and filler. Plain ' +
      `sentences, at most ${Math.floor(maxChars / 2)} characters.`,
  });
  ctx.addMessage({ role: 'user', content: transcript });
  const stream = model.chat({ chatCtx: ctx });
  const timer = clock.setTimer(timeoutMs, () => stream.close());
  try {
    const response = await stream.collect();
    const text = response.text.trim();
    return text === '' ? undefined : text.slice(0, maxChars);
  } catch {
    return undefined;
  } finally {
    timer.cancel();
  }
}

/** The result of one summarization. */
export interface Summarized {
  /** The new context: instructions, the summary, the recent turns. */
  chatCtx: llm.ChatContext;
  /** Ids of the items replaced by the summary. */
  removedIds: Set<string>;
  /** The summary message. */
  summary: llm.ChatMessage;
  /** Where the full history was saved. */
  historyPath: string;
  /** Whether the model wrote the summary. */
  byModel: boolean;
}

/** Summarizes long call contexts for one agent (see the module comment). */
export class Summarizer {
  readonly windowTokens: number;
  readonly triggerTokens: number;
  readonly keepTokens: number;
  readonly #options: SummarizationOptions;
  readonly #backend: FileBackend;
  readonly #todos: TodoList | undefined;
  readonly #clock: Clock;
  readonly #historyPath: string;
  #parts = 0;

  constructor(
    options: SummarizationOptions,
    deps: { backend: FileBackend; todos?: TodoList; clock: Clock; callId: string },
  ) {
    const window = options.contextWindowTokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS;
    const trigger = options.trigger ?? DEFAULT_TRIGGER_FRACTION;
    const keep = options.keep ?? DEFAULT_KEEP_FRACTION;
    if (!(window >= 1000) || !(trigger > 0 && trigger <= 1) || !(keep > 0 && keep < trigger)) {
      throw new TasklineError(
        'invalid_argument',
        'summarization needs contextWindowTokens ≥ 1000, 0 < trigger ≤ 1 and 0 < keep < trigger.',
      );
    }
    this.windowTokens = window;
    this.triggerTokens = Math.floor(window * trigger);
    this.keepTokens = Math.floor(window * keep);
    this.#options = options;
    this.#backend = deps.backend;
    this.#todos = deps.todos;
    this.#clock = deps.clock;
    const safe = deps.callId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120) || 'call';
    this.#historyPath = `${options.historyDir ?? DEFAULT_HISTORY_DIR}/${safe}.md`;
  }

  /** Where this call's full history is offloaded. */
  get historyPath(): string {
    return this.#historyPath;
  }

  /** Summarizes when the context is over the trigger; undefined when it is not (or cannot be). */
  async maybeSummarize(chatCtx: llm.ChatContext): Promise<Summarized | undefined> {
    if (estimateTokens(chatCtx) <= this.triggerTokens) return undefined;
    const split = splitFor(chatCtx.items, this.keepTokens);
    if (!split || split.older.length === 0) return undefined;
    const part = ++this.#parts;
    if (!(await this.#offload(split.older, part))) {
      this.#parts--;
      return undefined;
    }
    const maxChars = this.#options.maxSummaryChars ?? DEFAULT_MAX_SUMMARY_CHARS;
    const byModel = this.#options.model
      ? await modelSummary(
          this.#options.model,
          split.older,
          maxChars,
          this.#options.modelTimeoutMs ?? 15_000,
          this.#clock,
        )
      : undefined;
    const body = byModel ?? deterministicSummary(split.older, maxChars);
    const keep = survivors(split.older, this.#todos);
    const text = [
      `[Summary of the earlier part of this call. The full transcript is saved at ${this.#historyPath}: read_file it when you need an exact detail.]`,
      body,
      keep,
    ]
      .filter((s) => s !== '')
      .join('\n');
    const first = split.older[0]!;
    const summary = llm.ChatMessage.create({
      id: `${SUMMARY_ID_PREFIX}${part}`,
      role: 'system',
      content: text,
      createdAt: first.createdAt,
    });
    const out = new llm.ChatContext([...split.head, summary, ...split.recent]);
    return {
      chatCtx: out,
      removedIds: new Set(split.older.map((i) => i.id)),
      summary,
      historyPath: this.#historyPath,
      byModel: byModel !== undefined,
    };
  }

  /** Appends the older turns to the history file; false when it could not be saved. */
  async #offload(older: readonly llm.ChatItem[], part: number): Promise<boolean> {
    const lines = older.map(transcriptLine).filter((l): l is string => l !== undefined);
    const section = [
      `## Part ${part} (saved ${new Date(this.#clock.now()).toISOString()})`,
      '',
      ...lines,
      '',
    ].join('\n');
    try {
      let before = '';
      try {
        before = await this.#backend.read(this.#historyPath);
      } catch (err) {
        if (!(err instanceof FileError && err.code === 'not_found')) throw err;
        before = '# Conversation history\n\n';
      }
      await this.#backend.write(this.#historyPath, `${before}${section}\n`);
      return true;
    } catch {
      // Nothing is dropped that was not saved: the context stays as it is this turn.
      return false;
    }
  }
}
