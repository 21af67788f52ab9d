// flow.schema.json, the JSON Schema editors use for flow documents, is generated from the zod
// schemas the loader validates with (`npm run schema` rewrites it), ships in the package, and
// accepts and rejects what the loader does — prebuilt task options included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { flowJsonSchema } from '../../src/flows/document/schema.js';

const root = join(new URL('.', import.meta.url).pathname, '../..');
const survey = () =>
  parse(readFileSync(join(root, 'examples/survey/survey.flow.yaml'), 'utf8')) as Record<
    string,
    unknown
  >;

describe('flow.schema.json', () => {
  it('is the schema generated from the loader’s own (run `npm run schema` after changing it)', () => {
    const shipped: unknown = JSON.parse(readFileSync(join(root, 'flow.schema.json'), 'utf8'));
    expect(shipped).toEqual(flowJsonSchema());
  });

  it('is shipped in the package and exported for editors', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      files: string[];
      exports: Record<string, unknown>;
    };
    expect(pkg.files).toContain('flow.schema.json');
    expect(pkg.exports['./flow.schema.json']).toBe('./flow.schema.json');
  });

  it('accepts the survey document and rejects what the loader rejects', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const validate = ajv.compile(flowJsonSchema());
    expect(validate(survey()), JSON.stringify(validate.errors)).toBe(true);

    const typo = survey();
    (typo.steps as Array<Record<string, unknown>>)[0]!.anounce = 'Hi';
    expect(validate(typo)).toBe(false);

    const badOption = survey();
    const score = (badOption.steps as Array<Record<string, Record<string, unknown>>>)[1]!;
    score.with!.min = 'zero';
    expect(validate(badOption)).toBe(false);
    expect(JSON.stringify(validate.errors)).toContain('/steps/1/with/min');

    const unknownOption = survey();
    (unknownOption.steps as Array<Record<string, Record<string, unknown>>>)[0]!.with!.mni = 1;
    expect(validate(unknownOption)).toBe(false);

    const noVersion = survey();
    delete noVersion.version;
    expect(validate(noVersion)).toBe(false);
  });
});
