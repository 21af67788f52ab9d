import { createRequire } from 'node:module';
import { TasklineError } from './errors.js';

/**
 * The optional peer dependencies taskline loads on first use, with the version range that
 * package.json declares for each (tests/core/optional.test.ts keeps the two in sync). An app
 * installs only the ones whose feature it uses.
 */
export const OPTIONAL_PACKAGES = {
  '@livekit/agents-plugin-openai': '^1.9.0',
  '@livekit/agents-plugin-silero': '^1.9.0',
  'better-sqlite3': '^12.0.0',
  pg: '^8.11.0',
  fastify: '^5.0.0',
  '@fastify/websocket': '^11.0.0',
  '@nats-io/transport-node': '^3.3.1',
  '@nats-io/jetstream': '^3.3.1',
  'livekit-server-sdk': '^2.13.0',
  'just-bash': '^3.4.2',
  pyodide: '^314.0.7',
  '@opentelemetry/sdk-metrics': '^2.12.0',
  '@opentelemetry/exporter-prometheus': '^0.223.0',
} as const;

/** A package taskline loads only when a feature that needs it is used. */
export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/**
 * Loads an optional peer dependency on first use. `load` keeps the import specifier static
 * (`() => import('pg')`) so types and bundlers see it; when the package is not installed the
 * result is a TasklineError `missing_dependency` naming the package, the feature that needs
 * it (`feature` completes "needed for ...") and the command that installs it. Any other failure (the package is there but throws
 * while loading) is passed on unchanged.
 *
 * @example
 * const { default: pg } = await loadOptional(() => import('pg'), 'pg', 'the PostgreSQL stores');
 */
export async function loadOptional<T>(
  load: () => Promise<T>,
  pkg: string,
  feature: string,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw missingOr(error, pkg, feature);
  }
}

/** {@link loadOptional} for synchronous `require` sites (code that cannot await). */
export function requireOptional<T>(load: () => T, pkg: string, feature: string): T {
  try {
    return load();
  } catch (error) {
    throw missingOr(error, pkg, feature);
  }
}

/** The TasklineError for a missing `pkg`, or `error` itself when something else failed. */
function missingOr(error: unknown, pkg: string, feature: string): unknown {
  if (!isMissingPackage(error, pkg)) return error;
  const range = (OPTIONAL_PACKAGES as Record<string, string>)[pkg];
  const spec = range ? `${pkg}@"${range}"` : pkg;
  return new TasklineError(
    'missing_dependency',
    `The package "${pkg}" is needed for ${feature} but is not installed. Install it in your app: npm install ${spec}`,
    { package: pkg, feature, ...(range ? { range } : {}) },
  );
}

/** True when `error` says that `pkg` itself (not one of its own dependencies) was not found. */
export function isMissingPackage(error: unknown, pkg: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  // Node names the missing specifier in quotes: "Cannot find package 'pg' imported from ..."
  // or "Cannot find module 'pg'" (a bare package, or a deep path inside it).
  const quoted = /['"]([^'"]+)['"]/.exec(error.message)?.[1];
  return quoted === pkg || quoted?.startsWith(`${pkg}/`) === true;
}

/**
 * True when `pkg` can be found from taskline's own location (where `loadOptional` imports
 * it from): a check a process can make before it commits to work that needs the package.
 * `from` is for tests (a file URL to resolve from).
 */
export function isInstalled(pkg: string, from: string | URL = import.meta.url): boolean {
  try {
    createRequire(from).resolve(pkg);
    return true;
  } catch (error) {
    // Found but not requirable (an ESM-only export map) is installed all the same.
    return !isMissingPackage(error, pkg);
  }
}

/** The `missing_dependency` error for `pkg`, as {@link loadOptional} raises it. */
export function missingDependency(pkg: string, feature: string): TasklineError {
  return missingOr(
    Object.assign(new Error(`Cannot find package '${pkg}'`), { code: 'ERR_MODULE_NOT_FOUND' }),
    pkg,
    feature,
  ) as TasklineError;
}
