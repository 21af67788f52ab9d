/**
 * An example's call scenarios (its `*.scenario.yaml`, as `taskline test` runs them) played
 * as calls through the real server: the caller speaks each `say`, presses each `keys` and
 * hangs up on `hangup`, waiting like a person for the agent to finish before the next turn;
 * what the agent said is read from its transcription stream and the typed outcome (and any
 * transfer) from its worker. The caller is a room participant ({@link roomLine}) or a SIP
 * phone calling through livekit-sip ({@link phoneLine}, with a hidden observer in the room
 * reading the agent). Only what a caller and the worker's result can observe is checked
 * here: `said`, `never_said`, `outcome` and `transferred`; the rest of a scenario's
 * expectations (tool and model calls, checkpoints, visited steps, latencies) need the
 * session in the test's own process and are covered by `taskline test`; they are returned
 * as `unchecked`. Every call is also checked for what a caller always sees: keys marked
 * `mask` never appear in a worker log line, the agent's voice was heard, and a call the bot
 * ended (no transfer, no hang-up) ended by the room being deleted.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadScenario } from '../../../src/scenarios/load.js';
import { asList, deepMatch, firstMismatch, textMatcher } from '../../../src/scenarios/match.js';
import { durationMs, type ExpectationSpec, type TurnSpec } from '../../../src/scenarios/schema.js';
import { parseDestination } from '../../../src/telephony/sip-address.js';
import type { TransferResult } from '../../../src/telephony/transfer.js';
import type { CallerOptions, TestCaller } from './caller.js';
import type { LiveKitSuite } from './index.js';
import type { Worker } from './workers.js';

const OBSERVABLE = new Set(['said', 'never_said', 'outcome', 'transferred']);

/** A caller on a call: how they act, and where the agent is heard. */
export interface ScenarioLine {
  /** The room of the call. */
  readonly room: string;
  /** Reads the agent: its lines, its state, its voice (the caller, or an observer). */
  readonly ears: TestCaller;
  say(text: string): Promise<void>;
  press(keys: string, gapMs: number): Promise<void>;
  hangup(): Promise<void>;
  /** True once the call is over for the caller (hung up, or ended by the other side). */
  readonly ended: boolean;
  /** Waits (bounded) until the bot ended the call for the caller: room deleted, or a BYE. */
  endedByBot(timeoutMs: number): Promise<void>;
}

/** What playing one scenario in a room found. */
export interface RoomScenarioReport {
  name: string;
  room: string;
  failures: string[];
  /** Expectations not observable from a caller's side (see the module). */
  unchecked: string[];
  agentLines: string[];
  result: unknown;
  transfer?: TransferResult;
}

/** A room participant as the caller: the same participant speaks, keys and listens. */
export function roomLine(
  lk: LiveKitSuite,
  agentName: string,
  room: string,
  caller: CallerOptions,
): () => Promise<ScenarioLine> {
  return async () => {
    const call = await lk.call(room, agentName, caller);
    return {
      room,
      ears: call,
      say: (text) => call.say(text),
      press: (keys, gapMs) => call.press(keys, gapMs),
      hangup: () => call.leave(),
      get ended() {
        return call.disconnectReason !== undefined;
      },
      async endedByBot(timeoutMs) {
        await call.disconnected(timeoutMs);
        if (!call.roomDeleted) {
          throw new Error(
            `the caller was disconnected (${call.disconnectReason}), not by the room's deletion`,
          );
        }
      },
    };
  };
}

/**
 * The scenario files of `examples/<example>`: those whose outcome is a transfer
 * (`expect.transferred` true or a destination) or the others.
 */
export function exampleScenarios(example: string, options: { transfers: boolean }): string[] {
  const dir = `examples/${example}`;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.scenario.yaml'))
    .filter(
      (f) => Boolean(loadScenario(join(dir, f)).spec.expect?.transferred) === options.transfers,
    );
}

/** Plays the scenario in `file` on the line `connect` opens; never throws for a failed expectation. */
export async function playScenario(
  lk: LiveKitSuite,
  worker: Worker,
  file: string,
  room: string,
  caller: CallerOptions,
): Promise<RoomScenarioReport> {
  return playScenarioOn(worker, file, roomLine(lk, worker.agentName, room, caller), lk);
}

