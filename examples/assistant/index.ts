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
import {
  createDelegationTools,
  createFileTools,
  createTodoTools,
  defineCallModule,
  defineSubAgent,
  MemoryBackend,
  TaskManager,
  type TaskSnapshot,
  type Todo,
  TodoList,
} from 'taskline';
import { ScriptedLLM } from 'taskline/testing';
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
 * Builds one call. The researcher runs on `subagentModel` — by default OpenAI when
 * OPENAI_API_KEY is set, the scripted researcher otherwise.
 */
export function createAssistantCall(
  options: { subagentModel?: llm.LLM; docsDir?: string } = {},
): AssistantCall {
  const files = new MemoryBackend();
  const todos = new TodoList();
  const subagentModel =
    options.subagentModel ??
    (process.env.OPENAI_API_KEY
      ? new openai.LLM({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' })
      : scriptedResearcher());
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

const QUESTION = 'What does the refund policy say about opened items?';

/** The scripted researcher: searches once, then answers from what it found. */
export function scriptedResearcher(): ScriptedLLM {
  return new ScriptedLLM({
    respond: (req) => {
      if (!req.lastToolOutput) {
        return { toolCalls: [{ name: 'search_docs', args: { query: req.lastUserText ?? '' } }] };
      }
      const found = req.lastToolOutput.output;
      return {
        say: found.includes('Opened items can be returned within 14 days')
          ? 'Opened items can be returned within 14 days of delivery, refunded as store credit. Unopened items have 30 days for a full refund. Source: refunds.md.'
          : `I could not find that in the documents. Closest match: ${found.slice(0, 120)}`,
      };
    },
  });
}

/** The scripted voice model of the demo call. */
export function scriptedAssistantModel(): ScriptedLLM {
  return new ScriptedLLM().for(Assistant, [
    {
      toolCalls: [
        {
          name: 'task',
          args: {
            subagent_type: 'researcher',
            description: 'Check refunds for opened items',
            prompt: `${QUESTION} Answer in two sentences a caller can hear.`,
            run_in_background: true,
          },
        },
      ],
    },
    { say: "Sure, I'm looking into that now. Anything else while I check?" },
    {
      toolCalls: [
        { name: 'write_todos', args: { todos: [{ content: 'Call the bank', status: 'pending' }] } },
      ],
    },
    { say: 'Done: "Call the bank" is on your list.' },
    (req) => {
      const instructions = req.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.text)
        .join('\n');
      return {
        say: instructions.includes('within 14 days')
          ? 'About your refund question: opened items can come back within 14 days, as store credit. Unopened ones have 30 days for a full refund.'
          : 'I could not find the refund details, sorry.',
      };
    },
    { say: "You're welcome. Have a good day!" },
  ]);
}

/** The assistant as a CallModule: the demo, `npx taskline run` and the room entry start it. */
export default defineCallModule<AssistantResult>({
  name: 'assistant',
  description:
    'A voice assistant with todos, files and a background researcher: it looks things up while the conversation goes on.',
  createCall() {
    const call = createAssistantCall();
    return { agent: call.agent, result: () => call.result() };
  },
  createScriptedModel: () => scriptedAssistantModel(),
  demoScript: [
    { say: `Hi! ${QUESTION}` },
    { say: 'Thanks. While you look, add "call the bank" to my todo list.' },
    { silence: 1_000 },
    { say: "Great, that's all." },
  ],
});
