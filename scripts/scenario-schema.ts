// Writes scenario.schema.json (the JSON Schema editors use for *.scenario.yaml) from the zod
// schema taskline validates scenarios with. `npm run schema`; tests/scenarios/schema.test.ts
// fails when the committed file is out of date.
import { writeFileSync } from 'node:fs';
import { scenarioJsonSchema } from '../src/scenarios/schema.js';

const target = new URL('../scenario.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
