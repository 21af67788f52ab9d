// A `keys` turn is one keypad entry, as on a phone: an unfinished entry ends with the
// task's inter-digit timeout instead of running into the next turn's keys (text mode used to
// read `0315198` + `03151980` as one date).
import { afterAll, describe, expect, it } from 'vitest';
import { runScenarioFile } from '../../src/scenarios/scenario.js';
import { scratchDir } from './helpers.js';

const scratch = scratchDir('keys-entry');
afterAll(() => scratch.remove());

scratch.write(
  'index.ts',
  `import { voice } from '@livekit/agents';
import { defineCallModule, defineTask, parsers } from 'taskline';
import { z } from 'zod';

const birthDate = defineTask({
  name: 'birth_date',
  instructions: 'Collect the date of birth.',
  prompt: 'Please key in your date of birth as eight digits, month, day, year.',
  schema: z.object({ date: z.string() }),
  keypad: { maxDigits: 8, interDigitTimeoutMs: 3000 },
  modelFallback: false,
  parse: (text) => {
    const digits = parsers.digits(text, { minLength: 8, maxLength: 8 });
    if (digits.kind !== 'match') return { kind: 'invalid', reason: 'That was not eight digits.' };
    const d = digits.value;
    return parsers.match({ date: \`\${d.slice(4)}-\${d.slice(0, 2)}-\${d.slice(2, 4)}\` });
  },
});

class Line extends voice.Agent {
  date: string | undefined;
  constructor() {
    super({ instructions: 'A pharmacy line.' });
  }
  override async onEnter(): Promise<void> {
    const got = await birthDate.run();
    if (got.status === 'ok') this.date = got.value.date;
  }
}

export default defineCallModule({
  name: 'keys-entry',
  description: 'a keypad date of birth',
  createCall: () => {
    const agent = new Line();
    return { agent, result: () => ({ date: agent.date }) };
  },
  demo: async () => {
    const { ScriptedLLM } = await import('taskline/testing');
    return { createScriptedModel: () => new ScriptedLLM() };
  },
});
`,
);

describe('a keys turn is one keypad entry', () => {
  it('an entry one digit short ends with the inter-digit timeout; the next turn starts afresh', async () => {
    const file = scratch.write(
      'short.scenario.yaml',
      `name: one digit short, then the whole date
turns:
  - keys: "0315198"
    expect:
      said: That was not eight digits.
  - keys: "03151980"
expect:
  outcome: { date: 1980-03-15 }
`,
    );
    const report = await runScenarioFile(file);
    expect(report.runs[0]?.failures).toEqual([]);
    expect(report.status).toBe('passed');
    expect(report.runs[0]?.transcript).toEqual([
      'agent: Please key in your date of birth as eight digits, month, day, year.',
      'caller: [keys 0315198]',
      'agent: That was not eight digits. Please key in your date of birth as eight digits, month, day, year.',
      'caller: [keys 03151980]',
    ]);
  });
});
