/**
 * The contract's routes under `/delegations`: get, create, update, delete, query, stage status
 * and submit_result, with the contract's bodies and answers. What taskline adds sits beside
 * them: API keys with parties (parties.ts), the written record as `data`, paging, `stage` on
 * submit_result, and an `ETag` on every record answer that a write may send back as `If-Match`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { recordEtag } from '../../delegation/digest.js';
import {
  type DelegationFilter,
  type DelegationRecord,
  type DelegationState,
  type DelegationStore,
  FINAL_STATES,
  RESULT_STAGE,
} from '../../delegation/record.js';
import { isPlainObject } from '../../delegation/validate.js';
import { checkIncomingResult, type ResultSchemaRegistry } from '../constraints.js';
import { loadWithStale } from '../stores/change.js';
import { canSee, type Identity } from './auth.js';
import { HttpError, MESSAGES, parsePart, written } from './envelope.js';
import { checkDelete, checkStageMove, checkSubmit, checkUpdate } from './parties.js';
import {
  IdParams,
  parseCreateBody,
  parsePaging,
  parseQueryBody,
  parseStatusBody,
  parseSubmitBody,
  parseUpdateBody,
  StageParams,
} from './schemas.js';

/** What the routes need. */
export interface RouteDeps {
  store: DelegationStore;
  clock: Clock;
  schemas?: ResultSchemaRegistry;
  identityOf(request: FastifyRequest): Identity;
  /** Resolves once the events of the writes so far are published (bounded by the server). */
  published?: () => Promise<void>;
}

function forbidden(message: string): HttpError {
  return new HttpError(403, 'forbidden', message);
}

/**
 * The `If-Match` precondition of a write, checked on the record inside the write: `*` or one of
 * the listed entity tags (weak tags compare by their opaque part). Absent: no precondition.
 */
function ifMatch(request: FastifyRequest): ((record: DelegationRecord) => void) | undefined {
  const header = request.headers['if-match'];
  if (header === undefined) return undefined;
  const tags = String(header)
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .filter((t) => t !== '');
  if (tags.length === 0) {
    throw new HttpError(400, 'bad_request', 'If-Match is empty; send the ETag of the record.');
  }
  return (record) => {
    if (tags.includes('*') || tags.includes(recordEtag(record))) return;
    throw new HttpError(
      412,
      'precondition_failed',
      `Delegation ${record.delegation_id} changed since the version you sent in If-Match; read it again (its ETag is ${recordEtag(record)}).`,
    );
  };
}

/** Refuses query parameters on a route that takes none (only the query route pages). */
function noQuery(request: FastifyRequest): void {
  const names = Object.keys((request.query as Record<string, unknown> | undefined) ?? {});
  if (names.length > 0) {
    throw new TasklineError(
      'invalid_argument',
      `This route takes no query parameters; got ${names.map((n) => JSON.stringify(n)).join(', ')}.`,
    );
  }
}

/** Both checks, in order. */
function both(
  ...checks: Array<((record: DelegationRecord) => void) | undefined>
): (record: DelegationRecord) => void {
  return (record) => {
    for (const check of checks) check?.(record);
  };
}

const REJECTION_STATUS: Record<string, number> = {
  not_target: 403,
  not_found: 404,
  finished: 409,
  expired: 409,
};

