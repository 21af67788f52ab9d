import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ZodType, z } from 'zod/v4';
import { TasklineError, type TasklineErrorCode } from '../../core/errors.js';

/**
 * The contract's response envelope: `{ "success": true, "data" }` for reads, `{ "success": true,
 * "message" }` for writes (taskline adds the written record as `data`), and `{ "success": false,
 * "message", "code" }` with a 4xx (5xx only for a bug or a broken dependency).
 */
export type Envelope<T> =
  | { success: true; message?: string; data?: T }
  | { success: false; message: string; code: string };

/** The contract's messages for successful writes. */
export const MESSAGES = {
  created: 'Delegation created successfully',
  updated: 'Delegation updated successfully',
  deleted: 'Delegation deleted successfully',
  status: 'Delegation status updated successfully',
} as const;

/** An error with its own HTTP status and code (403 `forbidden`), for API-only refusals. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Sends a failure envelope. */
export function fail(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
): FastifyReply {
  return reply.code(status).send({ success: false, code, message } satisfies Envelope<never>);
}

const STATUS: Partial<Record<TasklineErrorCode, number>> = {
  invalid_argument: 400,
  not_found: 404,
  invalid_state: 409,
  conflict: 409,
  limit_exceeded: 413,
  timeout: 504,
  cancelled: 409,
  session_closed: 503,
};

/** HTTP status for a TasklineError code (500 for codes that mean a bug, not bad input). */
export function statusOf(code: TasklineErrorCode): number {
  return STATUS[code] ?? 500;
}

/** A successful write: the contract's message, plus the written record as `data`. */
export function written<T>(message: string, data?: T): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

/**
 * Parses `request[part]` with a zod schema and stores the result back; on failure throws an
 * `invalid_argument` error listing every problem (the error handler answers 400).
 */
export function parsePart<T>(
  request: FastifyRequest,
  part: 'body' | 'params',
  schema: ZodType<T>,
): T {
  const raw = part === 'body' ? request.body : request.params;
  if (part === 'body' && raw === undefined) {
    throw new TasklineError(
      'invalid_argument',
      'This request needs a JSON body (Content-Type: application/json).',
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const what = part === 'body' ? 'Invalid request body' : 'Invalid URL parameters';
    throw new TasklineError('invalid_argument', `${what}: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
