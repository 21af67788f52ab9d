/**
 * `navigateIvr`: finds the way through another company's phone menu to a goal ("reach
 * billing"), keying or saying what it asks for ("your 8-digit account number" → 12345678).
 * Deterministic first: each far-end utterance is read by taskline's rules (`readPrompt`),
 * the goal matched against the menu with the choice parser, the answers against what is
 * asked; the model is asked only when the rules find nothing to do. It notices loops (the
 * same prompt again, by text similarity), hold (hold announcements, or sound that is not
 * speech for long), a person answering (hand over, or bridge), a refused entry, and is
 * bounded by time, turns and model calls. Resolves a typed outcome with the path taken.
 *
 * Over 500 lines: one bounded navigation loop whose guards (loops, hold, a person, budgets) share its state.
 */
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { checkOptions, millis, type OptionTable, whole } from '../../core/options.js';
import { registerSecret } from '../../core/pii.js';
import { choice } from '../../tasks/parsers/choice.js';
import { logCall } from '../log.js';
import {
  type Transferer,
  type TransferMode,
  type TransferResult,
  transferCall,
} from '../transfer.js';
import { farEndOf } from './far-end.js';
import { FarEndTask } from './far-end-task.js';
import { normalizeHeard } from './greeting.js';
import { checkKeys, type KeySender } from './key-sender.js';
import { type InputRequest, type MenuChoice, readPrompt } from './prompt.js';
import { promptSimilarity } from './similarity.js';

/** A text matcher: a phrase (case-insensitive, found in the words) or a regular expression. */
export type TextMatcher = string | RegExp;

/** What to key or say when the IVR asks for something. */
export interface IvrAnswer {
  /** What the IVR asks for: "PIN", "account number", /date of birth/i. */
  when: TextMatcher;
  /** Keys to send ("12345678"); a finish key the IVR names ("followed by pound") is added. */
  keys?: string;
  /** Words to say, when the IVR wants speech. */
  say?: string;
  /** A secret (a PIN): masked in the path and logs, never shown to the model. */
  secret?: boolean;
  /** How the model may refer to it (default: `when` as written). */
  name?: string;
}

/** Where to go in the IVR, and what to answer on the way. */
export interface IvrGoal {
  /** The menu choice to reach ("billing", "your balance"), matched against what menus offer. */
  reach: string;
  /** Other names for it ("account balance"). */
  synonyms?: readonly string[];
  /** Answers to what the IVR may ask. */
  answers?: readonly IvrAnswer[];
  /**
   * The far end saying this means the goal is reached ("your balance is"). Without it, the
   * goal is reached when, after its choice was picked, the IVR says something that is not a
   * menu, a question or a hold message.
   */
  reachedWhen?: TextMatcher;
}

/** Options for {@link navigateIvr}. */
export interface NavigateIvrOptions extends IvrGoal {
  /** What the far end already said (callOut's `greeting`): read first. */
  greeting?: string;
  /** How keys reach the far end (default: the call's far end, set by the room entry). */
  keys?: KeySender;
  /** Far-end utterances read at most: 1 to 200 (default 30). */
  maxTurns?: number;
  /**
   * Longest the whole navigation may take: 5,000 to 3,600,000 ms (5 s to an hour; default
   * 180,000; hold time comes on top).
   */
  timeoutMs?: number;
  /** How often the same prompt may come back before it is a loop: 0 to 10 (default 1). */
  maxRepeats?: number;
  /**
   * Quiet this long after a menu without the goal: the model is asked, or it is stuck. 500 to
   * 60,000 ms (default 4,000 ms).
   */
  decideAfterMs?: number;
  /** Sound that is not speech for this long is hold music: 1,000 to 120,000 ms (default 15,000 ms). */
  holdAfterMs?: number;
  /** Longest hold: 10,000 to 14,400,000 ms (10 s to 4 hours; default 600,000). */
  maxHoldMs?: number;
  /** Ask the session's model when the rules find nothing to do (default true). */
  useModel?: boolean;
  /** Model calls at most: 0 to 20 (default 3). */
  maxModelCalls?: number;
  /** When a person answers: connect them to someone (cold or warm transfer); default: hand over. */
  bridge?: { transferer: Transferer; to: string; mode?: TransferMode; summary?: string };
}

