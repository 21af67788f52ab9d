/**
 * What a voice process reports about one call to the console's live-calls board
 * (`POST /calls/events`): the wire body {@link reportCalls} sends and the board validates.
 */
import { z } from 'zod/v4';

const Id = z.string().min(1).max(200);
const Count = z.number().int().min(0).max(1_000_000);
const Ms = z.number().min(0).max(1e15);

/** One step of a flow report, as `FlowReport.steps` holds it (fields the console shows, typed). */
const ReportStep = z.object({
  step: Id,
  visit: Count.optional(),
  startedAt: Ms.optional(),
  endedAt: Ms.optional(),
  durationMs: Ms,
  attempts: Count,
  noInput: Count,
  noMatch: Count,
  invalid: Count.optional(),
  outcome: z.string().min(1).max(50),
  modality: z.enum(['speech', 'dtmf', 'text']).optional(),
  next: Id.optional(),
  reason: z.string().max(500).optional(),
});

/** A flow's per-call report (`FlowReport`); unknown fields are dropped, known ones typed. */
export const CallReportBody = z.object({
  flow: Id.optional(),
  callId: Id.optional(),
  status: z.string().min(1).max(50).optional(),
  startedAt: Ms.optional(),
  endedAt: Ms.optional(),
  durationMs: Ms.optional(),
  path: z.array(Id).max(1_000).optional(),
  steps: z.array(ReportStep).max(1_000),
  resumes: Count.optional(),
  backSteps: Count.optional(),
  totals: z.record(z.string().max(50), Count).optional(),
});

/**
 * Mermaid source as `toMermaid` writes it: a flowchart whose labels are plain text. Refused:
 * HTML tags and entity codes in labels (`<img …>`, `#60;`), init directives (which could turn
 * HTML labels back on), clicks and links, and CSS `url(…)` (which loads images).
 */
export const DiagramBody = z
  .string()
  .max(64 * 1024)
  .refine((d) => /^\s*(flowchart|graph)\s+(TD|TB|BT|LR|RL)\b/.test(d), {
    error: 'must be a Mermaid flowchart ("flowchart TD …"), as toMermaid writes it',
  })
  .refine(
    (d) =>
      !/<\s*\/?\s*[A-Za-z!?]/.test(d) &&
      !/#[A-Za-z0-9]+;|&[#A-Za-z0-9]+;/.test(d) &&
      !/%%\s*\{/.test(d) &&
      !/(^|\s)(click|href)\s/im.test(d) &&
      !/url\s*\(|javascript:|data:\s*[a-z]+\//i.test(d),
    {
      error:
        'holds HTML, entity codes, an init directive, a click or link, or a url(); labels are plain text',
    },
  );

/** The body of `POST /calls/events`. */
export const CallEventBody = z.strictObject({
  call_id: Id,
  state: z.enum(['active', 'ended']).default('active'),
  flow: Id.optional(),
  step: Id.optional(),
  task: Id.optional(),
  outcome: z.string().max(200).optional(),
  /** The flow's Mermaid source, with this call's trace highlighted (`toMermaid(flow, {trace})`). */
  diagram: DiagramBody.optional(),
  /** The flow's per-call report (`FlowReport`) so far. */
  report: CallReportBody.optional(),
});
/** A call event as a voice process sends it. */
export type CallEvent = z.input<typeof CallEventBody>;