/** Registers the delegation record routes on `app`. */
export function registerDelegationRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { store } = deps;
  /** The answer to a write, once its events are out (see DelegationsApiOptions). */
  const answer = async <T>(reply: FastifyReply, message: string, data?: T) => {
    await deps.published?.();
    if (data !== undefined) reply.header('etag', recordEtag(data as DelegationRecord));
    return written(message, data);
  };

  // A key that is not a party to a record gets the same answer as for a missing one, so it
  // learns nothing about which ids exist.
  const loadStale = async (request: FastifyRequest, id: string) => {
    const found = await loadWithStale(store, id);
    if (!found || !canSee(deps.identityOf(request), found.record)) {
      throw new TasklineError('not_found', `Delegation ${id} does not exist.`);
    }
    return found;
  };
  const load = async (request: FastifyRequest, id: string): Promise<DelegationRecord> =>
    (await loadStale(request, id)).record;
  /** Inside a write: the record is still one the caller may see (it may have been re-targeted). */
  const stillVisible =
    (request: FastifyRequest, id: string) =>
    (record: DelegationRecord): void => {
      if (!canSee(deps.identityOf(request), record)) {
        throw new TasklineError('not_found', `Delegation ${id} does not exist.`);
      }
    };

  /** Checks a final state reported for `stage` the way an incoming result is checked. */
  const checkResult = (
    { record, stale }: { record: DelegationRecord; stale: string[] },
    stage: string,
    state: DelegationState,
    result: unknown,
  ): unknown => {
    const check = checkIncomingResult(
      record,
      // Only the target (or an admin) gets here with a result (parties.ts): it is checked as
      // the target's.
      { sender: record.target_subject_id, stage, result: result ?? null },
      {
        now: deps.clock.now(),
        stale,
        ...(deps.schemas && state === 'done' ? { schemas: deps.schemas } : {}),
      },
    );
    if (!check.ok)
      throw new HttpError(REJECTION_STATUS[check.reason] ?? 400, check.reason, check.message);
    return result === undefined ? undefined : check.result;
  };

  app.get('/delegations/:id', async (request, reply) => {
    noQuery(request);
    const { id } = parsePart(request, 'params', IdParams);
    const record = await load(request, id);
    reply.header('etag', recordEtag(record));
    return { success: true, data: record };
  });

  app.post('/delegations', async (request, reply) => {
    noQuery(request);
    const record = parseCreateBody(request.body);
    const identity = deps.identityOf(request);
    if (!identity.admin && record.sender_subject_id !== identity.agent) {
      throw forbidden(
        `This API key acts as ${identity.agent}; it can only create delegations it sends (sender_subject_id).`,
      );
    }
    for (const stage of Object.keys(record.status)) {
      const state = record.status[stage]!.state;
      if (state !== 'pending' && (!identity.admin || FINAL_STATES.has(state))) {
        throw new TasklineError(
          'invalid_argument',
          FINAL_STATES.has(state)
            ? `A new delegation cannot start finished (stage "${stage}" is ${state}); start it pending.`
            : `A new delegation starts pending (stage "${stage}" is ${state}); the target moves it on.`,
        );
      }
    }
    return answer(reply, MESSAGES.created, await store.create(record));
  });

  app.put('/delegations/:id', async (request, reply) => {
    noQuery(request);
    const { id } = parsePart(request, 'params', IdParams);
    const patch = parseUpdateBody(request.body);
    await load(request, id);
    const identity = deps.identityOf(request);
    const updated = await store.update(id, patch, {
      precondition: both(stillVisible(request, id), ifMatch(request), (record) =>
        checkUpdate(identity, record, patch),
      ),
    });
    return answer(reply, MESSAGES.updated, updated);
  });

  app.delete('/delegations/:id', async (request, reply) => {
    noQuery(request);
    const { id } = parsePart(request, 'params', IdParams);
    const body = request.body;
    if (body !== undefined && !(isPlainObject(body) && Object.keys(body).length === 0)) {
      throw new TasklineError('invalid_argument', 'DELETE takes no body (or an empty one).');
    }
    const record = await load(request, id);
    checkDelete(deps.identityOf(request), record);
    ifMatch(request)?.(record);
    if (!(await store.delete(id))) {
      throw new TasklineError('not_found', `Delegation ${id} does not exist.`);
    }
    return answer(reply, MESSAGES.deleted);
  });

  app.post('/delegations/query', async (request) => {
    const query = parseQueryBody(request.body);
    const paging = parsePaging(request.query);
    const limit = query.limit ?? paging.limit;
    const cursor = query.cursor ?? paging.cursor;
    const identity = deps.identityOf(request);
    const filter: DelegationFilter = identity.admin
      ? query.filter
      : {
          $and: [
            query.filter,
            { $or: [{ sender_subject_id: identity.agent }, { target_subject_id: identity.agent }] },
          ],
        };
    const page = await store.query(filter, {
      ...(limit !== undefined ? { limit } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    return { success: true, data: page.items, ...(page.next ? { next: page.next } : {}) };
  });

  app.put('/delegations/:id/status/:stage', async (request, reply) => {
    noQuery(request);
    const { id, stage } = parsePart(request, 'params', StageParams);
    const body = parseStatusBody(request.body);
    const found = await loadStale(request, id);
    const identity = deps.identityOf(request);
    checkStageMove(identity, found.record, stage, body.state);
    let result: unknown = body.delegation_result;
    if (body.state === 'done' || body.state === 'failed') {
      result = checkResult(found, stage, body.state, result);
    }
    const updated = await store.setStage(id, stage, {
      state: body.state,
      ...(body.time !== undefined ? { time: body.time } : {}),
      ...(body.deadline !== undefined ? { deadline: body.deadline } : {}),
      ...(result !== undefined ? { delegation_result: result } : {}),
      precondition: both(stillVisible(request, id), ifMatch(request), (record) =>
        checkStageMove(identity, record, stage, body.state),
      ),
    });
    return answer(reply, MESSAGES.status, updated);
  });

  app.put('/delegations/submit_result/:id', async (request, reply) => {
    noQuery(request);
    const { id } = parsePart(request, 'params', IdParams);
    const body = parseSubmitBody(request.body);
    const found = await loadStale(request, id);
    const identity = deps.identityOf(request);
    checkSubmit(identity, found.record);
    const stage = body.stage ?? RESULT_STAGE;
    const result = checkResult(found, stage, body.state, body.delegation_result);
    const updated = await store.setStage(id, stage, {
      state: body.state,
      ...(body.time !== undefined ? { time: body.time } : {}),
      ...(result !== undefined ? { delegation_result: result } : {}),
      precondition: both(stillVisible(request, id), ifMatch(request), (record) =>
        checkSubmit(identity, record),
      ),
    });
    return answer(reply, MESSAGES.status, updated);
  });
}
