import { type ZodType, z } from 'zod/v4';
import { TasklineError } from '../core/errors.js';
import {
  type DelegationRecord,
  FINAL_STATES,
  RESULT_STAGE,
  stageOf,
} from '../delegation/record.js';

/** Why an incoming result was refused. */
export type ResultRejection =
  | 'not_found'
  | 'not_target'
  | 'no_stage'
  | 'finished'
  | 'expired'
  | 'invalid_result';

/** The verdict on an incoming result: the (parsed) result, or why it was refused. */
export type ResultCheck =
  | { ok: true; result: unknown }
  | { ok: false; reason: ResultRejection; message: string };

/**
 * zod schemas of results by delegation type, so a worker cannot report a refund as a balance.
 * A type with no schema accepts any JSON result unless the registry is `strict`.
 */
export class ResultSchemaRegistry {
  private readonly schemas = new Map<string, ZodType>();

  /** @param options.strict reject results for types with no registered schema. */
  constructor(private readonly options: { strict?: boolean } = {}) {}

  /** Registers (or replaces) the schema of one delegation type; returns this for chaining. */
  register(delegationType: string, schema: ZodType): this {
    this.schemas.set(delegationType, schema);
    return this;
  }

  /** True when the type has a schema. */
  has(delegationType: string): boolean {
    return this.schemas.has(delegationType);
  }

  /** Validates one result; the parsed value on success (defaults applied). */
  validate(
    delegationType: string,
    result: unknown,
  ): { ok: true; value: unknown } | { ok: false; message: string } {
    const schema = this.schemas.get(delegationType);
    if (!schema) {
      return this.options.strict
        ? {
            ok: false,
            message: `No result schema is registered for delegation type "${delegationType}"; register one with ResultSchemaRegistry.register().`,
          }
        : { ok: true, value: result };
    }
    const parsed = schema.safeParse(result);
    return parsed.success
      ? { ok: true, value: parsed.data }
      : {
          ok: false,
          message: `The result does not match the "${delegationType}" schema: ${z.prettifyError(parsed.error)}`,
        };
  }
}

/** An incoming result: who sends it, for which stage, and the value. */
export interface ResultSubmission {
  /** The agent submitting the result (must be the record's target). */
  sender: string;
  /** The stage the result completes (default the contract's `delegation_result`). */
  stage?: string;
  result: unknown;
}

/** What a result is checked against besides its record. */
export interface ResultCheckOptions {
  /** Now, ms since the epoch. */
  now: number;
  schemas?: ResultSchemaRegistry;
  /** Stages written with a deadline already past: that deadline is kept as written, not enforced. */
  stale?: readonly string[];
}

/**
 * Checks an incoming result against its record: the sender must be the target, the stage must
 * exist (the contract's `delegation_result` stage is created by its first result) and be neither
 * finished nor past its deadline (by `now`, ms epoch), and the result must match the delegation
 * type's schema. Pure: the caller writes the result if `ok`.
 */
export function checkIncomingResult(
  record: DelegationRecord | undefined,
  submission: ResultSubmission,
  options: ResultCheckOptions,
): ResultCheck {
  const stage = submission.stage ?? RESULT_STAGE;
  if (!record) return { ok: false, reason: 'not_found', message: 'The delegation does not exist.' };
  const id = record.delegation_id;
  if (submission.sender !== record.target_subject_id) {
    return {
      ok: false,
      reason: 'not_target',
      message: `Only the target (${record.target_subject_id}) may submit a result for delegation ${id}; ${submission.sender} is not it.`,
    };
  }
  const status = stageOf(record, stage);
  if (!status && stage !== RESULT_STAGE) {
    return {
      ok: false,
      reason: 'no_stage',
      message: `Delegation ${id} has no stage "${stage}"; its stages are ${Object.keys(record.status).join(', ') || 'none'}.`,
    };
  }
  if (status?.state === 'expired') {
    return {
      ok: false,
      reason: 'expired',
      message: `Delegation ${id} stage "${stage}" has expired.`,
    };
  }
  if (status && FINAL_STATES.has(status.state)) {
    return {
      ok: false,
      reason: 'finished',
      message: `Delegation ${id} stage "${stage}" is already ${status.state}; a result can be submitted once.`,
    };
  }
  if (
    status?.deadline !== undefined &&
    status.deadline * 1000 < options.now &&
    !options.stale?.includes(stage)
  ) {
    return {
      ok: false,
      reason: 'expired',
      message: `Delegation ${id} stage "${stage}" passed its deadline (${status.deadline}, ${new Date(status.deadline * 1000).toISOString()}).`,
    };
  }
  const valid = options.schemas
    ? options.schemas.validate(record.delegation_type, submission.result)
    : { ok: true as const, value: submission.result };
  if (!valid.ok) return { ok: false, reason: 'invalid_result', message: valid.message };
  return { ok: true, result: valid.value };
}

/** Throws the TasklineError matching a refused result (`not_found`, `invalid_state`, `invalid_argument`). */
export function assertIncomingResult(
  record: DelegationRecord | undefined,
  submission: ResultSubmission,
  options: ResultCheckOptions,
): unknown {
  const check = checkIncomingResult(record, submission, options);
  if (check.ok) return check.result;
  const code =
    check.reason === 'not_found'
      ? 'not_found'
      : check.reason === 'finished' || check.reason === 'expired'
        ? 'invalid_state'
        : 'invalid_argument';
  throw new TasklineError(code, check.message, { reason: check.reason });
}
