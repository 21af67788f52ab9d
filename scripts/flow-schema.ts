// Writes flow.schema.json (the JSON Schema editors use for *.flow.yaml / *.flow.json) from the
// zod schemas taskline loads flow documents with. `npm run schema`; tests/flows/schema.test.ts
// fails when the committed file is out of date.
import { writeFileSync } from 'node:fs';
import { flowJsonSchema } from '../src/flows/document/schema.js';

const target = new URL('../flow.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(flowJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
