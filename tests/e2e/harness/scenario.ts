/**
 * An example's call scenarios (its `*.scenario.yaml`, as `taskline test` runs them) played
 * as calls through the real server: the test caller speaks each `say`, presses each `keys`
 * and hangs up on `hangup`, waiting like a person for the agent to finish before the next
 * turn; what the agent said is read from its transcription stream and the typed outcome
 * from its worker. Only what a caller and the worker's result can observe is checked here:
 * `said`, `never_said` and `outcome`. The rest of a scenario's expectations (tool calls,
 * model calls, checkpoints, visited steps, latencies) need the session in the test's own
 * process and are covered by `taskline test`; they are returned as `unchecked`.
 */
import { loadScenario } from '../../../src/scenarios/load.js';
import { asList, deepMatch, firstMismatch, textMatcher } from '../../../src/scenarios/match.js';
import { durationMs, type ExpectationSpec, type TurnSpec } from '../../../src/scenarios/schema.js';
import type { CallerOptions, TestCaller } from './caller.js';
import type { LiveKitSuite } from './index.js';
import type { Worker } from './workers.js';

const OBSERVABLE = new Set(['said', 'never_said', 'outcome']);

/** What playing one scenario in a room found. */
export interface RoomScenarioReport {
  name: string;
  room: string;
  failures: string[];
  /** Expectations not observable from a caller's side (see the module). */
  unchecked: string[];
  agentLines: string[];
  result: unknown;
}

/** Plays the scenario in `file` as a call to `worker`'s agent; never throws for a failed expectation. */
export async function playScenario(
  lk: LiveKitSuite,
  worker: Worker,
  file: string,
  room: string,
  caller: CallerOptions,
): Promise<RoomScenarioReport> {
  const scenario = loadScenario(file);
  const { spec } = scenario;
  const failures: string[] = [];
  const unchecked = new Set<string>();
  const call = await lk.call(room, worker.agentName, caller);
  if (!overlaps(spec.turns[0])) {
    await call.heard(/./, 120_000);
    await call.quiet();
  }
  for (const [index, turn] of spec.turns.entries()) {
    const from = call.agentLines.length;
    const after = overlapAfter(turn);
    if (after !== undefined) {
      // Into the agent's prompt: the greeting still playing, or the one the last turn brought.
      await call.speaking();
      await new Promise((r) => setTimeout(r, after));
    }
    await perform(call, turn);
    const expect = typeof turn === 'string' ? undefined : turn.expect;
    if (expect) {
      for (const key of Object.keys(expect)) if (!OBSERVABLE.has(key)) unchecked.add(key);
      failures.push(
        ...(await checkLines(call, expect, from)).map(
          (f) => `${scenario.file}:${scenario.turnLines[index]}: ${f}`,
        ),
      );
    }
    if (call.disconnectReason !== undefined) break;
    if (overlaps(spec.turns[index + 1])) continue;
    await call.afterTurn();
  }
  if (call.disconnectReason === undefined) await call.leave();
  const outcome = await worker.result(room, 60_000);
  const final = spec.expect;
  if (final) {
    for (const key of Object.keys(final)) if (!OBSERVABLE.has(key)) unchecked.add(key);
    const where = `${scenario.file}:${scenario.expectLine ?? 1}`;
    failures.push(...(await checkLines(call, final, 0)).map((f) => `${where}: ${f}`));
    if (final.outcome !== undefined && !deepMatch(outcome.result, final.outcome)) {
      failures.push(
        `${where}: expected the outcome to match, but ${firstMismatch(outcome.result, final.outcome)}; it was ${JSON.stringify(outcome.result)}`,
      );
    }
  }
  return {
    name: scenario.name,
    room,
    failures,
    unchecked: [...unchecked],
    agentLines: call.agentLines.map((l) => l.text),
    result: outcome.result,
  };
}

/** How long into the agent's prompt a turn that talks (or keys) over it starts, if it does. */
function overlapAfter(turn: TurnSpec | undefined): number | undefined {
  if (!turn || typeof turn === 'string') return undefined;
  if ('barge_in' in turn) return turn.after === undefined ? 500 : durationMs(turn.after);
  if ('keys' in turn && turn.after !== undefined) return durationMs(turn.after);
  return undefined;
}

function overlaps(turn: TurnSpec | undefined): boolean {
  return overlapAfter(turn) !== undefined;
}

async function perform(call: TestCaller, turn: TurnSpec): Promise<void> {
  if (turn === 'hangup' || 'hangup' in turn) return call.leave();
  if ('say' in turn) return call.say(turn.say);
  if ('keys' in turn)
    return call.press(turn.keys, turn.gap === undefined ? 250 : durationMs(turn.gap));
  if ('silence' in turn) {
    await new Promise((r) => setTimeout(r, durationMs(turn.silence)));
    return;
  }
  return call.say(turn.barge_in);
}

/**
 * `said` lines are waited for (bounded: the agent answers in its own time); `never_said` is
 * checked over what was said by then.
 */
async function checkLines(call: TestCaller, expect: ExpectationSpec, from: number) {
  const failures: string[] = [];
  for (const text of asList(expect.said)) {
    const m = textMatcher(text);
    try {
      await call.heard(m, 45_000, from);
    } catch {
      failures.push(
        `expected the agent to say ${m.source}; it said ${JSON.stringify(call.agentLines.slice(from).map((l) => l.text))}`,
      );
    }
  }
  for (const text of asList(expect.never_said)) {
    const m = textMatcher(text);
    const hit = call.agentLines.slice(from).find((l) => m.test(l.text));
    if (hit)
      failures.push(`expected the agent never to say ${m.source}, but it said "${hit.text}"`);
  }
  return failures;
}
