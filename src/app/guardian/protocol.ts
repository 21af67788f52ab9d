/**
 * What a call's job and the guardian say to each other, and what the guardian writes into a
 * re-dispatch. One module so both sides read the same shapes.
 *
 * The lifeline: one TCP connection per call from the job to the guardian, opened as an HTTP
 * upgrade to {@link LIFELINE_PROTOCOL} (bearer token signed with the LiveKit API secret),
 * then newline-delimited JSON: the job sends `hello` (which call it serves), a `beat` now and
 * then, and `done` when it leaves the call on purpose; the guardian answers `welcome` and
 * `bye`. A lifeline that closes without `done` means the job's process ended: the kernel
 * closes a dead process's sockets at once, so the guardian hears of a crash in milliseconds,
 * where the LiveKit server needs about 20 s to notice the job's agent is gone.
 */
import { z } from 'zod/v4';

/** The HTTP `Upgrade` token of a lifeline. */
export const LIFELINE_PROTOCOL = 'taskline-lifeline/1';

/** The path a lifeline upgrades on. */
export const LIFELINE_PATH = '/lifeline';

/** Longest line either side may send (bytes, newline included). */
export const MAX_LINE_BYTES = 4096;

/** How often a job sends a `beat` on its lifeline. */
export const BEAT_INTERVAL_MS = 10_000;

/** The name a job's agent name and room names must fit (as LiveKit accepts them). */
const name = z.string().min(1).max(256);

/** The first line of a lifeline: the call the job serves. */
export const Hello = z.strictObject({
  type: z.literal('hello'),
  /** The room's name. */
  room: name,
  /** The room's sid (one per room's life: a call). */
  roomSid: z.string().max(256).optional(),
  /** The agent name the job was dispatched under. */
  agentName: name,
  /** The job's participant identity in the room. */
  identity: name,
  /** The job's id. */
  jobId: name,
});
/** The first line of a lifeline. */
export type Hello = z.infer<typeof Hello>;

/** What the job sends after `hello`. */
export const JobLine = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('beat') }),
  z.strictObject({ type: z.literal('done'), reason: z.string().max(512) }),
]);
/** What the job sends after `hello`. */
export type JobLine = z.infer<typeof JobLine>;

/** What the guardian answers. */
export const GuardianLine = z.discriminatedUnion('type', [
  z.object({ type: z.literal('welcome') }),
  z.object({ type: z.literal('bye') }),
]);
/** What the guardian answers. */
export type GuardianLine = z.infer<typeof GuardianLine>;

/**
 * What the guardian writes into the metadata of a dispatch it makes for a call whose agent
 * was lost: which re-dispatch this is, why, and the job that was lost. The original
 * dispatch's metadata travels with it (`original`), so the new job reads what the first one
 * read ({@link dispatchMetadataOf}).
 */
export interface Redispatch {
  /** 1 for the first re-dispatch of this call, 2 for the second, ... */
  attempt: number;
  /** Why the guardian re-dispatched, in words (logged by both sides). */
  reason: string;
  /** The job that was lost, when known. */
  previousJob?: string;
  /** The metadata of the call's first dispatch ('' when it had none). */
  original: string;
}

/** The key of the re-dispatch marker in a dispatch's JSON metadata. */
const MARKER = 'taskline.redispatch';

const Marker = z.strictObject({
  [MARKER]: z.strictObject({
    attempt: z.number().int().min(1).max(1000),
    reason: z.string().max(512),
    previousJob: z.string().max(256).optional(),
  }),
  original: z.string().max(65_536),
});

/** The dispatch metadata of a re-dispatch. */
export function redispatchMetadata(redispatch: Redispatch): string {
  const { original, ...marker } = redispatch;
  return JSON.stringify({ [MARKER]: marker, original });
}

/** The re-dispatch a dispatch's metadata describes, or undefined for any other dispatch. */
export function redispatchOf(metadata: string | undefined): Redispatch | undefined {
  if (!metadata?.includes(MARKER)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(metadata);
  } catch {
    return undefined;
  }
  const found = Marker.safeParse(parsed);
  if (!found.success) return undefined;
  return { ...found.data[MARKER], original: found.data.original };
}

/** The metadata the call's first dispatch carried, whether `metadata` is a re-dispatch's or not. */
export function dispatchMetadataOf(metadata: string | undefined): string {
  return redispatchOf(metadata)?.original ?? metadata ?? '';
}
