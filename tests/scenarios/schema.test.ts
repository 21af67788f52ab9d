// The JSON Schema shipped for editors is generated from the zod schema taskline validates
// with; the committed file must be the generated one (`npm run schema` rewrites it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { durationMs, scenarioJsonSchema } from '../../src/scenarios/schema.js';
import { root } from './helpers.js';

describe('scenario.schema.json', () => {
  it('is the schema generated from the validator (run `npm run schema` after changing it)', () => {
    const shipped: unknown = JSON.parse(readFileSync(join(root, 'scenario.schema.json'), 'utf8'));
    expect(shipped).toEqual(scenarioJsonSchema());
  });

  it('is shipped in the package and exported for editors', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      files: string[];
      exports: Record<string, unknown>;
    };
    expect(pkg.files).toContain('scenario.schema.json');
    expect(pkg.exports['./scenario.schema.json']).toBe('./scenario.schema.json');
  });

  it('describes every caller turn and expectation an editor should offer', () => {
    const text = JSON.stringify(scenarioJsonSchema());
    for (const word of [
      'say',
      'keys',
      'silence',
      'barge_in',
      'hangup',
      'never_said',
      'tool_called',
      'no_model_call_during',
      'transferred',
      'checkpoint',
      'latency',
      'repeat',
    ]) {
      expect(text).toContain(`"${word}"`);
    }
  });
});

describe('durations', () => {
  it.each([
    ['800ms', 800],
    ['8s', 8000],
    ['1.5s', 1500],
    ['2m', 120_000],
    [250, 250],
  ])('%s is %d ms', (input, ms) => {
    expect(durationMs(input)).toBe(ms);
  });
});
