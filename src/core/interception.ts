/**
 * Requests a caller makes that are not answers to the question being asked — "can you say
 * that again", "cancel this call", "agent", key 0 — heard once for a whole call instead of in
 * every capture. Whoever runs the call (a flow's repair patterns) registers a
 * {@link TurnInterceptor} on the call; the active capture offers it each caller turn and each
 * key it does not take as its own input, before its own parser reads the turn, and acts on
 * what comes back. The capture layer never learns who listens, and the listener never needs
 * to know how a capture works.
 */
/** One caller turn (words, or a key the capture does not take), as a capture offers it. */
export interface InterceptedTurn {
  /** The capture offering it (an interceptor acts only for the captures it knows). */
  readonly task: object;
  /** The caller's words as transcribed or typed, or the key pressed. */
  readonly text: string;
  /** How it arrived (the call's `InputModality`). */
  readonly modality: 'speech' | 'dtmf' | 'text';
  /**
   * The capture's own parser reads these words as an answer to its question (a free-text
   * question excepted: any words answer it). An interceptor takes such a turn only for a
   * request that cannot be that answer: "no" at a yes/no question is an answer, not a
   * cancel; "zero" at a digits question is a digit. Always false for a key.
   */
  readonly answers: boolean;
  /**
   * The question takes any words as its answer (free text): only words clearly addressed
   * to the call may be a request ("can I talk to someone", not "the pharmacist").
   */
  readonly open?: boolean;
}

/** What the capture does with a turn an interceptor took. */
export type TurnAction =
  /** Say `preface` (if any), then the pending question again; nothing is counted as a failure. */
  | { kind: 'repeat'; preface?: string }
  /** End the capture now with this outcome (the interceptor acts on it once the capture ends). */
  | { kind: 'end'; status: 'declined' | 'cancelled'; reason: string };

/** Hears caller turns before the active capture's parser does (see {@link InterceptedTurn}). */
export interface TurnInterceptor {
  /** What to do with the turn, or undefined to leave it to the capture. Must not throw. */
  intercept(turn: InterceptedTurn): TurnAction | undefined;
}
