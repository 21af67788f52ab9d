/**
 * Type-level tests: the outcome type of a task is inferred from its schema. Checked by
 * `npm run typecheck` (tsc type-checks tests); at run time expectTypeOf is a no-op, so the
 * runtime assertions below only pin the values the type assertions are made on.
 */
import type { voice } from '@livekit/agents';
import {
  defineTask,
  type FailureStatus,
  isOk,
  type OkOutcome,
  type Outcome,
  type parsers,
  type TaskDefinition,
  valueOr,
} from 'taskline';
import {
  type Address,
  address,
  choice,
  date,
  digits,
  email,
  freeText,
  likert,
  number,
  personName,
  phone,
  type TypedTask,
  time,
  yesNo,
} from 'taskline/tasks';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

type Email = { email: string };

const emailTask = defineTask({
  name: 'email',
  instructions: 'Collect the caller email address.',
  schema: z.object({ email: z.string() }),
  validate: (value) => {
    expectTypeOf(value).toEqualTypeOf<Email>();
    return value.email.includes('@') ? undefined : 'That is not an email address.';
  },
});

const support = choice({
  question: 'Billing or technical support?',
  options: [
    { value: 'billing', label: 'Billing' },
    { value: 'support', label: 'Technical support', synonyms: ['help'] },
  ],
});

describe('defineTask infers the outcome from the schema', () => {
  it('run() resolves Outcome<{ email: string }>', () => {
    expectTypeOf(emailTask.run).returns.toEqualTypeOf<Promise<Outcome<Email>>>();
    expectTypeOf(emailTask).toEqualTypeOf<TaskDefinition<Email>>();
    expectTypeOf(emailTask.create).returns.toEqualTypeOf<TypedTask<Email>>();
    expectTypeOf<TypedTask<Email>>().toExtend<voice.AgentTask<Outcome<Email>>>();
    expect(emailTask.name).toBe('email');
  });

  it('keeps optional fields optional and uses the schema output (after transforms)', () => {
    const booking = defineTask({
      name: 'booking',
      instructions: 'Book a table.',
      schema: z.object({
        people: z.number().int(),
        note: z.string().optional(),
        day: z.string().transform((s) => s.toLowerCase() as 'mon' | 'tue'),
      }),
    });
    expectTypeOf(booking.run).returns.resolves.toEqualTypeOf<
      Outcome<{ people: number; note?: string | undefined; day: 'mon' | 'tue' }>
    >();

    const count = defineTask({
      name: 'count',
      instructions: 'Get a count.',
      schema: z.string().transform((s) => s.length),
    });
    expectTypeOf(count.run).returns.resolves.toEqualTypeOf<Outcome<number>>();
    expect(count.name).toBe('count');
  });

  it('types validate, overrides and with() by the same value', () => {
    expectTypeOf(emailTask.with).parameter(0).toHaveProperty('validate');
    expectTypeOf(emailTask.with({ confirm: 'always' })).toEqualTypeOf<TaskDefinition<Email>>();
    defineTask({
      name: 'wrong_field',
      instructions: 'x',
      schema: z.object({ email: z.string() }),
      // @ts-expect-error the value has no `phone` field: validate is typed by the schema
      validate: (value) => (value.phone ? undefined : 'missing'),
    });
    // @ts-expect-error a number is not an Email: overrides are typed by the schema too
    emailTask.with({ readBack: (value: number) => String(value) });
  });
});

describe('prebuilt tasks have precise result types', () => {
  it('yesNo is boolean; number, likert are number; email, phone, digits, date, time, freeText are string', () => {
    expectTypeOf(yesNo({ question: 'OK?' }).run).returns.resolves.toEqualTypeOf<Outcome<boolean>>();
    expectTypeOf(number({ question: 'How many?', min: 1 }).run).returns.resolves.toEqualTypeOf<
      Outcome<number>
    >();
    expectTypeOf(likert({ question: 'Rate us' }).run).returns.resolves.toEqualTypeOf<
      Outcome<number>
    >();
    for (const def of [
      email({ question: 'Email?' }),
      phone({ question: 'Phone?', defaultRegion: 'GB' }),
      digits({ question: 'Code?', minLength: 4 }),
      date({ question: 'Day?' }),
      time({ question: 'Time?' }),
      freeText({ question: 'Why?' }),
    ]) {
      expectTypeOf(def).toEqualTypeOf<TaskDefinition<string>>();
    }
    expect(phone({ question: 'Phone?' }).name).toBe('phone');
  });

  it('choice resolves the union of its option values', () => {
    expectTypeOf(support.run).returns.resolves.toEqualTypeOf<Outcome<'billing' | 'support'>>();
    const outcome = { status: 'ok', value: 'billing', attempts: 1 } as Outcome<
      'billing' | 'support'
    >;
    if (outcome.status === 'ok') {
      // @ts-expect-error 'sales' is not one of the options
      const wrong: 'sales' = outcome.value;
      expect(wrong).toBe('billing');
    }
    expect(support.spec.schema.safeParse('support').success).toBe(true);
  });

  it('personName resolves PersonName and address resolves Address', () => {
    expectTypeOf(personName({ question: 'Name?' }).run).returns.resolves.toEqualTypeOf<
      Outcome<parsers.PersonName>
    >();
    expectTypeOf<parsers.PersonName>().toEqualTypeOf<{ first: string; last?: string }>();
    expectTypeOf(address({ question: 'Address?' }).run).returns.resolves.toEqualTypeOf<
      Outcome<Address>
    >();
    expectTypeOf<Address>().toHaveProperty('postalCode').toEqualTypeOf<string>();
    expectTypeOf<Address>().toHaveProperty('region').toEqualTypeOf<string | undefined>();
  });
});

describe('Outcome<T> narrows on status', () => {
  function describeOutcome(outcome: Outcome<Email>): string {
    if (outcome.status === 'ok') {
      expectTypeOf(outcome).toEqualTypeOf<OkOutcome<Email>>();
      expectTypeOf(outcome.value).toEqualTypeOf<Email>();
      expectTypeOf(outcome.confirmed).toEqualTypeOf<boolean | undefined>();
      return `ok ${outcome.value.email}`;
    }
    expectTypeOf(outcome.status).toEqualTypeOf<FailureStatus>();
    expectTypeOf(outcome.reason).toEqualTypeOf<string | undefined>();
    // @ts-expect-error a failed outcome has no value
    const missing: unknown = outcome.value;
    return `${outcome.status} ${String(missing)} after ${outcome.attempts}`;
  }

  it('has value: T only in the ok branch', () => {
    expect(describeOutcome({ status: 'ok', value: { email: 'a@b.co' }, attempts: 1 })).toBe(
      'ok a@b.co',
    );
    expect(describeOutcome({ status: 'noinput', attempts: 3 })).toBe('noinput undefined after 3');
  });

  it('narrows through isOk and types valueOr', () => {
    const outcome = { status: 'declined', attempts: 1 } as Outcome<boolean>;
    if (isOk(outcome)) expectTypeOf(outcome.value).toEqualTypeOf<boolean>();
    expectTypeOf(valueOr(outcome, null)).toEqualTypeOf<boolean | null>();
    expect(valueOr(outcome, null)).toBeNull();
    // @ts-expect-error `value` is not readable before narrowing
    expect(outcome.value).toBeUndefined();
  });
});
