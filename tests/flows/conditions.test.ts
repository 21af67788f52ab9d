// Branches on conditions as data (`next: { when: [...], else }`), in the builder as in
// documents: what each operator means, an answer not given, and conditions refused when they
// are declared (or by validateFlow once the flow is whole).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { flow } from '../../src/flows/builder.js';
import { type Condition, evaluate } from '../../src/flows/conditions.js';
import { resolveNext } from '../../src/flows/graph.js';
import { toMermaid } from '../../src/flows/mermaid.js';
import { validateFlow } from '../../src/flows/validate.js';
import { defineTask } from '../../src/tasks/define.js';
import { number, yesNo } from '../../src/tasks/prebuilt.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';

describe('a condition', () => {
  const answers = { plan: 'gold', age: 42, address: { city: 'Paris' }, ok: true };
  it.each<[Condition, unknown, boolean]>([
    [{ eq: 7 }, 7, true],
    [{ eq: 7 }, 8, false],
    [{ ne: 7 }, 8, true],
    [{ in: ['a', 'b'] }, 'b', true],
    [{ notIn: ['a', 'b'] }, 'c', true],
    [{ lt: 5 }, 4, true],
    [{ lte: 5 }, 5, true],
    [{ gt: 5 }, 5, false],
    [{ gte: 5 }, 5, true],
    [{ between: [0, 6] }, 6, true],
    [{ between: [0, 6] }, 6.5, false],
    [{ gte: 5 }, '9', false],
    [{ of: 'plan', eq: 'gold' }, undefined, true],
    [{ of: 'address', field: 'city', eq: 'Paris' }, undefined, true],
    [{ of: 'address', field: 'zip', answered: false }, undefined, true],
    [{ all: [{ gte: 1 }, { of: 'ok', eq: true }] }, 3, true],
    [{ any: [{ lt: 1 }, { of: 'age', gt: 40 }] }, 3, true],
    [{ not: { eq: 3 } }, 3, false],
  ])('%j on %j is %s', (condition, value, expected) => {
    expect(evaluate(condition, value, answers)).toBe(expected);
  });

  it('is false on an answer not given, whatever the operator (except answered: false)', () => {
    for (const c of [{ eq: null }, { ne: 1 }, { notIn: [1] }, { lt: 1 }] as Condition[]) {
      expect(evaluate(c, undefined, {})).toBe(false);
    }
    expect(evaluate({ answered: false }, undefined, {})).toBe(true);
    expect(evaluate({ of: 'nope', answered: true }, 1, {})).toBe(false);
  });
});

describe('when-branches in the builder', () => {
  const score = number({ name: 'score', question: '0-10?', min: 0, max: 10 });
  const f = flow('nps')
    .step('score', score, {
      next: {
        when: [
          { if: { lte: 6 }, to: 'why' },
          { if: { gte: 9 }, to: 'fan' },
        ],
        else: 'end',
        labels: { why: 'detractor' },
      },
    })
    .step('why', yesNo({ name: 'why', question: 'Why?' }), { next: 'end' })
    .step('fan', yesNo({ name: 'fan', question: 'Refer us?' }));

  it('goes where the first holding case says, else to else', async () => {
    const step = f.definition.steps[0]!;
    const options = { clock: new VirtualClock() };
    const to = async (value: number) =>
      (await resolveNext(f.definition, step, { value }, {}, options)).to;
    expect([await to(3), await to(6), await to(7), await to(9)]).toEqual([
      'why',
      'why',
      'end',
      'fan',
    ]);
    expect(validateFlow(f)).toEqual({ ok: true, errors: [], warnings: [] });
    expect(toMermaid(f)).toContain('score -->|detractor| why');
    expect(toMermaid(f)).toContain('score -->|"≥ 9"| fan');
    expect(toMermaid(f)).toContain('score -->|other| _end');
  });

  it('refuses a condition that cannot be right when it is declared', () => {
    const yes = yesNo({ name: 'ok', question: 'Ok?' });
    expect(() =>
      flow('f').step('ok', yes, { next: { when: [{ if: { gte: 1 }, to: 'end' }], else: 'end' } }),
    ).toThrow(
      'Step "ok": a when condition is not valid (at gte): "gte" compares numbers, but the answer of "ok" is a boolean.',
    );
    expect(() =>
      flow('f').step('ok', yes, {
        next: { when: [{ if: { eq: 1, gt: 0 } as Condition, to: 'end' }], else: 'end' },
      }),
    ).toThrow('a condition has one operator; split eq and gt with all: [...]');
    expect(() => flow('f').step('ok', yes, { next: { when: [], else: 'end' } })).toThrow(
      '"when" needs at least one case',
    );
  });

  it('validateFlow checks conditions on other steps once the flow is whole', () => {
    const plan = defineTask({
      name: 'plan',
      instructions: 'p',
      schema: z.enum(['gold', 'silver']),
    });
    const g = flow('g')
      .step('plan', plan)
      .step('ok', yesNo({ name: 'ok', question: 'Ok?' }), {
        next: {
          when: [
            { if: { of: 'plan', eq: 'bronze' }, to: 'end' },
            { if: { of: 'missing', eq: 1 }, to: 'end' },
          ],
          else: 'end',
        },
      });
    expect(validateFlow(g).errors.map((e) => [e.code, e.message])).toEqual([
      [
        'invalid_condition',
        'Step "ok" (when.0.if.eq): "bronze" is never an answer of "plan" (a string).',
      ],
      [
        'invalid_condition',
        'Step "ok" (when.1.if.of): "of" names a step of this flow (got "missing").',
      ],
    ]);
  });
});
