/**
 * Text mode: the scenario's caller is taskline's SimulatedCaller — speech as text, keys
 * through the call context, silence on a virtual clock — so a run takes milliseconds.
 */
import { performance } from 'node:perf_hooks';
import { voice } from '@livekit/agents';
import { SimulatedCaller, type TranscriptLine } from '../testing/simulated-caller.js';
import { isSessionClosing } from '../upstream/internals.js';
import type { CallDriver, CallMode, TurnMeasure } from './driver.js';
import type { TurnSpec } from './schema.js';

/** The text mode (no audio, virtual time). */
export const textMode: CallMode = {
  name: 'text',
  async sessionOptions() {
    return {};
  },
  attach(session, callId) {
    return new TextDriver(session, callId);
  },
  async close() {},
};

/**
 * Plays one scenario turn with the simulated caller — the one way `taskline test` (text
 * mode) and `taskline run` play caller turns (see `SimulatedCaller.playTurn`).
 */
export function playTurn(c: SimulatedCaller, turn: TurnSpec): Promise<void> {
  return c.playTurn(turn);
}

/** Longest a single turn may take in real time before the scenario fails as hung. */
const TURN_GUARD_MS = 60_000;

class TextDriver implements CallDriver {
  private readonly caller: SimulatedCaller;
  private firstAgentLineAt: number | undefined;
  private interruptions = 0;

  constructor(session: voice.AgentSession, callId: string) {
    this.caller = new SimulatedCaller(session, {
      callId,
      // A turn's real-time hang guard: generous because a turn may cold-start a sandbox
      // (pyodide takes ~10 s on a loaded 2-core machine); the pool still caps the whole file.
      guardMs: TURN_GUARD_MS,
      onLine: (line: TranscriptLine) => {
        if (line.role === 'agent') this.firstAgentLineAt ??= performance.now();
      },
    });
    session.on(voice.AgentSessionEventTypes.SpeechCreated, ({ speechHandle }) => {
      speechHandle.addDoneCallback((h) => {
        if (h.interrupted) this.interruptions += 1;
      });
    });
  }

  get transcript(): readonly TranscriptLine[] {
    return this.caller.transcript;
  }

  get visited(): readonly string[] {
    return this.caller.visited;
  }

  get isClosed(): boolean {
    // A call that is closing (the bot ended it) takes no more turns either.
    return this.caller.isClosed || isSessionClosing(this.caller.session);
  }

  async start(agent: voice.Agent): Promise<void> {
    await this.caller.session.start({ agent });
    await this.caller.settle();
  }

  async perform(turn: TurnSpec): Promise<TurnMeasure> {
    const interruptedBefore = this.interruptions;
    this.firstAgentLineAt = undefined;
    const startedAt = performance.now();
    await playTurn(this.caller, turn);
    const answered = this.firstAgentLineAt;
    return {
      ...(answered !== undefined ? { latencyMs: answered - startedAt } : {}),
      interruptions: this.interruptions - interruptedBefore,
    };
  }

  close(): Promise<void> {
    return this.caller.close();
  }
}
