// Repair patterns declared once per flow and heard in every step: correct an earlier answer,
// repeat, skip, cancel, a person (words and a key); a step turns any off.
import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { flow } from '../../src/flows/builder.js';
import { MemoryCheckpointStore } from '../../src/flows/checkpoints/index.js';
import { checkFlowText, parseFlow } from '../../src/flows/document/load.js';
import { stringifyFlow, toData } from '../../src/flows/document/to-data.js';
import type { Escalate, FlowResult } from '../../src/flows/types.js';
import { repair as readRepair } from '../../src/tasks/parsers/repair.js';
import { date, digits, freeText, number, yesNo } from '../../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const DOB_Q = 'What is your date of birth?';
const ZIP_Q = 'What is your zip code?';
const SCORE_Q = 'From 0 to 10, how was your visit?';
const WHY_Q = 'Anything we could do better?';
const PIN_Q = 'Please key your 4-digit PIN.';
const OK_Q = 'Shall I send you a receipt?';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

function build(transfers: string[], transfer: 'transferred' | 'fails' = 'transferred') {
  const toPharmacist: Escalate<unknown> = async (outcome, ctx) => {
    transfers.push(`${ctx.step}: ${outcome.reason}`);
    return transfer === 'transferred'
      ? { status: 'transferred', attempts: 1, reason: 'to the pharmacist' }
      : { status: 'cancelled', attempts: 1, reason: 'no one answered' };
  };
  return flow('refill')
    .step('date_of_birth', date({ name: 'dob', question: DOB_Q, modelFallback: false }))
    .step(
      'zip',
      digits({
        name: 'zip',
        question: ZIP_Q,
        minLength: 5,
        maxLength: 5,
        confirm: 'always',
        modelFallback: false,
      }),
      {
        repair: { names: ['zip', 'zip code'] },
      },
    )
    .step(
      'score',
      number({
        name: 'score',
        question: SCORE_Q,
        min: 0,
        max: 10,
        keypad: true,
        modelFallback: false,
      }),
    )
    .step('why', freeText({ name: 'why', question: WHY_Q }), { skippable: true })
    .step(
      'pin',
      digits({
        name: 'pin',
        question: PIN_Q,
        minLength: 4,
        maxLength: 4,
        keypad: { maxDigits: 4 },
        mask: true,
        modelFallback: false,
      }),
      {
        repair: { cancel: false },
      },
    )
    .step('receipt', yesNo({ name: 'receipt', question: OK_Q, modelFallback: false }))
    .repair({ human: { words: ['pharmacist'], key: '0', escalate: toPharmacist } });
}

async function start(f: ReturnType<typeof build>, checkpoints?: MemoryCheckpointStore) {
  const box: { result?: FlowResult<unknown> } = {};
  class Host extends voice.Agent {
    constructor() {
      super({ instructions: 'host' });
    }
    override async onEnter(): Promise<void> {
      box.result = await f.run(checkpoints ? { checkpoints } : {});
    }
  }
  caller = await SimulatedCaller.start({
    agent: new Host(),
    llm: new ScriptedLLM(),
    callId: 'call-1',
  });
  return { caller, box };
}

const last = () => caller!.agentLines.at(-1);

