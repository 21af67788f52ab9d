import { voice } from '@livekit/agents';
import { describe, expectTypeOf, it } from 'vitest';
import { type SurveyAnswers, surveyFlow } from '../../examples/survey/index.js';
import { announce } from '../../src/flows/announce.js';
import { type FlowValueOf, flow } from '../../src/flows/builder.js';
import type { FlowResult } from '../../src/flows/types.js';
import type { Outcome } from '../../src/outcome.js';
import { choice, freeText, number, yesNo } from '../../src/tasks/prebuilt.js';

const consent = yesNo({ name: 'consent', question: 'OK?' });
const score = number({ name: 'score', question: 'Score?', min: 0, max: 10 });
const reason = freeText({ name: 'reason', question: 'Why?' });

class LookupTask extends voice.AgentTask<Outcome<{ id: string; tier: 'gold' | 'basic' }>> {}

describe('flow result types (checked by tsc)', () => {
  it('infers required keys on the single path and optional ones after a branch', () => {
    const f = flow('nps')
      .step('consent', consent)
      .step('score', score, {
        next: { to: ['reason', 'end'], pick: (s) => (s <= 6 ? 'reason' : 'end') },
      })
      .step('reason', reason);
    expectTypeOf<FlowValueOf<typeof f>>().toEqualTypeOf<{
      consent: boolean;
      score: number;
      reason?: string;
    }>();
  });

  it('types the survey example: only consent is always answered', () => {
    expectTypeOf<SurveyAnswers>().toEqualTypeOf<{
      consent: boolean;
      score?: number;
      reason?: string;
      referral?: boolean;
      email?: string;
    }>();
    expectTypeOf(surveyFlow.run).returns.resolves.toEqualTypeOf<FlowResult<SurveyAnswers>>();
  });

  it('makes skippable and skip-on-failure steps optional, escalated ones required', () => {
    const f = flow('f')
      .step('a', consent, { skippable: true })
      .step('b', score, { onFailure: 'skip' })
      .step('c', reason, {
        onFailure: async () => ({ status: 'ok', value: 'from a human', attempts: 1 }),
      })
      .step('d', consent, { next: 'e' })
      .step('e', score, { next: 'end' });
    expectTypeOf<FlowValueOf<typeof f>>().toEqualTypeOf<{
      a?: boolean;
      b?: number;
      c: string;
      d: boolean;
      e: number;
    }>();
  });

  it('infers values from task factories, choice tasks and nested flows; drops speak-only steps', () => {
    const inner = flow('inner').step(
      'tier',
      choice({
        question: 'Gold or basic?',
        options: [
          { value: 'gold', label: 'Gold' },
          { value: 'basic', label: 'Basic' },
        ],
      }),
    );
    const f = flow('outer')
      .step('lookup', () => new LookupTask({ instructions: 'x' }), { timeoutMs: 5_000 })
      .step('inner', inner)
      .step('bye', announce('Bye!'));
    expectTypeOf<FlowValueOf<typeof f>>().toEqualTypeOf<{
      lookup: { id: string; tier: 'gold' | 'basic' };
      inner: { tier: 'gold' | 'basic' };
    }>();
  });

  it('types branch tables and pick values from the step', () => {
    flow('t')
      .step('a', consent, { next: { true: 'b', false: 'end' } })
      .step('b', score, {
        next: {
          to: ['end'],
          pick: (value, answers) => {
            expectTypeOf(value).toEqualTypeOf<number>();
            expectTypeOf(answers).toEqualTypeOf<Readonly<Record<string, unknown>>>();
            return 'end';
          },
        },
      });
  });

  it('rejects a pick that returns an undeclared target', () => {
    flow('t').step('a', score, {
      // @ts-expect-error 'nowhere' is not in `to`
      next: { to: ['end'], pick: (s) => (s > 5 ? 'end' : 'nowhere') },
    });
  });

  it('narrows a result on its status', () => {
    const r = {} as FlowResult<{ a: boolean; b?: number }>;
    if (r.status === 'completed') expectTypeOf(r.value).toEqualTypeOf<{ a: boolean; b?: number }>();
    else expectTypeOf(r.answers).toEqualTypeOf<Partial<{ a: boolean; b?: number }>>();
  });
});
