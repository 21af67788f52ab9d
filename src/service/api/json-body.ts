import type { FastifyInstance } from 'fastify';
import { MAX_JSON_DEPTH } from '../../delegation/validate.js';
import { HttpError } from './envelope.js';

/**
 * Finds the first problem of a parsed JSON body: a `__proto__` key (refused, as fastify does,
 * so no later merge can poison a prototype) or nesting deeper than {@link MAX_JSON_DEPTH}.
 * Iterative, so a hostile 100,000-deep body costs no stack.
 */
function problemOf(value: unknown): string | undefined {
  const stack: Array<{ v: unknown; d: number }> = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d + 1 > MAX_JSON_DEPTH) {
      return `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels; flatten it.`;
    }
    if (Array.isArray(v)) {
      for (const x of v) stack.push({ v: x, d: d + 1 });
      continue;
    }
    if (Object.hasOwn(v, '__proto__')) {
      return 'The JSON body has a "__proto__" key, which is refused; rename it.';
    }
    for (const x of Object.values(v)) stack.push({ v: x, d: d + 1 });
  }
  return undefined;
}

/**
 * Replaces fastify's JSON body parser: an empty body with `Content-Type: application/json` is no
 * body (contract clients send DELETE that way), bodies deeper than 64 levels or with `__proto__`
 * keys are a 400, and the byte limit stays fastify's.
 */
export function registerJsonBody(app: FastifyInstance, bodyLimit: number): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        done(
          new HttpError(
            400,
            'bad_request',
            `Request body is not valid JSON: ${(error as Error).message}`,
          ),
          undefined,
        );
        return;
      }
      const problem = problemOf(value);
      if (problem) {
        done(new HttpError(400, 'bad_request', problem), undefined);
        return;
      }
      done(null, value);
    },
  );
}