describe('repair patterns', () => {
  it('takes a correction of an earlier answer with that step’s parser, then returns to where the caller was', async () => {
    const store = new MemoryCheckpointStore();
    const { caller: c, box } = await start(build([]), store);
    await c.say('March 4th 1980');
    await c.say('9 4 1 1 0');
    await c.say('yes');
    expect(last()).toBe(SCORE_Q);
    await c.say('actually my date of birth is March 3rd 1980');
    // One turn: the acknowledgement and the question the caller was at.
    expect(last()).toBe(
      `Okay, I've changed your date of birth to Monday, March 3, 1980. ${SCORE_Q}`,
    );
    await c.say('8');
    await c.say('skip');
    expect(last()).toBe(PIN_Q);
    await c.dtmf('1234#');
    await c.say('no');
    const r = box.result!;
    expect(r.status).toBe('completed');
    expect(r.answers).toMatchObject({
      date_of_birth: '1980-03-03',
      zip: '94110',
      score: 8,
      receipt: false,
    });
    expect(r.report.steps.map((s) => [s.step, s.outcome, s.repairs ?? []])).toEqual([
      ['date_of_birth', 'ok', []],
      ['zip', 'ok', []],
      ['score', 'back', ['correct']],
      ['date_of_birth', 'corrected', []],
      ['score', 'ok', []],
      ['why', 'skipped', ['skip']],
      ['pin', 'ok', []],
      ['receipt', 'ok', []],
    ]);
    expect(r.report.repairs).toEqual({ correct: 1, skip: 1 });
    // Checkpointed: the stored records hold each repair event.
    const saved = await store.load({ flow: 'refill', callId: 'call-1' });
    expect(saved?.state.records.flatMap((x) => x.repairs ?? [])).toEqual(['correct', 'skip']);
  });

  it('never stores a corrected value the caller did not confirm: the corrected step’s read-back applies', async () => {
    const { caller: c, box } = await start(build([]));
    await c.say('March 4th 1980');
    await c.say('9 4 1 1 0');
    await c.say('yes');
    await c.say('sorry, my zip code is 94103 not 94110');
    expect(last()).toBe('I have 9 4 1, 0 3. Is that right?');
    await c.say('no');
    // The read-back was refused: the question again, the old answer still held.
    expect(last()).toContain(ZIP_Q);
    expect(c.agentLines.join('\n')).not.toContain("I've changed your zip");
    await c.say('94117');
    await c.say('yes');
    expect(last()).toBe(`Okay, I've changed your zip to 9 4 1, 1 7. ${SCORE_Q}`);
    await c.say('stop');
    await c.say('yes');
    expect(box.result?.answers).toMatchObject({ zip: '94117' });
  });

  it('reads "no" at a yes/no question as the answer, and "stop" as a cancel it confirms first', async () => {
    const { caller: c, box } = await start(build([]));
    await c.say('March 4th 1980');
    await c.say('stop');
    expect(last()).toBe('Do you want to end this call now?');
    await c.say('no');
    expect(last()).toBe(`Okay, let's carry on. ${ZIP_Q}`);
    await c.say('9 4 1 1 0');
    await c.say('yes');
    await c.say('7');
    await c.say('the wait was long');
    await c.dtmf('1234#');
    await c.say('no');
    const r = box.result!;
    expect(r.status).toBe('completed');
    expect(r.answers).toMatchObject({ receipt: false, why: 'the wait was long' });
    expect(r.report.steps[1]).toMatchObject({
      step: 'zip',
      outcome: 'interrupted',
      repairs: ['cancel'],
    });
  });

  it('ends the call cancelled on a confirmed cancel, with the request in the result', async () => {
    const { caller: c, box } = await start(build([]));
    await c.say('I want to hang up');
    await c.say('yes');
    const r = box.result!;
    expect(r.status).toBe('cancelled');
    if (r.status === 'completed') throw new Error('completed');
    expect(r.repair).toBe('cancel');
    expect(r.report.steps.at(-1)).toMatchObject({
      step: 'date_of_birth',
      outcome: 'cancelled',
      repairs: ['cancel'],
    });
  });

  it('reaches a person by the line’s own word or key 0, but key 0 at a digits question is a digit', async () => {
    const transfers: string[] = [];
    const { caller: c, box } = await start(build(transfers));
    await c.say('March 4th 1980');
    await c.say('9 4 1 1 0');
    await c.say('yes');
    // 0 is the score question's own key: part of "10", not a request for a person.
    await c.dtmf('10');
    expect(last()).toBe(WHY_Q);
    await c.say('can I talk to the pharmacist');
    const r = box.result!;
    expect(r.status).toBe('transferred');
    if (r.status === 'completed') throw new Error('completed');
    expect(r.repair).toBe('human');
    expect(transfers).toEqual(['why: the caller asked for a person']);
    expect(r.answers).toMatchObject({ zip: '94110', score: 10 });
  });

  it('asks the question again when the transfer fails, and asks no one again in the call', async () => {
    const transfers: string[] = [];
    const { caller: c, box } = await start(build(transfers, 'fails'));
    await c.dtmf('0');
    expect(last()).toBe(`Sorry, no one can take your call right now. Let's carry on. ${DOB_Q}`);
    await c.say('agent');
    expect(last()).toContain(DOB_Q);
    expect(transfers).toHaveLength(1);
    await c.say('I want to hang up');
    await c.say('yes');
    expect(box.result?.report.steps[0]).toMatchObject({
      outcome: 'interrupted',
      repairs: ['human'],
    });
  });

  it('repeats the question on "what?" without counting a failure, and refuses to skip a required step', async () => {
    const { caller: c, box } = await start(build([]));
    await c.say('what?');
    expect(c.agentLines).toEqual([DOB_Q, DOB_Q]);
    await c.say('skip this one');
    expect(c.agentLines.slice(-1)[0]).toBe(`Sorry, I need an answer to this one. ${DOB_Q}`);
    await c.say('March 4th 1980');
    await c.say('goodbye');
    await c.say('yes');
    const first = box.result!.report.steps[0]!;
    expect(first).toMatchObject({ outcome: 'ok', noMatch: 0, repairs: ['repeat', 'skip'] });
  });

  it('hears no cancel at a step that turns it off, and no bare person noun in a free-text answer', async () => {
    const transfers: string[] = [];
    const { caller: c, box } = await start(build(transfers));
    await c.say('March 4th 1980');
    await c.say('9 4 1 1 0');
    await c.say('yes');
    await c.say('3');
    await c.say('the pharmacist');
    expect(last()).toBe(PIN_Q);
    await c.say('stop');
    expect(last()).not.toBe('Do you want to end this call now?');
    await c.dtmf('1234#');
    await c.say('yes');
    const r = box.result!;
    expect(r.status).toBe('completed');
    expect(r.answers).toMatchObject({ why: 'the pharmacist', receipt: true });
    expect(transfers).toEqual([]);
  });
});

