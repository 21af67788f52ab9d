/**
 * The contract's routes under `/delegations`: get, create, update, delete, query, stage status
 * and submit_result, with the contract's bodies and answers. What taskline adds sits beside
 * them: API keys with roles, the written record as `data`, paging, `stage` on submit_result.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { TasklineError } from '../../core/errors.js';
import { checkIncomingResult, type ResultSchemaRegistry } from '../constraints.js';
import {
  type DelegationFilter,
  type DelegationRecord,
  type DelegationState,
  type DelegationStore,
  FINAL_STATES,
  RESULT_STAGE,
} from '../record.js';
import { loadWithStale } from '../stores/change.js';
import { canSee, type Identity } from './auth.js';
import { HttpError, MESSAGES, parsePart, written } from './envelope.js';
import {
  IdParams,
  Paging,
  parseCreateBody,
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
  const answer = async <T>(message: string, data?: T) => {
    await deps.published?.();
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

  /** Checks a final state reported for `stage` the way an incoming result is checked. */
  const checkResult = (
    { record, stale }: { record: DelegationRecord; stale: string[] },
    stage: string,
    state: DelegationState,
    result: unknown,
  ): unknown => {
    const check = checkIncomingResult(
      record,
      // Both parties report on their own delegation (the record is theirs; a stranger never got
      // here): the result is checked as the target's.
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

  app.get('/delegations/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    return { success: true, data: await load(request, id) };
  });

  app.post('/delegations', async (request) => {
    const record = parseCreateBody(request.body);
    const identity = deps.identityOf(request);
    if (!identity.admin && record.sender_subject_id !== identity.agent) {
      throw forbidden(
        `This API key acts as ${identity.agent}; it can only create delegations it sends (sender_subject_id).`,
      );
    }
    for (const stage of Object.keys(record.status)) {
      const state = record.status[stage]!.state;
      if (FINAL_STATES.has(state)) {
        throw new TasklineError(
          'invalid_argument',
          `A new delegation cannot start finished (stage "${stage}" is ${state}); start it pending.`,
        );
      }
    }
    return answer(MESSAGES.created, await store.create(record));
  });

  app.put('/delegations/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    const patch = parseUpdateBody(request.body);
    const record = await load(request, id);
    const identity = deps.identityOf(request);
    if (!identity.admin) {
      const changes = (field: keyof DelegationRecord) =>
        Object.hasOwn(patch, field) && patch[field] !== record[field];
      if (changes('target_subject_id') && record.sender_subject_id !== identity.agent) {
        throw forbidden('Only the sender (or an admin) can re-target a delegation.');
      }
      if (changes('sender_subject_id')) {
        throw forbidden('Only an admin key can change who sent a delegation.');
      }
    }
    return answer(MESSAGES.updated, await store.update(id, patch));
  });

  app.delete('/delegations/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    const record = await load(request, id);
    const identity = deps.identityOf(request);
    if (!identity.admin && record.sender_subject_id !== identity.agent) {
      throw forbidden('Only the sender (or an admin) can delete a delegation.');
    }
    if (!(await store.delete(id))) {
      throw new TasklineError('not_found', `Delegation ${id} does not exist.`);
    }
    return answer(MESSAGES.deleted);
  });

  app.post('/delegations/query', async (request) => {
    const query = parseQueryBody(request.body);
    const paging = Paging.safeParse(request.query ?? {});
    if (!paging.success) {
      throw new TasklineError(
        'invalid_argument',
        'Paging is ?limit=<1..500>&cursor=<the "next" of the previous answer>.',
      );
    }
    const limit = query.limit ?? paging.data.limit;
    const cursor = query.cursor ?? paging.data.cursor;
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

  app.put('/delegations/:id/status/:stage', async (request) => {
    const { id, stage } = parsePart(request, 'params', StageParams);
    const body = parseStatusBody(request.body);
    const found = await loadStale(request, id);
    if (body.state === 'expired' && !deps.identityOf(request).admin) {
      throw forbidden('Only the expiry checker (or an admin key) expires stages.');
    }
    let result = body.delegation_result;
    if (body.state === 'done' || body.state === 'failed') {
      result = checkResult(found, stage, body.state, result);
    }
    const updated = await store.setStage(id, stage, {
      state: body.state,
      ...(body.time !== undefined ? { time: body.time } : {}),
      ...(body.deadline !== undefined ? { deadline: body.deadline } : {}),
      ...(result !== undefined ? { delegation_result: result } : {}),
    });
    return answer(MESSAGES.status, updated);
  });

  app.put('/delegations/submit_result/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    const body = parseSubmitBody(request.body);
    const found = await loadStale(request, id);
    const stage = body.stage ?? RESULT_STAGE;
    const result = checkResult(found, stage, body.state, body.delegation_result);
    const updated = await store.setStage(id, stage, {
      state: body.state,
      ...(body.time !== undefined ? { time: body.time } : {}),
      ...(result !== undefined ? { delegation_result: result } : {}),
    });
    return answer(MESSAGES.status, updated);
  });
}
