import { voice } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { isTasklineError, TasklineError } from '../../src/core/errors.js';
import { flow } from '../../src/flows/builder.js';
import { validateFlow } from '../../src/flows/validate.js';
import type { Outcome } from '../../src/outcome.js';
import { number, yesNo } from '../../src/tasks/prebuilt.js';
import { menu } from '../../src/telephony/menu.js';
import { RecordingTransferer, transferOnExhausted } from '../../src/telephony/transfer.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';

const q = (name: string) => yesNo({ name, question: `${name}?` });
const n = (name: string) => number({ name, question: `${name}?` });
class PlainTask extends voice.AgentTask<Outcome<string>> {}
const plain = () => new PlainTask({ instructions: 'plain' });

const codes = (f: Parameters<typeof validateFlow>[0]) =>
  validateFlow(f).errors.map((e) => [e.code, e.step]);

describe('validateFlow', () => {
  it('accepts the survey-shaped flow', () => {
    const f = flow('ok')
      .step('a', q('a'), { next: { true: 'b', false: 'end' } })
      .step('b', n('b'), { next: { to: ['c', 'end'], pick: (v) => (v > 5 ? 'c' : 'end') } })
      .step('c', q('c'));
    expect(validateFlow(f)).toEqual({ ok: true, errors: [], warnings: [] });
  });

  it('reports a next target that does not exist', () => {
    const f = flow('f').step('a', q('a'), { next: 'nope' });
    expect(codes(f)).toEqual([
      ['unknown_target', 'a'],
      ['dead_end', 'a'],
    ]);
    expect(validateFlow(f).errors[0]?.message).toBe(
      `Step "a" goes to "nope", which is not a step of flow "f": declare it or use 'end'.`,
    );
  });

  it('reports an unreachable step', () => {
    const f = flow('f').step('a', q('a'), { next: 'end' }).step('b', q('b'));
    expect(codes(f)).toEqual([['unreachable', 'b']]);
  });

  it('reports dead ends: a loop with no exit, a table missing a value, a skip with nowhere to go', () => {
    const loop = flow('loop')
      .step('a', q('a'), { next: 'b', maxVisits: 3 })
      .step('b', q('b'), { next: 'a' });
    expect(codes(loop)).toEqual([
      ['dead_end', 'a'],
      ['dead_end', 'b'],
    ]);

    const table = flow('table').step('a', q('a'), { next: { true: 'end' } });
    expect(validateFlow(table).errors).toEqual([
      {
        severity: 'error',
        code: 'dead_end',
        step: 'a',
        message: `Step "a" has no branch for "false": add them or a "default" to its next table.`,
      },
    ]);

    const skip = flow('skip').step('a', n('a'), {
      skippable: true,
      next: { to: ['end'], pick: () => 'end' },
    });
    expect(codes(skip)).toEqual([['dead_end', 'a']]);
  });

  it('reports a loop with no bound as unbounded retries, and accepts it with maxVisits', () => {
    const make = (maxVisits?: number) =>
      flow('retry')
        .step('ask', n('ask'), { next: 'again', maxVisits })
        .step('again', q('again'), { next: { true: 'ask', false: 'end' } });
    expect(codes(make())).toEqual([['unbounded_retries', 'ask']]);
    expect(validateFlow(make()).errors[0]?.message).toBe(
      'Steps ask -> again form a loop with no bound: give one of them maxVisits.',
    );
    expect(validateFlow(make(2)).ok).toBe(true);
  });

  it('reports a plain task with no no-input handling', () => {
    expect(codes(flow('f').step('a', plain))).toEqual([['no_input_handling', 'a']]);
    expect(validateFlow(flow('f').step('a', plain, { timeoutMs: 30_000 })).ok).toBe(true);
    expect(validateFlow(flow('f').step('a', plain, { meta: { handlesNoInput: true } })).ok).toBe(
      true,
    );
  });

  it('reports menu keys that clash with the repeat and back keys', () => {
    const menuLike = {
      name: 'menu',
      keys: ['1', '2', '9'],
      repeatKey: '9',
      backKey: '9',
      create: () => new PlainTask({ instructions: 'menu' }),
    };
    const f = flow('f').step('menu', menuLike);
    expect(validateFlow(f).errors.map((e) => e.message)).toEqual([
      'Step "menu": key "9" is both a menu option and the repeat key; pick another repeat key.',
      'Step "menu": key "9" is both a menu option and the back key; pick another back key.',
      'Step "menu": key "9" is both the repeat and the back key.',
    ]);
    const fine = flow('g').step('menu', plain, {
      timeoutMs: 10_000,
      meta: { keys: ['1', '2'], repeatKey: '*', backKey: '0' },
    });
    expect(validateFlow(fine).ok).toBe(true);
  });

  it('warns (without failing) about a table with no default over open-ended values', () => {
    const f = flow('f').step('a', n('a'), { next: { '1': 'end', '2': 'end' } });
    const v = validateFlow(f);
    expect(v.ok).toBe(true);
    expect(v.warnings.map((w) => w.code)).toEqual(['no_default_branch']);
  });

  it('checks nested flows too', () => {
    const inner = flow('inner').step('x', q('x'), { next: 'nope' });
    expect(codes(flow('outer').step('inner', inner))).toEqual([
      ['unknown_target', 'inner.x'],
      ['dead_end', 'inner.x'],
    ]);
  });

  it('rejects bad declarations when they are made', () => {
    const f = flow('f').step('a', q('a'));
    expect(() => f.step('a', q('b'))).toThrow('Flow "f" already has a step "a".');
    expect(() => f.step('end', q('b'))).toThrow(/must start with a letter/);
    expect(() => f.step('b', q('b'), { maxVisits: 0 })).toThrow(/maxVisits must be a whole number/);
    expect(() => flow('g', { maxBackSteps: 100 })).toThrow(/maxBackSteps must be a whole number/);
    expect(() => flow('g').step('x', {} as never)).toThrow(/needs a task definition/);
  });
});

