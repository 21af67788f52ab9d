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
} from '../record.js';
import { actingAs, canSee, type Identity } from './auth.js';
import { fail, HttpError, parsePart } from './envelope.js';
import {
  CreateBody,
  IdParams,
  QueryBody,
  StageParams,
  StatusBody,
  SubmitBody,
  UpdateBody,
} from './schemas.js';

/** What the routes need. */
export interface RouteDeps {
  store: DelegationStore;
  clock: Clock;
  schemas?: ResultSchemaRegistry;
  identityOf(request: FastifyRequest): Identity;
}

function forbidden(message: string): HttpError {
  return new HttpError(403, 'forbidden', message);
}

/** Which roles may move a stage to each state through the status route. */
const STATUS_RULES: Record<DelegationState, { sender: boolean; target: boolean; hint?: string }> = {
  pending: { sender: true, target: false },
  in_progress: { sender: false, target: true },
  done: {
    sender: false,
    target: false,
    hint: 'Submit the result with PUT /delegations/submit_result/:id instead.',
  },
  failed: { sender: false, target: true },
  expired: {
    sender: false,
    target: false,
    hint: 'Only the expiry checker (or an admin) expires stages.',
  },
  cancelled: { sender: true, target: true },
};

/** Registers the delegation record routes on `app`. */
export function registerDelegationRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { store } = deps;

  const load = async (request: FastifyRequest, id: string): Promise<DelegationRecord> => {
    const record = await store.get(id);
    if (!record) throw new TasklineError('not_found', `Delegation ${id} does not exist.`);
    if (!canSee(deps.identityOf(request), record)) {
      throw forbidden(`Delegation ${id} is neither sent nor received by this API key's agent.`);
    }
    return record;
  };

  app.get('/delegations/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    return { success: true, data: await load(request, id) };
  });

  app.post('/delegations', async (request, reply) => {
    const body = parsePart(request, 'body', CreateBody);
    const identity = deps.identityOf(request);
    if (!identity.admin && body.sender_subject_id !== identity.agent) {
      throw forbidden(
        `This API key acts as ${identity.agent}; it can only create delegations it sends (sender_subject_id).`,
      );
    }
    const finished = Object.entries(body.status).find(([, s]) => FINAL_STATES.has(s.state));
    if (finished) {
      throw new TasklineError(
        'invalid_argument',
        `A new delegation cannot start finished (stage "${finished[0]}" is ${finished[1].state}); start it pending.`,
      );
    }
    const record = await store.create(body);
    return reply.code(201).send({ success: true, data: record });
  });

  app.put('/delegations/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    const body = parsePart(request, 'body', UpdateBody);
    const record = await load(request, id);
    const identity = deps.identityOf(request);
    if (
      body.target_subject_id !== undefined &&
      !identity.admin &&
      record.sender_subject_id !== identity.agent
    ) {
      throw forbidden('Only the sender (or an admin) can re-target a delegation.');
    }
    return { success: true, data: await store.update(id, body) };
  });

  app.delete('/delegations/:id', async (request) => {
    const { id } = parsePart(request, 'params', IdParams);
    const record = await load(request, id);
    const identity = deps.identityOf(request);
    if (!identity.admin && record.sender_subject_id !== identity.agent) {
      throw forbidden('Only the sender (or an admin) can delete a delegation.');
    }
    if (!(await store.delete(id)))
      throw new TasklineError('not_found', `Delegation ${id} does not exist.`);
    return { success: true, data: { deleted: true, delegation_id: id } };
  });

  app.post('/delegations/query', async (request) => {
    const body = parsePart(request, 'body', QueryBody);
    const identity = deps.identityOf(request);
    const filter = (
      identity.admin
        ? body.filter
        : {
            $and: [
              body.filter,
              {
                $or: [{ sender_subject_id: identity.agent }, { target_subject_id: identity.agent }],
              },
            ],
          }
    ) as DelegationFilter;
    const page = await store.query(filter, {
      ...(body.limit !== undefined ? { limit: body.limit } : {}),
      ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
    });
    return { success: true, data: page };
  });

  app.put('/delegations/:id/status/:stage', async (request) => {
    const { id, stage } = parsePart(request, 'params', StageParams);
    const body = parsePart(request, 'body', StatusBody);
    const record = await load(request, id);
    const identity = deps.identityOf(request);
    if (!identity.admin) {
      const rule = STATUS_RULES[body.state];
      const isSender = record.sender_subject_id === identity.agent;
      const isTarget = record.target_subject_id === identity.agent;
      if (!((isSender && rule.sender) || (isTarget && rule.target))) {
        throw forbidden(
          `${identity.agent} may not set a stage to ${body.state}. ${rule.hint ?? 'Senders may cancel or add pending stages; targets may start, fail or cancel.'}`,
        );
      }
    }
    const updated = await store.setStage(id, stage, {
      state: body.state,
      ...(body.deadline !== undefined ? { deadline: body.deadline } : {}),
    });
    return { success: true, data: updated };
  });

  app.put('/delegations/submit_result/:id', async (request, reply) => {
    const { id } = parsePart(request, 'params', IdParams);
    const body = parsePart(request, 'body', SubmitBody);
    const record = await load(request, id);
    const identity = deps.identityOf(request);
    const state = body.state ?? 'done';
    const stage = body.stage ?? 'execution';
    const check = checkIncomingResult(
      record,
      { sender: actingAs(identity, record.target_subject_id), stage, result: body.result },
      {
        now: deps.clock.now(),
        ...(deps.schemas && state === 'done' ? { schemas: deps.schemas } : {}),
      },
    );
    if (!check.ok) {
      const status =
        check.reason === 'not_target'
          ? 403
          : check.reason === 'not_found'
            ? 404
            : check.reason === 'finished' || check.reason === 'expired'
              ? 409
              : 400;
      return fail(reply, status, check.reason, check.message);
    }
    const updated = await store.setStage(id, stage, { state, delegation_result: check.result });
    return { success: true, data: updated };
  });
}