/** The bounds of {@link NavigateIvrOptions} (time, turns, hold, model calls), with their accepted range. */
const NAVIGATION_BOUNDS = {
  maxTurns: { range: whole(1, 200) },
  timeoutMs: { range: millis(5_000, 3_600_000) },
  maxRepeats: { range: whole(0, 10) },
  decideAfterMs: { range: millis(500, 60_000) },
  holdAfterMs: { range: millis(1_000, 120_000) },
  maxHoldMs: { range: millis(10_000, 14_400_000) },
  maxModelCalls: { range: whole(0, 20) },
} as const satisfies OptionTable;

/** One step of the way: what was heard and what was done about it. */
export interface IvrStep {
  /** The far-end utterance (or sound) that led to it. */
  heard: string;
  did: 'keys' | 'said' | 'waited';
  /** Keys sent or words said (a secret shown as *); absent for a wait. */
  value?: string;
  /** Why: the goal's menu choice, an answer, the model, hold, or a prompt come back. */
  why: 'menu' | 'answer' | 'model' | 'hold' | 'repeat';
  /** The menu choice picked, as the IVR named it. */
  option?: string;
  /** Call-clock time. */
  at: number;
}

/** Why navigation got stuck. */
export type StuckReason =
  /** The same prompt kept coming back. */
  | 'loop'
  /** No menu choice matched the goal (and the model found none). */
  | 'no_option'
  /** The IVR asked for something no answer covers. */
  | 'no_answer'
  /** The IVR refused an answer (a wrong PIN): sending it again would not help. */
  | 'rejected'
  /** The model gave up, failed, or used up its calls. */
  | 'model'
  /** Keys could not be sent. */
  | 'keys_failed';

/** How navigating the IVR ended. */
export type IvrOutcome =
  /** The goal was reached; `heard` is what the far end said there. */
  | { status: 'reached'; heard: string; path: IvrStep[] }
  /** A person answered (`bridged`: the transfer made, when `bridge` was set). */
  | { status: 'human'; heard: string; path: IvrStep[]; bridged?: TransferResult }
  | { status: 'stuck'; reason: StuckReason; detail: string; heard: string; path: IvrStep[] }
  /** Time, turns or hold ran out. */
  | { status: 'timeout'; reason: string; path: IvrStep[] }
  | { status: 'hangup' | 'cancelled'; reason: string; path: IvrStep[] };

/** An outcome before its path is filled in. */
type WithoutPath<O> = O extends unknown ? Omit<O, 'path'> : never;

const SIMILAR = 0.8;
const MAX_HISTORY = 50;

