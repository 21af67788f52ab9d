/**
 * The callback demo: a stand-in model and the demo caller (only this file imports the
 * testing kit; the bot in `index.ts` does not).
 */
import type { CallerTurn } from 'taskline';
import { ScriptedLLM } from 'taskline/testing';
import { CallbackDesk, type CallbackRequest } from './index.js';

/** The model of the demo: books the callback, then confirms it (or says goodbye without one). */
export function createScriptedModel(): ScriptedLLM {
  return new ScriptedLLM().for(CallbackDesk, [
    { toolCalls: [{ name: 'book_callback' }] },
    (request) => {
      const booking = request.lastToolOutput?.value as CallbackRequest | string;
      // No booking (the caller cancelled, or was put through to the front desk).
      if (typeof booking === 'string')
        return { say: 'Okay. Thank you for calling Acme Insurance.' };
      return { say: `Done: we will call ${booking.name.first} at ${booking.time}.` };
    },
  ]);
}

/** The demo caller. */
export const demoScript: CallerTurn[] = [
  { say: 'Could someone call me back about my claim?' },
  { say: 'Jane Doe' },
  { say: 'yes' },
  { say: 'four one five, five five five, zero one nine nine' },
  { say: 'yes' },
  { say: 'half past three' },
  { say: 'yes please' },
];
