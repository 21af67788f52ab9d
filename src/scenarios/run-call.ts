/**
 * Runs one scenario once in a mode: builds the call, plays every turn, checks each turn's
 * expectations against what happened during it and the final ones against the whole call.
 * Never throws for a failing call: everything that went wrong is in the report.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';
import { TasklineError } from '../core/errors.js';
import { ensureLogger } from '../core/log.js';
import { SessionFailures } from '../core/session-failures.js';
import { lastTransfer } from '../telephony/transfer.js';
import { formatLine, toolCallsOf } from '../testing/expect.js';
import { ScriptedLLM } from '../testing/scripted-llm.js';
import type { TurnStages } from './audio/stages.js';
import { type BuiltCall, buildCall, type ScenarioModule } from './call-parts.js';
import type { CallDriver, CallMode, TurnInput } from './driver.js';
import { turnInput, turnLabel } from './driver.js';
import { type CallView, checkExpectations } from './expectations.js';
import {
  type CaptureCheck,
  type CaptureCount,
  checkCaptures,
  countCaptures,
  type WordScore,
  wordScore,
} from './hearing.js';
import type { LoadedScenario } from './load.js';
import type { ExpectationSpec } from './schema.js';

/** One broken expectation or error, with where it is in the scenario file. */
export interface ScenarioFailure {
  /** "file:line" of the turn or `expect:` block. */
  where: string;
  /** 0-based turn index; undefined for the final expectations or the call itself. */
  turn?: number;
  message: string;
  /**
   * What broke: an `expect:` check (or the call ending before a turn), a captured value the
   * caller did not mean, or an error (the call failed, a wait gave up).
   */
  kind: 'expectation' | 'capture' | 'error';
}

/** What one turn did. */
export interface TurnReport {
  turn: number;
  label: string;
  input: TurnInput;
  latencyMs?: number;
  interruptions: number;
  /** Audio mode: where the time of a speech turn went. */
  stages?: TurnStages;
}

/** One run of a scenario. */
export interface RunReport {
  ok: boolean;
  failures: ScenarioFailure[];
  /** The call as "agent: …" / "caller: …" lines. */
  transcript: string[];
  turns: TurnReport[];
  /** The call's typed result at the end. */
  result?: unknown;
  /** Scripted words against what the recogniser heard (audio mode). */
  words?: WordScore;
  /** The scenario's `meant:` values against the captured ones. */
  captures?: CaptureCount & { checks: CaptureCheck[] };
  durationMs: number;
}

/** Options for {@link runScenarioOnce}. */
export interface RunOnceOptions {
  /**
   * What fails a run: everything (default), or only wrong captured values and errors — for a
   * real recogniser, whose mishearings may break a scenario's other expectations (they are
   * still reported) while a wrong value must never be stored.
   */
  judge?: 'all' | 'captures';
}

interface Marks {
  lines: number;
  tools: number;
  model: number;
  visited: number;
  checkpoints: number;
}

