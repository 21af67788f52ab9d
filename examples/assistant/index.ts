/**
 * A voice assistant with a todo list, scratch files and a background "researcher"
 * sub-agent that searches a folder of company documents. Asked a question it cannot answer
 * from memory, it says it will look into it, keeps chatting, and speaks the findings when
 * they are ready.
 *
 *   npx taskline run examples/assistant          (scripted; OPENAI_API_KEY for a real model)
 *   npx tsx examples/assistant/room.ts start     (a LiveKit room)
 */
import { fileURLToPath } from 'node:url';
import { type llm, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { type CallInstance, defineCallModule } from 'taskline';
import {
  createFileTools,
  createTodoTools,
  MemoryBackend,
  type Todo,
  TodoList,
} from 'taskline/deep-agent';
import {
  createDelegationTools,
  defineSubAgent,
  TaskManager,
  type TaskSnapshot,
} from 'taskline/delegation';
import { createDocsTools } from './search.js';

/** Where the researcher's documents live. */
export const DOCS_DIR = fileURLToPath(new URL('./docs/', import.meta.url));

/** The greeting the assistant opens the call with. */
export const GREETING = 'Hi, this is your assistant. What can I do for you?';

const INSTRUCTIONS = [
  'You are a friendly voice assistant on a phone call. Keep every reply to one or two short sentences.',
  'You keep a todo list for the caller (write_todos) and notes in files.',
  'For questions about our policies, shipping, warranty or opening hours, delegate to the',
  'researcher with the task tool and run_in_background true: tell the caller you are looking',
  'into it and keep helping with other things; the findings come back to you by themselves.',
].join(' ');

/** The researcher sub-agent: searches the documents folder and answers in speakable sentences. */
export function researcherAgent(options: { model?: llm.LLM; docsDir?: string } = {}) {
  return defineSubAgent({
    name: 'researcher',
    description:
      'Searches the company documents (refunds, shipping, warranty, opening hours) and answers a question from them.',
    instructions: [
      'You research one question in the company documents with search_docs and read_doc.',
      'Answer in at most three short sentences a person can say on the phone, facts only,',
      'and name the document you used.',
    ].join(' '),
    tools: createDocsTools({ root: options.docsDir ?? DOCS_DIR }),
    ...(options.model ? { llm: options.model } : {}),
    maxTurns: 8,
  });
}

/** The assistant the caller talks to. */
export class Assistant extends voice.Agent {
  constructor(tools: llm.ToolContextLike) {
    super({ instructions: INSTRUCTIONS, tools });
  }

  override async onEnter(): Promise<void> {
    this.session.say(GREETING);
  }
}

/** What a finished call leaves behind. */
export interface AssistantResult {
  todos: readonly Todo[];
  tasks: Array<
    Pick<TaskSnapshot, 'id' | 'description' | 'status' | 'delivery'> & {
      summary?: string;
      resultPath?: string;
    }
  >;
}

/** One call's assistant: its agent, its task manager, and its files and todos. */
export interface AssistantCall {
  agent: Assistant;
  manager: TaskManager;
  files: MemoryBackend;
  todos: TodoList;
  result(): AssistantResult;
}

/**
 * Builds one call. The researcher runs on `subagentModel`, OpenAI (`OPENAI_MODEL`, default
 * gpt-4o-mini) by default; the demo passes its scripted researcher (see `demo.ts`).
 */
export function createAssistantCall(
  options: { subagentModel?: llm.LLM; docsDir?: string } = {},
): AssistantCall {
  const files = new MemoryBackend();
  const todos = new TodoList();
  const subagentModel =
    options.subagentModel ??
    // The key is read when the call starts: the plugin's defaults read it once, on import.
    new openai.LLM({
      model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
      apiKey: process.env.OPENAI_API_KEY,
    });
  const manager = new TaskManager({
    subagents: [
      researcherAgent({
        model: subagentModel,
        ...(options.docsDir ? { docsDir: options.docsDir } : {}),
      }),
    ],
    generalPurpose: { llm: subagentModel },
    files,
    releaseLine: () => "I'm looking into that now. Anything else while I check?",
  });
  const agent = new Assistant({
    ...createTodoTools({ list: todos }),
    ...createFileTools({ backend: files }),
    ...createDelegationTools(manager),
  });
  return {
    agent,
    manager,
    files,
    todos,
    result: () => ({
      todos: todos.items,
      tasks: manager.list().map((t) => ({
        id: t.id,
        description: t.description,
        status: t.status,
        delivery: t.delivery,
        ...(t.result ? { summary: t.result.summary } : {}),
        ...(t.result?.resultPath ? { resultPath: t.result.resultPath } : {}),
      })),
    }),
  };
}

/** The module's view of a call: its agent and its result. */
export function toCallInstance(call: AssistantCall): CallInstance<AssistantResult> {
  return { agent: call.agent, result: () => call.result() };
}

/** The assistant as a CallModule: the demo, `npx taskline run` and the room entry start it. */
export default defineCallModule<AssistantResult>({
  name: 'assistant',
  description:
    'A voice assistant with todos, files and a background researcher: it looks things up while the conversation goes on.',
  createCall() {
    return toCallInstance(createAssistantCall());
  },
  demo: () => import('./demo.js'),
});
