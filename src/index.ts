/**
 * taskline: awaitable, typed voice-agent workflows on LiveKit Agents.
 *
 * @packageDocumentation
 */

export * from './app/call-reporter.js';
export * from './app/module.js';
export * from './app/room.js';
export * from './core/call.js';
export * from './core/clock.js';
export * from './core/errors.js';
export { DEFAULT_PG_TIMEOUTS, type PostgresTimeouts } from './core/postgres.js';
export * from './deep-agent/index.js';
export * from './delegation/index.js';
export * from './flows/index.js';
export * from './outcome.js';
export * from './tasks/index.js';
export * from './telephony/index.js';
export * from './tools/index.js';
