// The corpus against the parsers in src (CI also scores the built package with score.mjs):
// no line may get a value it should not.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as parsers from '../../src/tasks/parsers/index.js';
import type { ParseResult } from '../../src/tasks/parsers/result.js';

interface Line {
  parser: string;
  text: string;
  options?: Record<string, unknown>;
  expect: { kind: string; value?: unknown };
}

const lines: Line[] = readFileSync(new URL('./parsers.public.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Line);

type Simple = (text: string, options?: never) => ParseResult<unknown>;
const SIMPLE: Record<string, Simple> = {
  yesNo: parsers.yesNo as Simple,
  number: parsers.number as Simple,
  digits: parsers.digits as Simple,
  time: parsers.time as Simple,
  email: parsers.email as Simple,
  phone: parsers.phone as Simple,
  name: parsers.name as Simple,
  likert: parsers.likert as unknown as Simple,
  repair: parsers.repair as unknown as Simple,
};

function run(line: Line): ParseResult<unknown> {
  const o = line.options ?? {};
  switch (line.parser) {
    case 'choice':
      return parsers.choice(
        line.text,
        o.options as parsers.ChoiceOption[],
        o.parse as parsers.ChoiceParseOptions | undefined,
      );
    case 'date':
      return parsers.date(line.text, { ...o, now: new Date(o.now as string) });
    default: {
      const fn = SIMPLE[line.parser];
      if (fn === undefined) throw new Error(`unknown parser ${line.parser}`);
      return line.options === undefined ? fn(line.text) : fn(line.text, o as never);
    }
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

describe('parser corpus', () => {
  it(`has ${lines.length} lines and no wrong value`, () => {
    const wrong = lines.flatMap((line) => {
      const got = run(line);
      if (got.kind !== 'match') return [];
      const ok =
        (line.expect.kind === 'match' || line.expect.kind === 'not-wrong') &&
        same(got.value, line.expect.value);
      return ok
        ? []
        : [`${line.parser} ${JSON.stringify(line.text)} → ${JSON.stringify(got.value)}`];
    });
    expect(lines.length).toBeGreaterThan(500);
    expect(wrong).toEqual([]);
  });

  it('reads every repair phrasing exactly as its line says (a request, or nomatch when unsure)', () => {
    const repairs = lines.filter((l) => l.parser === 'repair');
    const differ = repairs.flatMap((line) => {
      const got = run(line);
      const want = line.expect.kind === 'match' ? line.expect : { kind: 'nomatch' };
      return same(got, want) ? [] : [`${JSON.stringify(line.text)} → ${JSON.stringify(got)}`];
    });
    expect(repairs.length).toBeGreaterThanOrEqual(40);
    expect(differ).toEqual([]);
  });
});
