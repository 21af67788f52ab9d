import { pathToFileURL } from 'node:url';
import { llm, voice } from '@livekit/agents';
import { z } from 'zod';
import { ScriptedLLM, type ScriptStep } from '../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../src/testing/simulated-caller.js';
import { argNumber, compareTimings, interleave, type Sample, stopwatch } from './interleave.js';
import type { BenchResult } from './result.js';

/** Sizes of the testing-kit benchmark. */
export interface KitBenchOptions {
  /** Caller turns per conversation (default 20). */
  turns?: number;
  /** Timed rounds; the median is reported (default 15). */
  runs?: number;
  /** Untimed warm-up rounds (default 2). */
  warmup?: number;
}

/** Every `TOOL_EVERY`-th turn the model calls a tool before it answers. */
const TOOL_EVERY = 5;

/** The agent of both conversations: answers, and looks something up now and then. */
class Concierge extends voice.Agent {
  constructor() {
    super({
      instructions: 'You are a concierge. Answer briefly.',
      tools: {
        lookup: llm.tool({
          description: 'Look up an answer.',
          parameters: z.object({ n: z.number() }),
          execute: async ({ n }) => `result ${n}`,
        }),
      },
    });
  }
}

interface Turn {
  user: string;
  tool: boolean;
  reply: string;
}

function conversation(turns: number): Turn[] {
  return Array.from({ length: turns }, (_, i) => {
    const tool = i % TOOL_EVERY === TOOL_EVERY - 1;
    return { user: `question ${i}`, tool, reply: tool ? `Found result ${i}.` : `Answer ${i}.` };
  });
}

/** The conversation as upstream's FakeLLM script (keyed by user text and tool output). */
function fakeScript(turns: Turn[]): voice.testing.FakeLLMResponse[] {
  return turns.flatMap((t, i) =>
    t.tool
      ? [
          { input: t.user, toolCalls: [{ name: 'lookup', args: { n: i } }] },
          { input: JSON.stringify(`result ${i}`), content: t.reply },
        ]
      : [{ input: t.user, content: t.reply }],
  );
}

/** The same conversation as a ScriptedLLM script (keyed by agent class and turn). */
function scriptedSteps(turns: Turn[]): ScriptStep[] {
  return turns.flatMap((t, i) =>
    t.tool
      ? [{ toolCalls: [{ name: 'lookup', args: { n: i } }] }, { say: t.reply }]
      : [{ say: t.reply }],
  );
}

/** Plain upstream: AgentSession + FakeLLM, one `session.run` per caller turn. */
async function upstreamTrial(turns: Turn[], transcripts: string[][]): Promise<Sample> {
  const session = new voice.AgentSession({ llm: new voice.testing.FakeLLM(fakeScript(turns)) });
  const lines: string[] = [];
  session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (ev) => {
    if (ev.item.type === 'message' && ev.item.role === 'assistant') {
      lines.push(ev.item.textContent ?? '');
    }
  });
  await session.start({ agent: new Concierge() });
  const watch = stopwatch();
  for (const t of turns) await session.run({ userInput: t.user }).wait();
  const time = watch.stop(turns.length);
  transcripts.push(lines);
  return { ...time, cleanup: () => session.close() };
}

/** The testing kit: ScriptedLLM + SimulatedCaller, one `say` per caller turn. */
async function kitTrial(turns: Turn[], transcripts: string[][]): Promise<Sample> {
  const model = new ScriptedLLM().for(Concierge, scriptedSteps(turns));
  const caller = await SimulatedCaller.start({ agent: new Concierge(), llm: model });
  const watch = stopwatch();
  for (const t of turns) await caller.say(t.user);
  const time = watch.stop(turns.length);
  transcripts.push(caller.agentLines);
  return { ...time, cleanup: () => caller.close() };
}

function verify(transcripts: string[][], expected: string[], who: string): string[] {
  const want = JSON.stringify(expected);
  const bad = transcripts.filter((t) => JSON.stringify(t) !== want);
  return bad.length
    ? [`MISMATCH: ${bad.length} ${who} conversation(s) differ, e.g. ${JSON.stringify(bad[0])}`]
    : [];
}

/**
 * A scripted conversation (default 20 turns, a tool call every 5th) on a plain upstream
 * session driven with `session.run` and FakeLLM, vs the same conversation through the
 * testing kit (ScriptedLLM + SimulatedCaller.say): time per turn; ratio = the kit's overhead.
 */
export async function runKitBench(opts: KitBenchOptions = {}): Promise<BenchResult[]> {
  const turns = conversation(opts.turns ?? 20);
  const runs = opts.runs ?? 15;
  const warmup = opts.warmup ?? 2;
  const seen = { upstream: [] as string[][], kit: [] as string[][] };
  const timing = await interleave(
    {
      upstream: () => upstreamTrial(turns, seen.upstream),
      kit: () => kitTrial(turns, seen.kit),
    },
    { warmup, runs },
  );
  const expected = turns.map((t) => t.reply);
  const notes = [
    `${turns.length} turns per conversation (a tool call every ${TOOL_EVERY}th), median of ${runs} interleaved rounds after ${warmup} warm-up`,
    'baseline: voice.AgentSession + voice.testing.FakeLLM driven with session.run',
    ...verify(seen.upstream, expected, 'upstream'),
    ...verify(seen.kit, expected, 'kit'),
  ];
  const { upstream, kit } = timing;
  const what = 'ScriptedLLM + SimulatedCaller.say vs plain session.run + FakeLLM';
  return [
    compareTimings(
      { name: 'kit.conversation', metric: `wall time per turn: ${what}`, notes },
      kit,
      upstream,
      'wall',
    ),
    compareTimings(
      { name: 'kit.conversation.cpu', metric: `CPU time per turn: ${what}`, notes },
      kit,
      upstream,
      'cpu',
    ),
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { initializeLogger } = await import('@livekit/agents');
  initializeLogger({ pretty: false, level: 'silent' });
  const results = await runKitBench({
    turns: argNumber('turns'),
    runs: argNumber('runs'),
    warmup: argNumber('warmup'),
  });
  console.log(JSON.stringify(results, null, 2));
}
