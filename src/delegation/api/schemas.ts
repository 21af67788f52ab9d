import { z } from 'zod/v4';
import { DelegationRecord, DelegationState } from '../record.js';

const IsoTime = z.iso.datetime({ offset: true });
const Id = z.string().min(1).max(200);
const StageName = z.string().min(1).max(100);

/** A stage as a client sends it: no unknown fields, times in ISO-8601. */
const StrictStage = z.strictObject({
  state: DelegationState,
  time: IsoTime,
  deadline: IsoTime.optional(),
  delegation_result: z.unknown().optional(),
});

/** POST /delegations: a whole record, unknown fields rejected. */
export const CreateBody = z.strictObject({
  ...DelegationRecord.shape,
  status: z.record(StageName, StrictStage),
});

/** PUT /delegations/:id: the mutable fields. */
export const UpdateBody = z
  .strictObject({
    sub_task_data: z.record(z.string(), z.unknown()).optional(),
    target_subject_id: Id.optional(),
  })
  .refine((b) => b.sub_task_data !== undefined || b.target_subject_id !== undefined, {
    message: 'Give sub_task_data and/or target_subject_id.',
  });

/** POST /delegations/query: a filter in the safe subset, and paging. */
export const QueryBody = z.strictObject({
  filter: z.record(z.string(), z.unknown()).default({}),
  limit: z.number().int().min(1).max(500).optional(),
  cursor: z.string().min(1).max(2_000).optional(),
});

/** PUT /delegations/:id/status/:stage. */
export const StatusBody = z.strictObject({
  state: DelegationState,
  deadline: IsoTime.optional(),
});

/** PUT /delegations/submit_result/:id. */
export const SubmitBody = z
  .strictObject({
    stage: StageName.optional(),
    state: z.enum(['done', 'failed']).optional(),
    result: z.unknown(),
  })
  .refine((b) => Object.hasOwn(b, 'result') && b.result !== undefined, {
    message: 'result is required (use null for "no value").',
    path: ['result'],
  });

/** Route parameters. */
export const IdParams = z.strictObject({ id: Id });
/** Route parameters of the status route. */
export const StageParams = z.strictObject({ id: Id, stage: StageName });
