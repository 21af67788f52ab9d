import { z } from 'zod/v4';

const Task = {
  delegation_type: z.string().min(1).max(100),
  sub_task_data: z.record(z.string(), z.unknown()),
};

/**
 * Short-lived messages for choosing a target: a call for bids or votes, and the answers. They
 * are not stored (a late answer is useless), so they travel outside the durable stream.
 */
export const SelectionMessage = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('bid_request'),
    round: z.string(),
    from: z.string(),
    /** When answers stop counting, integer epoch seconds (rounded up). */
    deadline: z.number().int(),
    ...Task,
  }),
  z.object({
    kind: z.literal('bid'),
    round: z.string(),
    from: z.string(),
    /** Absent when the agent declines to bid. */
    cost: z.number().finite().min(0).optional(),
    eta_ms: z.number().finite().min(0).optional(),
  }),
  z.object({
    kind: z.literal('vote_request'),
    round: z.string(),
    from: z.string(),
    /** When answers stop counting, integer epoch seconds (rounded up). */
    deadline: z.number().int(),
    candidates: z.array(z.string()),
    ...Task,
  }),
  z.object({
    kind: z.literal('vote'),
    round: z.string(),
    from: z.string(),
    /** Candidates best first; may be partial; empty to abstain. */
    ranking: z.array(z.string()),
  }),
]);
/** A selection message. */
export type SelectionMessage = z.infer<typeof SelectionMessage>;
