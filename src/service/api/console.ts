/**
 * Serves the live console (a static page and its scripts, built into dist/bundle/console/) under
 * `/console`. The files are public — they hold no data; the page asks for an API key once and
 * uses it for every API call and the WebSocket, so the console sees exactly what that key may.
 * Only files listed at start-up are served (a fixed name → bytes map: no path from the URL ever
 * reaches the file system).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { fail } from './envelope.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * Mermaid styles its SVG inline; everything else comes from this origin. The console shows no
 * images, so none load at all (not even same-origin ones a hostile diagram might name).
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src data:; media-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'";

/** Finds dist/bundle/console/ by walking up from this module (source, dist or bundle). */
export function findConsoleAssets(from = fileURLToPath(import.meta.url)): string | undefined {
  let dir = dirname(from);
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'dist', 'bundle', 'console');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const sibling = join(dir, 'console');
    if (dir.endsWith(join('dist', 'bundle')) && existsSync(join(sibling, 'index.html'))) {
      return sibling;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/** Registers `GET /console` and `GET /console/<file>`. */
export function registerConsole(app: FastifyInstance, assetsDir = findConsoleAssets()): void {
  const files = new Map<string, { type: string; body: Buffer }>();
  if (assetsDir && existsSync(join(assetsDir, 'index.html'))) {
    for (const name of readdirSync(assetsDir)) {
      const type = TYPES[extname(name)];
      if (type) files.set(name, { type, body: readFileSync(join(assetsDir, name)) });
    }
  }
  const config = { public: true };
  app.get('/console', { config }, async (_request, reply) => reply.redirect('/console/'));
  const serve = async (name: string, reply: FastifyReply) => {
    if (files.size === 0) {
      return fail(
        reply,
        503,
        'unavailable',
        'The console is not built: run `npm run build` (it writes dist/bundle/console/).',
      );
    }
    const file = files.get(name);
    if (!file) return fail(reply, 404, 'not_found', `No console file ${name}.`);
    reply.header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', name === 'index.html' ? 'no-cache' : 'public, max-age=300');
    return reply.type(file.type).send(file.body);
  };
  app.get('/console/', { config }, async (_request, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>('/console/:file', { config }, async (request, reply) =>
    serve(request.params.file, reply),
  );
}