/** Runs `scenario` once in `mode`. */
export async function runScenarioOnce(
  scenario: LoadedScenario,
  parts: ScenarioModule,
  mode: CallMode,
  options: RunOnceOptions = {},
): Promise<RunReport> {
  ensureLogger();
  const started = performance.now();
  const failures: ScenarioFailure[] = [];
  const turns: TurnReport[] = [];
  const model = parts.createModel();
  const callId = `scenario-${randomUUID()}`;
  const session = new voice.AgentSession({
    ...(await mode.sessionOptions(callId)),
    llm: model,
    connOptions: { llmConnOptions: { maxRetry: 0, retryIntervalMs: 100, timeoutMs: 10_000 } },
  });
  const driver = mode.attach(session, callId, scenario);
  const watch = new SessionFailures(session);
  let built: BuiltCall | undefined;
  const here = (turn?: number) =>
    `${scenario.file}:${turn === undefined ? (scenario.expectLine ?? 1) : scenario.turnLines[turn]}`;
  const fail = (message: string, turn?: number, kind: ScenarioFailure['kind'] = 'expectation') =>
    failures.push({ where: here(turn), ...(turn !== undefined ? { turn } : {}), message, kind });
  /** A turn whose agent reply was still playing when it returned: checked after the next turn. */
  let deferred:
    | { turn: number; spec: ExpectationSpec; view: CallView; linesEnd: number }
    | undefined;
  const checkDeferred = (callerStart: number) => {
    if (!deferred) return;
    const late = driver.transcript
      .slice(deferred.linesEnd)
      .filter((l) => l.role === 'agent' && l.at < callerStart)
      .map((l) => l.text);
    deferred.view.agentLines.push(...late);
    for (const message of checkExpectations(deferred.spec, deferred.view, here(deferred.turn)))
      fail(message, deferred.turn);
    deferred = undefined;
  };
  try {
    built = buildCall(parts, session);
    if (model instanceof ScriptedLLM) model.bind(session);
    await driver.start(built.instance.agent, scenario.spec.turns[0]);
    watch.check();
    const specTurns = scenario.spec.turns;
    for (let i = 0; i < specTurns.length && !watch.failed; i++) {
      const turn = specTurns[i]!;
      if (driver.isClosed) {
        fail(`the call ended before this turn (${turnLabel(turn)})`, i);
        break;
      }
      const marks = markOf(driver, session, model, built);
      const measure = await driver.perform(turn, i, specTurns[i + 1]);
      watch.check();
      // Agent lines that started before this turn's input belong to the turn before it.
      const callerStart =
        driver.transcript.slice(marks.lines).find((l) => l.role === 'caller')?.at ??
        Number.POSITIVE_INFINITY;
      checkDeferred(callerStart);
      turns.push({
        turn: i,
        label: turnLabel(turn),
        input: turnInput(turn),
        interruptions: measure.interruptions,
        ...(measure.latencyMs !== undefined ? { latencyMs: measure.latencyMs } : {}),
        ...(measure.stages ? { stages: measure.stages } : {}),
      });
      const expect = typeof turn === 'string' ? undefined : turn.expect;
      if (expect) {
        const view = await viewOf(mode, driver, session, model, built, marks, turns.slice(-1));
        view.agentLines = driver.transcript
          .slice(marks.lines)
          .filter((l) => l.role === 'agent' && !(l.at < callerStart))
          .map((l) => l.text);
        if (measure.unsettled) {
          deferred = { turn: i, spec: expect, view, linesEnd: driver.transcript.length };
        } else {
          for (const message of checkExpectations(expect, view, here(i))) fail(message, i);
        }
      }
    }
  } catch (error) {
    fail(
      describe(error),
      turns.length < scenario.spec.turns.length ? turns.length : undefined,
      'error',
    );
  }
  checkDeferred(Number.POSITIVE_INFINITY);
  // Failures are read before the runner closes a call still running after the last turn:
  // what the close itself aborts (a task waiting for the caller) is the runner's doing.
  watch.check();
  watch.dispose();
  for (const failure of watch.failures)
    fail(`the call failed: ${failure.message}`, undefined, 'error');
  try {
    await driver.close();
  } catch (error) {
    fail(`closing the call failed: ${describe(error)}`, undefined, 'error');
  }
  const finalSpec: ExpectationSpec | undefined = scenario.spec.expect;
  let result: unknown;
  if (built) {
    try {
      result = safeResult(built);
      if (finalSpec) {
        const view = await viewOf(mode, driver, session, model, built, undefined, turns);
        for (const message of checkExpectations(finalSpec, view, here())) fail(message);
      }
    } catch (error) {
      fail(describe(error), undefined, 'error');
    }
  }
  let captures: RunReport['captures'];
  if (scenario.spec.meant !== undefined) {
    const checks = checkCaptures(result, scenario.spec.meant);
    captures = { ...countCaptures(checks), checks };
    for (const c of checks.filter((x) => x.verdict === 'wrong')) {
      failures.push({
        where: `${scenario.file}:${scenario.meantLine ?? 1}`,
        message: `captured ${c.path} = ${JSON.stringify(c.got)}, but the caller meant ${JSON.stringify(c.meant)}`,
        kind: 'capture',
      });
    }
  }
  const heard = driver.transcript.some((l) => l.heard !== undefined);
  const judge = options.judge ?? 'all';
  return {
    ok: failures.every((f) => judge === 'captures' && f.kind === 'expectation'),
    failures,
    // In the order things were said (an agent line is dated when it started).
    transcript: [...driver.transcript].sort((a, b) => a.at - b.at).map(formatLine),
    turns,
    ...(result !== undefined ? { result } : {}),
    ...(heard ? { words: wordScore(driver.transcript) } : {}),
    ...(captures ? { captures } : {}),
    durationMs: performance.now() - started,
  };
}

function markOf(
  driver: CallDriver,
  session: voice.AgentSession,
  model: unknown,
  built: BuiltCall,
): Marks {
  return {
    lines: driver.transcript.length,
    tools: toolCallsOf(session).length,
    model: model instanceof ScriptedLLM ? model.requests.length : 0,
    visited: Math.max(0, driver.visited.length - 1),
    checkpoints: built.checkpoints.writes.length,
  };
}

async function viewOf(
  mode: CallMode,
  driver: CallDriver,
  session: voice.AgentSession,
  model: unknown,
  built: BuiltCall,
  marks: Marks | undefined,
  turns: TurnReport[],
): Promise<CallView> {
  const from = marks ?? { lines: 0, tools: 0, model: 0, visited: 0, checkpoints: 0 };
  return {
    agentLines: driver.transcript
      .slice(from.lines)
      .filter((l) => l.role === 'agent')
      .map((l) => l.text),
    toolCalls: toolCallsOf(session).slice(from.tools),
    modelCalls:
      model instanceof ScriptedLLM
        ? model.requests.slice(from.model).map((r) => r.agentId)
        : undefined,
    visited: driver.visited.slice(from.visited),
    checkpoints: built.checkpoints.writes.slice(from.checkpoints),
    transfer: await lastTransfer(session),
    result: safeResult(built),
    interruptions:
      mode.name === 'audio' ? turns.reduce((n, t) => n + t.interruptions, 0) : undefined,
    latencies: turns.flatMap((t) =>
      t.latencyMs !== undefined ? [{ turn: t.turn, ms: t.latencyMs }] : [],
    ),
  };
}

function safeResult(built: BuiltCall): unknown {
  try {
    return built.instance.result();
  } catch (error) {
    throw new TasklineError('call_failed', `the module's result() threw: ${describe(error)}`);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