function matches(matcher: TextMatcher, text: string): boolean {
  if (typeof matcher !== 'string') {
    matcher.lastIndex = 0;
    return matcher.test(text);
  }
  const phrase = normalizeHeard(matcher)
    .replace(/[^a-z0-9' ]+/g, ' ')
    .trim();
  const words = ` ${normalizeHeard(text).replace(/[^a-z0-9' ]+/g, ' ')} `;
  return phrase.length > 0 && words.includes(` ${phrase} `);
}

function answerName(answer: IvrAnswer): string {
  return answer.name ?? (typeof answer.when === 'string' ? answer.when : answer.when.source);
}

class IvrNavigatorTask extends FarEndTask<IvrOutcome> {
  private readonly options: NavigateIvrOptions;
  private readonly keys: KeySender | undefined;
  private readonly path: IvrStep[] = [];
  private readonly history: string[] = [];
  private turns = 0;
  private modelCalls = 0;
  private goalPicked = false;
  private lastHeard = '';
  private lastAnswer: IvrAnswer | undefined;
  private pendingMenu: { heard: string; options: MenuChoice[] } | undefined;
  private decide: { cancel(): void } | undefined;
  private holdCap: { cancel(): void } | undefined;
  private holding = false;
  private deadlinePassed = false;

  constructor(options: NavigateIvrOptions, keys: KeySender | undefined) {
    const answers = options.answers ?? [];
    super({
      id: 'ivr_navigator',
      instructions: [
        'You are on a phone call with an automated phone menu (IVR), on behalf of a caller.',
        `Goal: reach "${options.reach}".`,
        answers.length
          ? `Answers you may give when asked (use enter_answer with the name): ${answers.map(answerName).join(', ')}.`
          : 'You have no answers to give; do not invent any.',
        'Each user message is what the IVR said. Pick exactly one tool: press_keys for a menu choice that leads to the goal, enter_answer when it asks for one of your answers, say_to_ivr when it wants spoken words, wait_for_more when it is still talking or you need to hear more, report_human when a person is speaking, give_up when the goal cannot be reached. Never guess digits you were not given.',
      ].join('\n'),
      tools: [],
    });
    this.options = options;
    this.keys = keys;
    // No activity yet: the tools are set on the task itself, at once.
    void this.updateTools(this.modelTools());
  }

  protected unwound(status: 'hangup' | 'cancelled', reason: string): IvrOutcome {
    return { status, reason, path: [...this.path] };
  }

  protected begin(): void {
    const call = this.call!;
    const farEnd = farEndOf(this.agentSession!);
    farEnd.listenToAudio();
    const timeoutMs = this.options.timeoutMs ?? 180_000;
    this.timer(timeoutMs, () => {
      // Hold time comes on top: a hold has its own bound, and the deadline applies after it.
      if (this.holding) this.deadlinePassed = true;
      else this.end({ status: 'timeout', reason: `not done within ${timeoutMs} ms` });
    });
    const holdAfterMs = this.options.holdAfterMs ?? 15_000;
    this.onEnd(
      farEnd.on('sound', (sound) => {
        if (sound.sinceMs >= holdAfterMs && !this.holding) this.startHold('(hold music)');
      }),
    );
    if (!this.keys) {
      logCall(call, 'warn', 'ivr: no way to send keys (no room, no key sender given)');
    }
    const greeting = this.options.greeting?.trim();
    if (greeting) this.hear(greeting);
  }

  protected hear(text: string): void {
    if (this.finished) return;
    this.turns += 1;
    this.lastHeard = text;
    const maxTurns = this.options.maxTurns ?? 30;
    if (this.turns > maxTurns) {
      this.end({ status: 'timeout', reason: `not done within ${maxTurns} prompts` });
      return;
    }
    this.decide?.cancel();
    const reading = readPrompt(text);
    const reachedWhen = this.options.reachedWhen;
    if (reachedWhen !== undefined && matches(reachedWhen, text)) {
      this.end({ status: 'reached', heard: text });
      return;
    }
    if (reading.human) {
      this.end({ status: 'human', heard: text });
      return;
    }
    if (reading.hold && reading.options.length === 0 && !reading.request) {
      this.startHold(text);
      return;
    }
    this.stopHold();
    if (this.deadlinePassed) {
      this.end({
        status: 'timeout',
        reason: `not done within ${this.options.timeoutMs ?? 180_000} ms (hold time not counted)`,
      });
      return;
    }
    const repeats = this.history.filter((h) => promptSimilarity(h, text) >= SIMILAR).length;
    this.history.push(text);
    if (this.history.length > MAX_HISTORY) this.history.shift();
    const maxRepeats = this.options.maxRepeats ?? 1;
    if (repeats > maxRepeats) {
      this.stuck('loop', `the same prompt came back ${repeats + 1} times`, text);
      return;
    }
    const why = repeats > 0 ? 'repeat' : undefined;
    if (reading.request) {
      const answer = this.answerFor(reading.request, text);
      if (answer) {
        if (reading.rejected && this.lastAnswer === answer) {
          this.stuck('rejected', `the IVR refused the answer for "${answerName(answer)}"`, text);
          return;
        }
        this.answer(answer, reading.request, text, why);
        return;
      }
      if (reading.options.length === 0) {
        this.fallback('no_answer', `nothing to answer "${reading.request.what}"`, text);
        return;
      }
    }
    if (reading.options.length > 0) {
      const pick = this.pick(reading.options);
      if (pick) {
        this.choose(pick, text, why ?? 'menu');
        return;
      }
      // The menu may go on in the next utterance: wait for the line to go quiet first.
      this.pendingMenu = {
        heard: text,
        options: [...(this.pendingMenu?.options ?? []), ...reading.options],
      };
      this.armDecide();
      return;
    }
    if (this.goalPicked && reachedWhen === undefined && !reading.rejected) {
      this.end({ status: 'reached', heard: text });
      return;
    }
  }

  private answerFor(request: InputRequest, text: string): IvrAnswer | undefined {
    const answers = this.options.answers ?? [];
    return (
      answers.find((a) => matches(a.when, request.what)) ??
      answers.find((a) => matches(a.when, text))
    );
  }

  private pick(options: MenuChoice[]): MenuChoice | undefined {
    const choices = options.map((o, i) => ({ value: String(i), label: o.label }));
    for (const name of [this.options.reach, ...(this.options.synonyms ?? [])]) {
      const r = choice(name, choices);
      if (r.kind === 'match') return options[Number(r.value)];
    }
    return undefined;
  }

  private choose(option: MenuChoice, heard: string, why: IvrStep['why']): void {
    this.pendingMenu = undefined;
    this.goalPicked = true;
    if (option.key) this.sendKeys(option.key, option.key, heard, why, option.label);
    else if (option.say) this.speak(option.say, heard, why, option.label);
  }

  private answer(
    answer: IvrAnswer,
    request: InputRequest,
    heard: string,
    why: IvrStep['why'] | undefined,
  ): void {
    this.lastAnswer = answer;
    const speech = request.via === 'speech' ? (answer.say ?? undefined) : undefined;
    if (answer.keys && !speech) {
      let keys = answer.keys;
      if (request.finishKey && !keys.endsWith(request.finishKey)) keys += request.finishKey;
      if (answer.secret) registerSecret(answer.keys);
      const shown = answer.secret ? keys.replace(/[0-9A-D]/g, '*') : keys;
      this.sendKeys(keys, shown, heard, why ?? 'answer');
    } else if (answer.say ?? speech) {
      if (answer.secret) registerSecret(answer.say!);
      this.speak(answer.say!, heard, why ?? 'answer', undefined, answer.secret);
    }
  }

  private sendKeys(
    keys: string,
    shown: string,
    heard: string,
    why: IvrStep['why'],
    option?: string,
  ): void {
    const at = this.call!.clock.now();
    this.path.push({ heard, did: 'keys', value: shown, why, ...(option ? { option } : {}), at });
    logCall(this.call, 'info', 'ivr: keys', { keys: shown, why, option });
    if (!this.keys) {
      this.stuck('keys_failed', 'no way to send keys on this call', heard);
      return;
    }
    this.keys.send(keys).catch((error: unknown) => {
      this.stuck(
        'keys_failed',
        `sending keys failed: ${error instanceof Error ? error.message : String(error)}`,
        heard,
      );
    });
  }

  private speak(
    text: string,
    heard: string,
    why: IvrStep['why'],
    option?: string,
    secret?: boolean,
  ): void {
    const at = this.call!.clock.now();
    const value = secret ? '*'.repeat(text.length) : text;
    this.path.push({ heard, did: 'said', value, why, ...(option ? { option } : {}), at });
    this.say(text);
  }

  private armDecide(): void {
    this.decide?.cancel();
    const ms = this.options.decideAfterMs ?? 4_000;
    this.decide = this.timer(ms, () => {
      const menu = this.pendingMenu;
      if (!menu) return;
      if (this.goalPicked && this.options.reachedWhen === undefined) {
        this.end({ status: 'reached', heard: menu.heard });
        return;
      }
      this.fallback(
        'no_option',
        `no choice for "${this.options.reach}" in: ${menu.options.map((o) => o.label).join('; ')}`,
        menu.heard,
      );
    });
  }

  private startHold(heard: string): void {
    if (!this.holding) {
      this.holding = true;
      this.path.push({ heard, did: 'waited', why: 'hold', at: this.call!.clock.now() });
      logCall(this.call, 'info', 'ivr: on hold');
      const maxHoldMs = this.options.maxHoldMs ?? 600_000;
      this.holdCap = this.timer(maxHoldMs, () =>
        this.end({ status: 'timeout', reason: `on hold for more than ${maxHoldMs} ms` }),
      );
    }
  }

  private stopHold(): void {
    this.holding = false;
    this.holdCap?.cancel();
    this.holdCap = undefined;
  }

  /** The rules found nothing to do: the model decides, or navigation is stuck. */
  private fallback(reason: StuckReason, detail: string, heard: string): void {
    const max = this.options.maxModelCalls ?? 3;
    if (this.options.useModel === false || this.modelCalls >= max || !this.agentSession?.llm) {
      this.stuck(reason, detail, heard);
      return;
    }
    this.modelCalls += 1;
    this.stuckIfSilent = { reason, detail, heard };
    this.askModel();
  }

  private stuckIfSilent: { reason: StuckReason; detail: string; heard: string } | undefined;

  protected override modelFailed(error: Error): void {
    super.modelFailed(error);
    this.stuck('model', `the model failed: ${error.message}`, this.lastHeard);
  }

  protected override modelDidNothing(): void {
    const pending = this.stuckIfSilent;
    if (pending)
      this.stuck(pending.reason, `${pending.detail} (the model chose no action)`, pending.heard);
  }

  private stuck(reason: StuckReason, detail: string, heard: string): void {
    this.end({ status: 'stuck', reason, detail, heard });
  }

  /** Ends with `outcome`, its path filled in. */
  private end(outcome: WithoutPath<IvrOutcome>): void {
    if (this.finished) return;
    logCall(this.call, 'info', `ivr: ${outcome.status}`, {
      reason: 'reason' in outcome ? outcome.reason : undefined,
      steps: this.path.length,
    });
    this.finish({ ...outcome, path: [...this.path] } as IvrOutcome);
  }

  private modelTools(): llm.ToolContextEntry[] {
    const heardNow = () => this.lastHeard;
    const acted = () => {
      this.stuckIfSilent = undefined;
      this.pendingMenu = undefined;
    };
    return [
      llm.tool({
        name: 'press_keys',
        description: 'Press phone keys (a menu choice): digits, * or #.',
        parameters: z.object({ keys: z.string().regex(/^[0-9*#]{1,12}$/) }),
        execute: async ({ keys }) => {
          checkKeys(keys);
          acted();
          this.goalPicked = true;
          this.sendKeys(keys, keys, heardNow(), 'model');
          return `pressed ${keys}`;
        },
      }),
      llm.tool({
        name: 'enter_answer',
        description: 'Key or say one of your answers, by name, when the IVR asks for it.',
        parameters: z.object({ name: z.string() }),
        execute: async ({ name }) => {
          const answer = (this.options.answers ?? []).find((a) => answerName(a) === name);
          if (!answer) throw new llm.ToolError(`No answer named "${name}".`);
          acted();
          this.answer(
            answer,
            { what: name, via: answer.keys ? 'keys' : 'speech' },
            heardNow(),
            'model',
          );
          return `entered ${name}`;
        },
      }),
      llm.tool({
        name: 'say_to_ivr',
        description: 'Say words to the IVR (when it asks for speech).',
        parameters: z.object({ text: z.string().min(1).max(200) }),
        execute: async ({ text }) => {
          acted();
          this.path.push({
            heard: heardNow(),
            did: 'said',
            value: text,
            why: 'model',
            at: this.call!.clock.now(),
          });
          this.say(text);
          return 'said';
        },
      }),
      llm.tool({
        name: 'wait_for_more',
        description: 'Do nothing yet: the IVR is still talking or more is needed.',
        parameters: z.object({}),
        execute: async () => {
          acted();
          return 'waiting';
        },
      }),
      llm.tool({
        name: 'report_human',
        description: 'A person (not a recording) is speaking.',
        parameters: z.object({}),
        execute: async () => {
          acted();
          this.end({ status: 'human', heard: heardNow() });
          return 'noted';
        },
      }),
      llm.tool({
        name: 'give_up',
        description: 'The goal cannot be reached from here.',
        parameters: z.object({ reason: z.string().max(300) }),
        execute: async ({ reason }) => {
          const pending = this.stuckIfSilent;
          acted();
          this.stuck(pending?.reason ?? 'model', `the model gave up: ${reason}`, heardNow());
          return 'ok';
        },
      }),
    ];
  }
}

/**
 * Navigates the far end's IVR towards `options.reach` (see {@link NavigateIvrOptions}), then
 * — when a person answered and `bridge` is set — transfers them (cold or warm). Run it in
 * `onEnter` or a tool, typically after `callOut` said `ivr`, passing its `greeting`.
 *
 * @example
 * const route = await navigateIvr(this.session, {
 *   reach: 'appointments', greeting: answered.greeting,
 *   answers: [{ when: 'account number', keys: '12345678' }],
 * });
 */
export async function navigateIvr(
  session: Parameters<typeof farEndOf>[0],
  options: NavigateIvrOptions,
): Promise<IvrOutcome> {
  // A bad bound is refused before the navigation waits on it (an unchecked one could end at once).
  checkOptions(NAVIGATION_BOUNDS, options, { owner: 'navigateIvr' });
  for (const answer of options.answers ?? []) {
    if (answer.keys !== undefined) checkKeys(answer.keys);
  }
  const keys = options.keys ?? farEndOf(session).keys;
  const outcome = await new IvrNavigatorTask(options, keys).run();
  const bridge = options.bridge;
  if (outcome.status !== 'human' || !bridge) return outcome;
  const moved = await transferCall(bridge.transferer, {
    to: bridge.to,
    mode: bridge.mode ?? 'cold',
    summary:
      bridge.summary ?? `Reached a person at the far end while navigating to ${options.reach}`,
    session,
  });
  const bridged: TransferResult =
    moved.status === 'transferred'
      ? { ok: true, mode: bridge.mode ?? 'cold', to: bridge.to }
      : {
          ok: false,
          mode: bridge.mode ?? 'cold',
          to: bridge.to,
          reason: moved.reason ?? moved.status,
        };
  return { ...outcome, bridged };
}