/** {@link playScenario} on any line (a room participant, a SIP phone). */
export async function playScenarioOn(
  worker: Worker,
  file: string,
  connect: () => Promise<ScenarioLine>,
  lk: LiveKitSuite,
): Promise<RoomScenarioReport> {
  const scenario = loadScenario(file);
  const { spec } = scenario;
  const failures: string[] = [];
  const unchecked = new Set<string>();
  const masked = new Set<string>();
  const line = await connect();
  const ears = line.ears;
  let hungUp = false;
  if (!overlaps(spec.turns[0])) {
    await ears.heard(/./, 120_000);
    await ears.quiet();
  }
  for (const [index, turn] of spec.turns.entries()) {
    const from = ears.agentLines.length;
    const after = overlapAfter(turn);
    if (after !== undefined) {
      // Into the agent's prompt: the greeting still playing, or the one the last turn brought.
      await ears.speaking();
      await new Promise((r) => setTimeout(r, after));
    }
    if (typeof turn !== 'string' && 'keys' in turn && turn.mask) masked.add(turn.keys);
    if (turn === 'hangup' || (typeof turn !== 'string' && 'hangup' in turn)) hungUp = true;
    await perform(line, turn);
    const expect = typeof turn === 'string' ? undefined : turn.expect;
    if (expect) {
      for (const key of Object.keys(expect)) if (!OBSERVABLE.has(key)) unchecked.add(key);
      failures.push(
        ...(await checkLines(ears, expect, from)).map(
          (f) => `${scenario.file}:${scenario.turnLines[index]}: ${f}`,
        ),
      );
    }
    if (line.ended) break;
    if (overlaps(spec.turns[index + 1])) continue;
    await ears.afterTurn();
  }
  // The bot ends most calls itself (its result is printed when its session closes, at the
  // goodbye); a call it leaves open is ended by the caller hanging up, as a person would.
  const endedByBot =
    !hungUp &&
    (line.ended ||
      (await worker.result(line.room, 5_000).then(
        () => true,
        () => false,
      )));
  if (!line.ended && !endedByBot) await line.hangup();
  const outcome = await worker.result(line.room, 90_000);
  const final = spec.expect;
  const where = `${scenario.file}:${scenario.expectLine ?? 1}`;
  if (final) {
    for (const key of Object.keys(final)) if (!OBSERVABLE.has(key)) unchecked.add(key);
    failures.push(...(await checkLines(ears, final, 0)).map((f) => `${where}: ${f}`));
    if (final.outcome !== undefined && !deepMatch(outcome.result, final.outcome)) {
      failures.push(
        `${where}: expected the outcome to match, but ${firstMismatch(outcome.result, final.outcome)}; it was ${JSON.stringify(outcome.result)}`,
      );
    }
    if (final.transferred !== undefined) {
      const problem = transferMismatch(final.transferred, outcome.transfer);
      if (problem) failures.push(`${where}: ${problem}`);
    }
  }
  // What every call shows a caller, whatever the scenario says.
  for (const keys of masked) {
    const leak = worker.lines.find((l) =>
      loggedText(l).some((t) => new RegExp(`\\b${keys}\\b`).test(t)),
    );
    if (leak) failures.push(`${where}: masked keys ${keys} appear in a worker log line: ${leak}`);
  }
  if (ears.agentLines.length > 0 && ears.agentAudioMs === 0) {
    failures.push(`${where}: the agent's lines were transcribed but its voice was never heard`);
  }
  if (endedByBot && !outcome.transfer?.ok) {
    try {
      await line.endedByBot(30_000);
      await lk.roomGone(line.room);
    } catch (error) {
      failures.push(`${where}: the bot did not end the call: ${(error as Error).message}`);
    }
  }
  if (!line.ended) await line.hangup();
  return {
    name: scenario.name,
    room: line.room,
    failures,
    unchecked: [...unchecked],
    agentLines: ears.agentLines.map((l) => l.text),
    result: outcome.result,
    transfer: outcome.transfer,
  };
}

/**
 * The text a worker log line carries: every string in a JSON line (a masked value leaks as
 * text — a transcript, the keys — never as a number like a `delay` of 1111 ms), or the whole
 * line when it is not JSON.
 */
export function loggedText(line: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return [line];
  }
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(parsed);
  return texts;
}

/**
 * `transferred` as the worker reported it. A destination matches when it names the same
 * number (the suite dials "+15550100" as `sip:+15550100@<the desk phone>`).
 */
function transferMismatch(
  expected: NonNullable<ExpectationSpec['transferred']>,
  actual: TransferResult | undefined,
): string | undefined {
  const seen = actual
    ? `${actual.ok ? 'a' : 'a failed'} ${actual.mode} transfer to ${actual.to}${actual.ok ? '' : ` (${actual.reason})`}`
    : 'no transfer';
  if (expected === false)
    return actual?.ok ? `expected no transfer, but there was ${seen}` : undefined;
  if (!actual?.ok) return `expected a transfer, but there was ${seen}`;
  if (expected === true) return undefined;
  if (
    (expected.to && numberOf(expected.to) !== numberOf(actual.to)) ||
    (expected.mode && expected.mode !== actual.mode)
  ) {
    return `expected a transfer matching ${JSON.stringify(expected)}, but there was ${seen}`;
  }
  return undefined;
}

function numberOf(to: string): string {
  const d = parseDestination(to);
  return d.kind === 'tel' ? d.number : d.user;
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

async function perform(line: ScenarioLine, turn: TurnSpec): Promise<void> {
  if (turn === 'hangup' || 'hangup' in turn) return line.hangup();
  if ('say' in turn) return line.say(turn.say);
  if ('keys' in turn)
    return line.press(turn.keys, turn.gap === undefined ? 250 : durationMs(turn.gap));
  if ('silence' in turn) {
    // The caller says nothing for this long: real time is the point of the turn.
    await new Promise((r) => setTimeout(r, durationMs(turn.silence)));
    return;
  }
  if ('tone' in turn) {
    // A far end's recording (a voicemail's beep) is played in text and audio mode only.
    throw new Error('a tone turn cannot be played by a room caller (run it with taskline test)');
  }
  return line.say(turn.barge_in);
}

/**
 * `said` lines are waited for (bounded: the agent answers in its own time); `never_said` is
 * checked over what was said by then.
 */
async function checkLines(ears: TestCaller, expect: ExpectationSpec, from: number) {
  const failures: string[] = [];
  for (const text of asList(expect.said)) {
    const m = textMatcher(text);
    try {
      await ears.heard(m, 45_000, from);
    } catch {
      failures.push(
        `expected the agent to say ${m.source}; it said ${JSON.stringify(ears.agentLines.slice(from).map((l) => l.text))}`,
      );
    }
  }
  for (const text of asList(expect.never_said)) {
    const m = textMatcher(text);
    const hit = ears.agentLines.slice(from).find((l) => m.test(l.text));
    if (hit)
      failures.push(`expected the agent never to say ${m.source}, but it said "${hit.text}"`);
  }
  return failures;
}