describe('the repair phrase parser', () => {
  it('says nomatch for requests buried in an answer', () => {
    const opts = { humanWords: ['pharmacist'] };
    expect(readRepair('I want to speak to my pharmacist about my refill', opts).kind).toBe(
      'nomatch',
    );
    expect(readRepair('no', opts).kind).toBe('nomatch');
    expect(readRepair('pharmacist', { ...opts, openAnswer: true }).kind).toBe('nomatch');
    expect(readRepair('pharmacist', opts)).toEqual({ kind: 'match', value: { kind: 'human' } });
  });
});

describe('declaring repairs', () => {
  it('refuses a bad declaration with a message a person can act on', () => {
    const q = yesNo({ name: 'a', question: 'a?' });
    const noop: Escalate<unknown> = async () => ({ status: 'cancelled', attempts: 0 });
    expect(() =>
      flow('f')
        .step('a', q)
        .repair({ human: { key: '0' } as never }),
    ).toThrow(/human needs \{ escalate \}/);
    expect(() =>
      flow('f')
        .step('a', q)
        .repair({ repeat: { key: '0' }, human: { key: '0', escalate: noop } }),
    ).toThrow(/both to repeat and for a person/);
    expect(() =>
      flow('f')
        .step('a', q)
        .repair({ human: { key: '11', escalate: noop } }),
    ).toThrow(/one key/);
    expect(() => flow('f').step('a', q, { repair: { cancle: false } as never })).toThrow(
      /has no option "cancle"/,
    );
  });
});

describe('repairs in flow documents', () => {
  const transfer: Escalate<unknown> = async () => ({ status: 'transferred', attempts: 1 });
  const text = [
    'flow: refill',
    'version: 2',
    'repair:',
    '  cancel: { confirm: false }',
    '  human: { escalate: toPharmacist, words: [pharmacist], key: "0" }',
    '  lines: { carryOn: Alright. }',
    'steps:',
    '  - id: zip',
    '    task: digits',
    '    with: { question: Your zip code?, minLength: 5, maxLength: 5 }',
    '    repair: { names: [zip, zip code] }',
    '  - id: pin',
    '    task: digits',
    '    with: { question: Your PIN?, minLength: 4, maxLength: 4 }',
    '    mask: true',
    '    repair: { cancel: false, human: false }',
  ].join('\n');

  it('loads a repair section and writes it back (toData round-trip)', () => {
    const registry = { escalations: { toPharmacist: transfer } };
    const loaded = parseFlow(text, { registry });
    const def = loaded.definition;
    expect(def.repair?.human).toMatchObject({
      words: ['pharmacist'],
      key: '0',
      escalate: transfer,
    });
    expect(def.repair?.cancel).toEqual({ confirm: false });
    expect(def.repair?.lines.carryOn).toBe('Alright.');
    expect(def.steps[1]?.repair).toEqual({ cancel: false, human: false });
    const back = toData(loaded, { registry });
    expect(back.repair).toEqual({
      cancel: { confirm: false },
      human: { escalate: 'toPharmacist', words: ['pharmacist'], key: '0' },
      lines: { carryOn: 'Alright.' },
    });
    expect(back.steps[0]?.repair).toEqual({ names: ['zip', 'zip code'] });
    expect(parseFlow(stringifyFlow(back), { registry }).definition.repair?.declared).toEqual(
      def.repair?.declared,
    );
  });

  it('refuses an unknown transfer, a bad key and an unknown option with file:line', () => {
    const check = (t: string) =>
      checkFlowText(t, { file: 'refill.yaml', registry: {} }).errors.map(
        (e) => `${e.file}:${e.line}: ${e.message}`,
      );
    expect(check(text)).toEqual([
      expect.stringMatching(/^refill\.yaml:5: unknown escalation "toPharmacist"/),
    ]);
    expect(check(text.replace('key: "0"', 'key: "00"')).join('\n')).toMatch(
      /refill\.yaml:5: .*key/,
    );
    expect(check(text.replace('cancel: false, human', 'cancle: false, human')).join('\n')).toMatch(
      /refill\.yaml:16: .*cancle/,
    );
  });
});