describe('a menu step (issue 24, item 16)', () => {
  const mainMenu = menu({
    name: 'main_menu',
    options: {
      '1': { label: 'a prescription refill', value: 'refill' },
      '2': { label: 'store hours', value: 'hours' },
    },
  });
  const escalate = {
    onExhausted: transferOnExhausted(new RecordingTransferer(), { to: '+1555', summary: 'help' }),
  };

  it('branching on every option needs no default, also after .with() adds a transfer', () => {
    for (const source of [mainMenu, mainMenu.with({ retry: escalate })]) {
      const f = flow('pharmacy')
        .step('menu', source, { next: { refill: 'refill', hours: 'end' } })
        .step('refill', q('refill'));
      expect(validateFlow(f)).toEqual({ ok: true, errors: [], warnings: [] });
    }
  });

  it('a table missing an option is a dead end, as for any enumerable value', () => {
    const f = flow('pharmacy').step('menu', mainMenu.with({ retry: escalate }), {
      next: { refill: 'end' },
    });
    expect(codes(f)).toEqual([['dead_end', 'menu']]);
  });
});

describe('validation errors stop run()', () => {
  let caller: SimulatedCaller | undefined;
  afterEach(async () => {
    await caller?.close();
    caller = undefined;
  });

  it('rejects with a TasklineError listing every error, before asking anything', async () => {
    const broken = flow('broken').step('a', q('a'), { next: 'nope' }).step('b', plain);
    let failure: unknown;
    class Host extends voice.Agent {
      constructor() {
        super({ instructions: 'host' });
      }
      override async onEnter(): Promise<void> {
        failure = await broken.run().catch((error: unknown) => error);
      }
    }
    caller = await SimulatedCaller.start({ agent: new Host(), llm: new ScriptedLLM() });
    expect(caller.agentLines).toEqual([]);
    expect(failure).toBeInstanceOf(TasklineError);
    expect(isTasklineError(failure, 'invalid_argument')).toBe(true);
    expect((failure as Error).message).toBe(
      [
        'Flow "broken" is not valid; fix these before running it:',
        `  - [unknown_target] Step "a" goes to "nope", which is not a step of flow "broken": declare it or use 'end'.`,
        '  - [unreachable] Step "b" can never be reached from "a": point a next at it or remove it.',
        `  - [dead_end] Step "a" has no way to the end of the flow: give it (or a step after it) a next that leads to 'end'.`,
        '  - [no_input_handling] Step "b" runs a plain task factory that may wait for a silent caller forever: set timeoutMs on the step, use a typed task, or declare meta.handlesNoInput.',
      ].join('\n'),
    );
    expect(() => broken.create()).toThrow(TasklineError);
  });
});
