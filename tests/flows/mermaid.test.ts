import { afterEach, describe, expect, it } from 'vitest';
import { surveyFlow } from '../../examples/survey/index.js';
import { flow } from '../../src/flows/builder.js';
import { toMermaid } from '../../src/flows/mermaid.js';
import { yesNo } from '../../src/tasks/prebuilt.js';
import type { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import { startSurvey } from './helpers.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

describe('toMermaid', () => {
  it('draws the survey: steps, branches, skips and back-edges', () => {
    expect(toMermaid(surveyFlow)).toMatchInlineSnapshot(`
      "flowchart TD
        _start((start))
        consent["consent to the survey"]
        score["your score from 0 to 10"]
        reason["the reason for your score"]
        referral["the referral program"]
        email["your email address"]
        thanks(["thanks"])
        _end((end))
        _start --> consent
        consent -->|true| score
        consent -->|false| thanks
        score -->|0-6| reason
        score -->|9-10| referral
        score -->|7-8| thanks
        reason --> thanks
        reason -.->|skipped| thanks
        referral -->|true| email
        referral -->|false| thanks
        email --> thanks
        email -.->|skipped| thanks
        thanks --> _end
        reason -.->|back| score
        referral -.->|back| score
        email -.->|back| score"
    `);
  });

  it('highlights the path a call took, with its retries and a go-back', async () => {
    const s = await startSurvey();
    caller = s.caller;
    await s.caller.silence(8_000);
    await s.caller.say('yes');
    await s.caller.say('nine');
    await s.caller.say('can I change my score');
    await s.caller.say('four');
    await s.caller.say("I'd rather not say");
    const report = s.agent.result?.report;
    expect(report?.status).toBe('completed');
    expect(toMermaid(surveyFlow, { trace: report })).toMatchInlineSnapshot(`
      "flowchart TD
        _start((start))
        consent["consent to the survey<br/>2 attempts, 1 no-input"]
        score["your score from 0 to 10<br/>2 visits"]
        reason["the reason for your score"]
        referral["the referral program"]
        email["your email address"]
        thanks(["thanks"])
        _end((end))
        _start --> consent
        consent -->|true| score
        consent -->|false| thanks
        score -->|0-6| reason
        score -->|9-10| referral
        score -->|7-8| thanks
        reason --> thanks
        reason -.->|skipped| thanks
        referral -->|true| email
        referral -->|false| thanks
        email --> thanks
        email -.->|skipped| thanks
        thanks --> _end
        reason -.->|back| score
        referral -.->|back| score
        email -.->|back| score
        classDef taken fill:#dcfce7,stroke:#16a34a,stroke-width:2px
        class consent,score,referral,reason,thanks taken
        linkStyle 0,1,3,4,7,12,14 stroke:#16a34a,stroke-width:3px"
    `);
  });

  it('draws escalation edges and nested flows', () => {
    const q = (name: string) => yesNo({ name, question: `${name}?` });
    const inner = flow('inner').step('x', q('x'));
    const f = flow('f', {})
      .step('a', q('a'), {
        label: 'say "yes"',
        onFailure: async () => ({ status: 'transferred', attempts: 1 }),
      })
      .step('sub', inner, { next: { default: 'end' } });
    expect(toMermaid(f, { direction: 'LR' })).toMatchInlineSnapshot(`
      "flowchart LR
        _start((start))
        a["say #quot;yes#quot;"]
        sub[["sub"]]
        _end((end))
        _start --> a
        a --> sub
        a -.->|exhausted| a_escalate{{escalate}}
        a_escalate -.->|no value| _end
        sub -->|other| _end"
    `);
  });
});
