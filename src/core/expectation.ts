/**
 * What the agent is listening for right now. The active capture task (a typed task, digits,
 * a menu) publishes one on its call while it waits for an answer, so the parts that hear the
 * caller can use it without knowing the task: a recogniser favours the expected words (hints
 * per question), and the turn detector ends the caller's turn as soon as what was said is a
 * complete answer.
 */

/** The kind of answer a capture expects: recognisers with built-in classes map it. */
export type AnswerKind =
  | 'digits'
  | 'number'
  | 'yesNo'
  | 'choice'
  | 'date'
  | 'time'
  | 'email'
  | 'phone'
  | 'name'
  | 'address'
  | 'freeText'
  | 'custom';

/**
 * Whether the caller's words so far answer the question: `complete` ends the turn early,
 * `incomplete` (a digit string too short, "my number is") waits for more, `unknown` leaves
 * the timing to the session's own end-of-turn settings.
 */
export type TurnJudgement = 'complete' | 'incomplete' | 'unknown';

/** The active capture's expectation: hints for a recogniser and a judge of complete answers. */
export interface Expectation {
  /** Name of the capture (its step id), for logs and reports. */
  readonly task: string;
  /** The kind of answer expected. */
  readonly kind: AnswerKind;
  /**
   * Words and phrases a recogniser should favour for this question: the menu's options and
   * synonyms, the yes/no words, digit words, the names on a list. May be empty.
   */
  readonly phrases: readonly string[];
  /** Judges the caller's words so far (the whole utterance, as transcribed). Never throws. */
  judge(text: string): TurnJudgement;
  /** True while the capture reads a value back and waits for the caller to confirm or correct it. */
  readonly readingBack?: boolean;
}
