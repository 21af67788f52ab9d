/**
 * Spoken approval: before a guarded tool runs, the caller hears what is about to happen and
 * answers with a typed yes/no capture task. "Yes" approves, "no" rejects, and a correction
 * ("no, make it 50 dollars") changes an argument and asks again with the new value — the same
 * rejection-then-correction reading the capture tasks use for read-backs. Deterministic where
 * it is sure (yes, no, one number for the one numeric argument), the model otherwise.
 */
import { z } from 'zod/v4';
import type { Outcome } from '../../outcome.js';
import { fromSpec } from '../../tasks/define.js';
import { afterRejection } from '../../tasks/parsers/correct.js';
import { number } from '../../tasks/parsers/number.js';
import { match, nomatch, type ParseResult } from '../../tasks/parsers/result.js';
import { plainWords } from '../../tasks/parsers/words.js';
import { yesNo } from '../../tasks/parsers/yesNo.js';
import type { ApprovalDecision } from './types.js';

/** The caller's answer to one approval question. */
export interface ApprovalAnswer {
  decision: 'approve' | 'reject' | 'change';
  /** Changed arguments (decision "change"). */
  changes?: Record<string, unknown> | null;
  /** What the caller said, briefly (decision "reject" or "change"). */
  reason?: string | null;
}

/** Words that may follow a "no" without asking for anything else ("no thanks", "no, not now"). */
const POLITE = new Set([
  'thanks',
  'thank',
  'you',
  'please',
  'sorry',
  'not',
  'now',
  'right',
  'dont',
  "don't",
  'do',
  'it',
  'that',
  'never',
  'mind',
  'cancel',
  'stop',
]);

/** The names of the numeric arguments of a call. */
function numericArgs(args: Record<string, unknown>): string[] {
  return Object.entries(args)
    .filter(([, v]) => typeof v === 'number')
    .map(([k]) => k);
}

/** Reads `text` as a new value for the call's one numeric argument. */
function numericChange(text: string, args: Record<string, unknown>): ParseResult<ApprovalAnswer> {
  const n = number(text);
  if (n.kind !== 'match' || n.approximate) return nomatch();
  const fields = numericArgs(args);
  // Several numbers could be meant: the model (or a question) decides, never a guess.
  if (fields.length !== 1) return nomatch();
  const field = fields[0]!;
  if (args[field] === n.value) return nomatch();
  return match({ decision: 'change', changes: { [field]: n.value }, reason: text });
}

/**
 * Reads a reply to "I'm about to …. Shall I go ahead?" without a model: yes → approve, no →
 * reject, a number for the call's only numeric argument → change; anything else → nomatch.
 */
export function parseApproval(
  text: string,
  args: Record<string, unknown>,
): ParseResult<ApprovalAnswer> {
  const rest = afterRejection(text);
  if (rest !== undefined) {
    const changed = numericChange(rest, args);
    if (changed.kind === 'match') return changed;
    const words = plainWords(rest);
    if (words.length > 0 && words.every((w) => POLITE.has(w))) {
      return match({ decision: 'reject', reason: text });
    }
    return nomatch();
  }
  const answer = yesNo(text);
  if (answer.kind === 'match') {
    return match(answer.value ? { decision: 'approve' } : { decision: 'reject', reason: text });
  }
  return numericChange(text, args);
}

/** Options for {@link askCaller}. */
export interface AskCallerOptions {
  tool: string;
  args: Record<string, unknown>;
  /** The action in words, from the (possibly changed) arguments. */
  describe: (args: Record<string, unknown>) => string;
  /** The tool's argument schema: changes must still satisfy it. */
  schema?: z.ZodType;
  /** Most changes (default 2); one more asks for a plain yes or no. */
  maxChanges: number;
}

/** The submit schema the task's model sees: a decision, and changed arguments for "change". */
function answerSchema(schema: z.ZodType | undefined) {
  const changes =
    schema instanceof z.ZodObject
      ? schema.partial().nullish()
      : z.record(z.string(), z.unknown()).nullish();
  return z.object({
    decision: z
      .enum(['approve', 'reject', 'change'])
      .describe('approve: the caller agreed; reject: refused; change: wants other values'),
    changes: changes.describe('Only for change: the arguments the caller wants different'),
    reason: z.string().nullish().describe('What the caller said, briefly'),
  }) as unknown as z.ZodType<ApprovalAnswer>;
}

/** What the caller decided, and the arguments it applies to. */
export interface CallerApproval {
  decision: ApprovalDecision;
  /** The arguments after the caller's changes. */
  args: Record<string, unknown>;
}

/**
 * Asks the caller, inside a tool call (the task runs inline): approve, reject, or change an
 * argument and confirm the new action. A task that ends without an answer (silence, hang-up,
 * retries used up) is a rejection with that reason: nothing runs without a yes.
 */
export async function askCaller(options: AskCallerOptions): Promise<CallerApproval> {
  let args = { ...options.args };
  const changes: Record<string, unknown> = {};
  for (let round = 0; ; round++) {
    const spoken = options.describe(args);
    const question =
      round === 0
        ? `I'm about to ${spoken}. Shall I go ahead?`
        : `OK: ${spoken}. Shall I go ahead?`;
    const current = args;
    const task = fromSpec<ApprovalAnswer>({
      name: 'approval',
      instructions:
        `You are asking the caller to approve an action before it is done: ${spoken}. ` +
        'Submit decision "approve" only when they clearly agree, "reject" when they refuse ' +
        'or want nothing done, and "change" with the changed arguments when they ask for ' +
        'different values. Do not do the action yourself.',
      schema: answerSchema(options.schema),
      prompt: question,
      confirm: 'never',
      parse: (text) => parseApproval(text, current),
      validate: (answer) => {
        if (answer.decision !== 'change') return undefined;
        if (!answer.changes || Object.keys(answer.changes).length === 0) {
          return 'a change needs the changed arguments';
        }
        if (round >= options.maxChanges) {
          return 'no more changes can be made now; ask for a plain yes or no';
        }
        const checked = options.schema?.safeParse({ ...current, ...answer.changes });
        if (checked && !checked.success) {
          return `those values are not valid: ${z.prettifyError(checked.error)}`;
        }
        return undefined;
      },
    });
    const outcome: Outcome<ApprovalAnswer> = await task.run();
    if (outcome.status !== 'ok') {
      return {
        decision: {
          decision: 'reject',
          reason: `no approval from the caller (${outcome.status}${outcome.reason ? `: ${outcome.reason}` : ''})`,
        },
        args,
      };
    }
    const answer = outcome.value;
    if (answer.decision === 'approve') {
      return {
        decision:
          Object.keys(changes).length > 0
            ? { decision: 'change', changes }
            : { decision: 'approve' },
        args,
      };
    }
    if (answer.decision === 'reject') {
      return {
        decision: { decision: 'reject', reason: answer.reason ?? 'the caller said no' },
        args,
      };
    }
    Object.assign(changes, answer.changes ?? {});
    args = { ...args, ...(answer.changes ?? {}) };
  }
}
