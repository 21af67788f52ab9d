/**
 * taskline's testing kit: a scripted model, a simulated caller, a virtual clock and a
 * local OpenAI-compatible server. Import it from `taskline/testing` only; production code
 * importing `taskline` never loads it.
 *
 * @packageDocumentation
 */

export * from './expect.js';
export * from './linked-call.js';
export * from './openai-server.js';
export * from './scripted-llm.js';
export * from './simulated-caller.js';
export * from './virtual-clock.js';
