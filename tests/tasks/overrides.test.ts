// Issue 24, item 2: a per-use override merges into the definition's policies (a retry override
// that only adds `onExhausted` keeps the definition's caps and re-prompts), for every kind of
// definition: typed tasks, digit collection and menus, through `create`, `run` and `with`.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import type { FailedOutcome, Outcome } from '../../src/outcome.js';
import { digits, yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { menu } from '../../src/telephony/menu.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

/** An escalation that records the failure it was given and resolves `transferred`. */
function escalation() {
  const seen: FailedOutcome[] = [];
  const onExhausted = async (outcome: FailedOutcome): Promise<FailedOutcome> => {
    seen.push(outcome);
    return { status: 'transferred', attempts: outcome.attempts, reason: 'to a pharmacist' };
  };
  return { seen, onExhausted };
}

/** Runs `start()` from an agent's onEnter and keeps its outcome. */
async function call<T>(start: () => Promise<Outcome<T>>) {
  const outcomes: Outcome<T>[] = [];
  class Line extends voice.Agent {
    override async onEnter(): Promise<void> {
      outcomes.push(await start());
    }
  }
  caller = await SimulatedCaller.start({
    agent: new Line({ instructions: 'line' }),
    llm: new ScriptedLLM(),
  });
  return { caller, outcomes };
}

const transferred = { status: 'transferred', attempts: 2, reason: 'to a pharmacist' };

describe('a retry override merges into the definition', () => {
  const rxNumber = digits({
    name: 'rx_number',
    question: 'What is your 7-digit prescription number?',
    minLength: 7,
    maxLength: 7,
    modelFallback: false,
    retry: { maxNoMatch: 2 },
  });

  it('typed task `.with({ retry: { onExhausted } })` keeps the maxNoMatch of the definition', async () => {
    const { seen, onExhausted } = escalation();
    const def = rxNumber.with({ retry: { onExhausted } });
    expect(def.spec.retry?.maxNoMatch).toBe(2);
    const { caller, outcomes } = await call(() => def.run());
    await caller.say('I lost the bottle');
    await caller.say('no idea, sorry');
    expect(seen.map((o) => o.reason)).toEqual(['not understood 2 times']);
    expect(outcomes).toEqual([transferred]);
  });

  it('typed task `run({ retry })` merges too', async () => {
    const { seen, onExhausted } = escalation();
    const { caller, outcomes } = await call(() => rxNumber.run({ retry: { onExhausted } }));
    await caller.say('I lost the bottle');
    await caller.say('no idea, sorry');
    expect(seen).toHaveLength(1);
    expect(outcomes).toEqual([transferred]);
  });

  it('re-prompt lists merge per kind: an override of one kind keeps the others', async () => {
    const consent = yesNo({
      name: 'consent',
      question: 'May we record this call?',
      modelFallback: false,
      retry: { prompts: { noMatch: ['Please answer yes or no.'] }, noInputTimeoutMs: 2000 },
    }).with({ retry: { prompts: { noInput: ['Are you there? Yes or no?'] } } });
    const { caller } = await call(() => consent.run());
    await caller.say('purple');
    expect(caller.agentLines.at(-1)).toBe('Please answer yes or no.');
    await caller.silence(2000);
    expect(caller.agentLines.at(-1)).toBe('Are you there? Yes or no?');
  });

  it('collectDigits `.with({ retry: { onExhausted } })` keeps the maxInvalid of the definition', async () => {
    const { seen, onExhausted } = escalation();
    const pin = collectDigits({
      name: 'pin',
      prompt: 'Enter your 4-digit PIN.',
      minDigits: 4,
      maxDigits: 4,
      retry: { maxInvalid: 2 },
    }).with({ retry: { onExhausted } });
    const { caller, outcomes } = await call(() => pin.run());
    await caller.dtmf('12#');
    await caller.dtmf('34#');
    expect(seen.map((o) => o.reason)).toEqual(['invalid answer 2 times']);
    expect(outcomes).toEqual([transferred]);
  });

  it('menu `create({ retry })` keeps the maxInvalid of the definition', async () => {
    const { seen, onExhausted } = escalation();
    const main = menu({
      name: 'main_menu',
      prompt: 'Welcome.',
      options: {
        '1': { label: 'a prescription refill', value: 'refill' },
        '2': { label: 'store hours', value: 'hours' },
      },
      retry: { maxInvalid: 2 },
    });
    const { caller, outcomes } = await call(() => main.create({ retry: { onExhausted } }).run());
    await caller.dtmf('7');
    await caller.dtmf('8');
    expect(seen.map((o) => o.reason)).toEqual(['invalid answer 2 times']);
    expect(outcomes).toEqual([transferred]);
  });
});
