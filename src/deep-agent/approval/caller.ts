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
import { qualifierOf } from '../../tasks/parsers/clauses.js';
import { afterRejection } from '../../tasks/parsers/correct.js';
import { number } from '../../tasks/parsers/number.js';
import { match, nomatch, type ParseResult } from '../../tasks/parsers/result.js';
import { plainWords } from '../../tasks/parsers/words.js';
import { readYesNo, yesNo } from '../../tasks/parsers/yes-no.js';
import type { ApprovalDecision } from './types.js';

/** The caller's answer to one approval question. */
export interface ApprovalAnswer {
  decision: 'approve' | 'reject' | 'change';
  /** Changed arguments (decision "change"). */
  changes?: Record<string, unknown> | null;
  /** What the caller said, briefly (decision "reject" or "change"). */
  reason?: string | null;
}

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
 * The reply without the words that only repeat the action ("yes, charge it" at "I'm about to
 * charge 144 dollars to room 1204"), so a yes that echoes what it approves is still a clear
 * yes. Words that answer or qualify ("no", "cancel", "wait", "if") are never taken out.
 */
function withoutEcho(text: string, action: string | undefined): string {
  // A question back stays one ("yes, charge it?").
  if (!action || text.includes('?')) return text;
  const echo = new Set(plainWords(action));
  const words = plainWords(text);
  const kept = words.filter(
    (w) => !echo.has(w) || qualifierOf(w) !== undefined || yesNo(w).kind === 'match',
  );
  return kept.length === words.length ? text : kept.join(' ');
}

/**
 * True when `text` is a clear yes to the action: a yes with nothing that takes it back,
 * holds or qualifies it ("yes, cancel that", "yes, hold on", "yes if it is free" are not).
 * Nothing runs on a spoken approval unless this holds for the caller's last words.
 */
export function isClearYes(text: string, action?: string): boolean {
  const answer = yesNo(withoutEcho(text, action));
  return answer.kind === 'match' && answer.value;
}

/**
 * Reads a reply to "I'm about to …. Shall I go ahead?" without a model: a clear yes →
 * approve, a no → reject, a number for the call's only numeric argument → change; anything
 * else (a yes that is taken back or qualified, a mixed or unclear reply) → nomatch. `action`
 * is the action as it was said, so a yes that repeats it ("yes, charge it") is still a yes.
 */
export function parseApproval(
  text: string,
  args: Record<string, unknown>,
  action?: string,
): ParseResult<ApprovalAnswer> {
  const rest = afterRejection(text);
  if (rest !== undefined) {
    const changed = numericChange(rest, args);
    if (changed.kind === 'match') return changed;
  }
  const { result, extra } = readYesNo(withoutEcho(text, action));
  if (result.kind !== 'match') return rest === undefined ? numericChange(text, args) : nomatch();
  if (result.value) return match({ decision: 'approve' });
  // "no, send it to checking" asks for something else: the model reads the change.
  return extra.length === 0 ? match({ decision: 'reject', reason: text }) : nomatch();
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

/** Why a change the caller asked for cannot be made, or undefined. */
function checkChange(
  answer: ApprovalAnswer,
  current: Record<string, unknown>,
  round: number,
  options: AskCallerOptions,
): string | undefined {
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
}

/**
 * What the caller said during one approval question, so that only a clear yes to this
 * action approves it. The parser decides while the caller answers the question as it was
 * asked; once the model has spoken (after a reply the parser could not read), a later "yes"
 * may answer whatever the model asked, so the model decides from then on — and its
 * "approve" stands only when the caller's last words were a clear yes.
 */
class ReplyWatch {
  #heard: string | undefined;
  #modelSpoke = false;

  constructor(readonly action: string) {}

  parse(text: string, args: Record<string, unknown>): ParseResult<ApprovalAnswer> {
    this.#heard = text;
    if (this.#modelSpoke) return nomatch();
    const parsed = parseApproval(text, args, this.action);
    if (parsed.kind !== 'match') this.#modelSpoke = true;
    return parsed;
  }

  /** The problem with a decision (the parser's or the model's), or `problem` if there is one. */
  check(answer: ApprovalAnswer, problem: string | undefined): string | undefined {
    const heard = this.#heard;
    const found =
      answer.decision === 'approve' && (heard === undefined || !isClearYes(heard, this.action))
        ? `the caller has not clearly said yes${heard ? ` (they said "${heard}")` : ''}: do not approve; ask "Shall I go ahead? Please say yes or no.", or submit reject if they do not want it`
        : problem;
    if (found) this.#modelSpoke = true;
    return found;
  }
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
    const reply = new ReplyWatch(spoken);
    const task = fromSpec<ApprovalAnswer>({
      name: 'approval',
      instructions:
        `You are asking the caller to approve an action before it is done: ${spoken}. ` +
        'Submit decision "approve" only when they clearly say yes to it, "reject" when they ' +
        'refuse or want nothing done, and "change" with the changed arguments when they ask ' +
        'for different values. If their answer is unclear, or a yes they take back or make ' +
        'conditional ("yes, cancel that", "yes, hold on", "yes if…"), ask again: "Shall I go ' +
        'ahead? Please say yes or no." Do not do the action yourself.',
      schema: answerSchema(options.schema),
      prompt: question,
      confirm: 'never',
      parse: (text) => reply.parse(text, current),
      validate: (answer) => reply.check(answer, checkChange(answer, current, round, options)),
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
