/**
 * Checks a scenario's `expect:` block against what a call did. The same checks serve text
 * and audio mode: both fill a {@link CallView} (for one turn, or for the whole call).
 */
import type { FlowState } from '../flows/checkpoints/types.js';
import type { TransferResult } from '../telephony/transfer.js';
import type { RecordedToolCall } from '../testing/expect.js';
import { asList, deepMatch, firstMismatch, textMatcher } from './match.js';
import { inCurrentWords } from './retired-words.js';
import { durationMs, type ExpectationSpec } from './schema.js';

/** What a call did, for one turn (what happened since the turn began) or for the whole call. */
export interface CallView {
  /** The agent's lines in scope. */
  agentLines: string[];
  toolCalls: RecordedToolCall[];
  /** Agent/task id active at each model call in scope; undefined when the model is not observable. */
  modelCalls: string[] | undefined;
  /** Agents and tasks that became active in scope. */
  visited: string[];
  /** Checkpoints written in scope. */
  checkpoints: FlowState[];
  /** The call's last transfer so far. */
  transfer: TransferResult | undefined;
  /** The call's typed result now. */
  result: unknown;
  /** Agent speeches cut off in scope; undefined when the mode has no playback (text). */
  interruptions: number | undefined;
  /** Response latency (ms) of each turn in scope that got an answer. */
  latencies: Array<{ turn: number; ms: number }>;
}

/**
 * Every expectation in `spec` that `view` breaks, as one sentence each. `where` (`file:line`)
 * goes into a deprecation notice for an old word the spec still uses.
 */
export function checkExpectations(spec: ExpectationSpec, view: CallView, where?: string): string[] {
  const failures: string[] = [];
  const lines = view.agentLines;
  for (const text of asList(spec.said)) {
    const m = textMatcher(text);
    if (!lines.some((l) => m.test(l))) failures.push(`expected the agent to say ${m.source}`);
  }
  for (const text of asList(spec.never_said)) {
    const m = textMatcher(text);
    const hit = lines.find((l) => m.test(l));
    if (hit !== undefined)
      failures.push(`expected the agent never to say ${m.source}, but it said "${hit}"`);
  }
  const outcome =
    'outcome' in spec && spec.outcome !== undefined
      ? inCurrentWords(view.result, spec.outcome, where)
      : undefined;
  if (outcome !== undefined && !deepMatch(view.result, outcome)) {
    const miss = firstMismatch(view.result, outcome) ?? 'it differs';
    failures.push(
      `expected the outcome to match, but ${miss}; the outcome was ${JSON.stringify(view.result)}`,
    );
  }
  for (const call of asList(spec.tool_called)) {
    const name = typeof call === 'string' ? call : call.name;
    const args = typeof call === 'string' ? undefined : call.args;
    const found = view.toolCalls.some((c) => c.name === name && (!args || deepMatch(c.args, args)));
    if (!found) {
      const seen = view.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(', ');
      failures.push(
        `expected a call of ${name}${args ? ` with ${JSON.stringify(args)}` : ''}, but the calls were: ${seen || 'none'}`,
      );
    }
  }
  for (const id of asList(spec.no_model_call_during)) {
    if (!view.modelCalls) {
      failures.push(
        `no_model_call_during needs a scripted model (a ScriptedLLM) to observe model calls`,
      );
      break;
    }
    const n = view.modelCalls.filter((a) => a === id).length;
    if (n > 0) failures.push(`expected no model call during ${id}, but there were ${n}`);
  }
  for (const id of asList(spec.visited)) {
    if (!view.visited.includes(id)) {
      failures.push(
        `expected ${id} to become active; active were: ${view.visited.join(' → ') || 'none'}`,
      );
    }
  }
  if (spec.transferred !== undefined)
    failures.push(...checkTransfer(spec.transferred, view.transfer));
  if (spec.checkpoint !== undefined)
    failures.push(...checkCheckpoint(spec.checkpoint, view.checkpoints));
  if (spec.interrupted !== undefined && view.interruptions !== undefined) {
    if (spec.interrupted && view.interruptions === 0) {
      failures.push('expected agent speech to be cut off, but none was');
    } else if (!spec.interrupted && view.interruptions > 0) {
      failures.push(`expected no agent speech to be cut off, but ${view.interruptions} was`);
    }
  }
  if (spec.latency !== undefined) {
    const budget = durationMs(spec.latency);
    for (const { turn, ms } of view.latencies) {
      if (ms > budget) {
        failures.push(
          `turn ${turn + 1} answered in ${Math.round(ms)} ms, over the ${budget} ms budget`,
        );
      }
    }
  }
  return failures;
}

function checkTransfer(
  expected: NonNullable<ExpectationSpec['transferred']>,
  actual: TransferResult | undefined,
): string[] {
  const seen = actual
    ? `${actual.ok ? 'a' : 'a failed'} ${actual.mode} transfer to ${actual.to}`
    : 'no transfer';
  if (expected === false) return actual ? [`expected no transfer, but there was ${seen}`] : [];
  if (!actual?.ok) return [`expected a transfer, but there was ${seen}`];
  if (expected === true) return [];
  if (
    (expected.to && expected.to !== actual.to) ||
    (expected.mode && expected.mode !== actual.mode)
  ) {
    return [`expected a transfer matching ${JSON.stringify(expected)}, but there was ${seen}`];
  }
  return [];
}

function checkCheckpoint(
  expected: NonNullable<ExpectationSpec['checkpoint']>,
  writes: FlowState[],
): string[] {
  const last = writes.at(-1);
  if (!last) return ['expected a checkpoint to be written, but none was'];
  if (expected === true) return [];
  const actual = {
    position: last.position,
    status: last.status,
    answers: Object.fromEntries(
      Object.entries(last.entries).map(([k, e]) => [k, 'value' in e ? e.value : undefined]),
    ),
  };
  const miss = firstMismatch(actual, expected);
  return miss ? [`expected the last checkpoint to match, but ${miss}`] : [];
}
