// examples/survey in both forms — built in code (flow.ts) and loaded from its flow document
// (survey.flow.yaml, run by document/index.ts) — passes the same scenario files: the ones in
// document/ are links to the survey's own, and `taskline test examples/survey` finds both.
import { readlinkSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findScenarioFiles } from '../../src/scenarios/discover.js';
import { runScenarioFile } from '../../src/scenarios/scenario.js';
import { SURVEY } from '../scenarios/helpers.js';

const files = findScenarioFiles([SURVEY]);
const code = files.filter((f) => dirname(f) === SURVEY);
const document = files.filter((f) => dirname(f) === join(SURVEY, 'document'));

describe('the survey in code and as a flow document', () => {
  it('has the same scenario files for both forms (links, found by taskline test)', () => {
    expect(code.length).toBeGreaterThanOrEqual(5);
    expect(document.map((f) => basename(f))).toEqual(code.map((f) => basename(f)));
    for (const f of document) expect(readlinkSync(f)).toBe(`../${basename(f)}`);
  });

  it.each(code.map((f) => basename(f)))(
    'passes %s in both forms',
    { timeout: 120_000 },
    async (name) => {
      for (const file of [join(SURVEY, name), join(SURVEY, 'document', name)]) {
        const report = await runScenarioFile(file);
        const why = report.reason ?? JSON.stringify(report.runs.at(-1)?.failures ?? []);
        expect(report.status, `${relative(SURVEY, file)}: ${why}`).toBe('passed');
      }
    },
  );
});
