/**
 * A hotel concierge built with createDeepAgent: it keeps notes about each caller in
 * AGENTS.md (on a SQLite store per caller, so they are there on the next call), follows a
 * skill to split a restaurant bill, does the arithmetic in Python in the sandbox, and asks the
 * caller before it charges anything to their room.
 *
 *   npx taskline run examples/concierge          (scripted; OPENAI_API_KEY for a real model)
 *   npx tsx examples/concierge/room.ts start     (a LiveKit room)
 *
 * Notes are kept in CONCIERGE_DB (default: in memory, for this process only), keyed by the
 * caller's number when their trunk presents one.
 */
import { fileURLToPath } from 'node:url';
import { llm } from '@livekit/agents';
import Database from 'better-sqlite3';
import { type CallSetup, defineCallModule } from 'taskline';
import {
  CompositeBackend,
  createDeepAgent,
  type DeepAgent,
  DiskBackend,
  MemoryBackend,
  SqliteFileStore,
} from 'taskline/deep-agent';
import { z } from 'zod/v4';

/**
 * The skills folder, mounted at /skills/ in the workspace (a routed backend sees paths below
 * its route: /skills/tip-calculator/SKILL.md is ./skills/tip-calculator/SKILL.md here), and
 * nothing else of the example is reachable.
 */
export const SKILLS_ROOT = fileURLToPath(new URL('./skills/', import.meta.url));

/** The greeting the concierge opens the call with. */
export const GREETING = 'Good evening, this is the concierge. How can I help?';

const INSTRUCTIONS = [
  'You are the concierge of the Harbor Hotel, on the phone with a guest.',
  'Greet returning guests by the name in your memory. Keep every reply to one or two sentences.',
].join(' ');

/** A charge to a room, as the folio records it. */
export interface RoomCharge {
  room: string;
  amount: number;
  description: string;
}

/** What a finished call leaves behind. */
export interface ConciergeResult {
  charges: RoomCharge[];
  notes: string | undefined;
}

let inMemory: Database.Database | undefined;

/** The notes of one caller: in CONCIERGE_DB, or in one in-memory database for this process. */
function notesFor(user: string): SqliteFileStore {
  const path = process.env.CONCIERGE_DB;
  if (path) return new SqliteFileStore({ path, tenant: 'harbor-hotel', user });
  inMemory ??= new Database(':memory:');
  return new SqliteFileStore({ db: inMemory, tenant: 'harbor-hotel', user });
}

/** One call's concierge: its agent and what it charged. */
export function createConcierge(options: { caller?: string; notes?: SqliteFileStore } = {}) {
  const charges: RoomCharge[] = [];
  const notes = options.notes ?? notesFor(options.caller ?? 'guest');
  const charge_room = llm.tool({
    description: "Charge an amount to the guest's room folio.",
    parameters: z.object({
      room: z
        .string()
        .regex(/^\d{3,4}$/)
        .describe('Room number'),
      amount: z.number().positive().max(5_000).describe('Dollars'),
      description: z.string().describe('What it is for, e.g. "dinner at the Grill"'),
    }),
    execute: async (args) => {
      charges.push(args);
      return `Charged ${args.amount.toFixed(2)} dollars to room ${args.room}.`;
    },
  });
  const agent: DeepAgent = createDeepAgent({
    id: 'concierge',
    instructions: INSTRUCTIONS,
    greeting: GREETING,
    backend: new CompositeBackend({
      default: new MemoryBackend(),
      routes: { '/skills/': new DiskBackend({ root: SKILLS_ROOT }) },
    }),
    skills: ['/skills'],
    memory: { backend: notes },
    execution: { python: { prewarm: true } },
    tools: { charge_room },
    approval: {
      tools: {
        charge_room: {
          describe: (a) => `charge ${Number(a.amount).toFixed(2)} dollars to room ${a.room}`,
        },
      },
    },
  });
  return {
    agent,
    charges,
    result: async (): Promise<ConciergeResult> => ({
      charges,
      notes: await notes.read('/AGENTS.md').catch(() => undefined),
    }),
  };
}

/** The concierge as a CallModule: the demo, `npx taskline run` and the room entry start it. */
export default defineCallModule<{ charges: RoomCharge[] }>({
  name: 'concierge',
  description:
    'A hotel concierge (createDeepAgent): notes per caller in AGENTS.md, a bill-splitting skill, Python for the arithmetic, and a spoken yes before a room charge.',
  createCall(setup?: CallSetup) {
    const call = createConcierge(setup?.callerNumber ? { caller: setup.callerNumber } : {});
    return { agent: call.agent, result: () => ({ charges: call.charges }) };
  },
  demo: () => import('./demo.js'),
});
