/**
 * Routes that answer without an API key (`/health`, the console's static page and scripts)
 * say so with `config: { public: true }`; the auth hook lets only those through.
 */
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs no API key (it serves no record data). */
    public?: boolean;
  }
}

/** True when the matched route is declared public. */
export function isPublicRoute(request: FastifyRequest): boolean {
  return request.routeOptions.config?.public === true;
}
