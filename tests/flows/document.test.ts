// Flows as data (issue 31, part 1): a YAML or JSON document over a registry of tasks loads
// to the same graph the builder makes, round-trips with toData, and a bad document is refused
// before any call starts, every problem with its file:line.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { surveyDocument } from '../../examples/survey/document/index.js';
import { scoreBand, surveyFlow, toSurveyTeam } from '../../examples/survey/flow.js';
import { flow } from '../../src/flows/builder.js';
import type { FlowDefinition } from '../../src/flows/definition.js';
import {
  checkFlowText,
  FlowDocumentError,
  loadFlow,
  parseFlow,
} from '../../src/flows/document/load.js';
import type { FlowRegistry } from '../../src/flows/document/registry.js';
import { stringifyFlow, toData } from '../../src/flows/document/to-data.js';
import { toMermaid } from '../../src/flows/mermaid.js';
import { validateFlow } from '../../src/flows/validate.js';
import { defineTask } from '../../src/tasks/define.js';

const SURVEY_FILE = new URL('../../examples/survey/survey.flow.yaml', import.meta.url).pathname;

/** The survey's code form named for toData: its own tasks and its pick, by step. */
function surveyRegistry(): FlowRegistry {
  const tasks: Record<string, never> = {};
  for (const step of surveyFlow.definition.steps) {
    if (step.id !== 'thanks') tasks[step.id] = step.source as never;
  }
  return { tasks, picks: { scoreBand }, escalations: { toSurveyTeam } };
}

/** The parts of a graph a caller can tell apart, for comparing two flows. */
function graph(def: FlowDefinition) {
  return {
    mermaid: toMermaid({ definition: def }),
    validation: validateFlow(def),
    steps: def.steps.map((s) => ({
      id: s.id,
      canRevisit: s.canRevisit,
      skippable: s.skippable,
      label: s.label,
      masked: s.masked,
      kind: s.runner.kind,
      schema: s.runner.kind === 'task' ? s.runner.schema?.toJSONSchema?.() : undefined,
    })),
  };
}

/** What issues say, as "line: message" (the file name is the same for all). */
function issues(text: string, registry?: FlowRegistry) {
  const checked = checkFlowText(text, { file: 'bad.flow.yaml', registry });
  expect(checked.flow).toBeUndefined();
  for (const e of checked.errors) expect(e.file).toBe('bad.flow.yaml');
  return checked.errors.map((e) => `${e.line}: ${e.message}`);
}

describe('the survey as a flow document', () => {
  it('loads to the same graph as the survey built in code', () => {
    expect(graph(surveyDocument.definition)).toEqual(graph(surveyFlow.definition));
    expect(toMermaid(surveyDocument)).toBe(toMermaid(surveyFlow));
    expect(surveyDocument.definition.options).toMatchObject({
      version: 1,
      label: 'customer survey',
    });
  });

  it('round-trips: toData of either form loads back to the same graph', () => {
    const registry = surveyRegistry();
    const fromCode = toData(surveyFlow, { registry });
    expect(fromCode.steps.map((s) => s.task ?? s.announce)).toEqual([
      'consent',
      'score',
      'reason',
      'referral',
      'email',
      'Thank you for your time. Goodbye!',
    ]);
    const reloaded = parseFlow(stringifyFlow(fromCode), { registry });
    expect(graph(reloaded.definition)).toEqual(graph(surveyFlow.definition));
    expect(toData(reloaded, { registry })).toEqual(fromCode);

    const fromDocument = toData(surveyDocument, { registry: { escalations: { toSurveyTeam } } });
    for (const format of ['yaml', 'json'] as const) {
      const escalations = { registry: { escalations: { toSurveyTeam } } };
      const again = parseFlow(stringifyFlow(fromDocument, format), {
        file: `survey.${format}`,
        ...escalations,
      });
      expect(graph(again.definition)).toEqual(graph(surveyDocument.definition));
      expect(toData(again, escalations)).toEqual(fromDocument);
    }
  });

  it('refuses to write what has no data form, naming the step', () => {
    expect(() => toData(surveyFlow)).toThrow(/step "consent": its task is not in registry.tasks/);
    const f = flow('f').step(
      'a',
      defineTask({ name: 'a', instructions: 'a', schema: z.string() }),
      { next: { to: ['end'], pick: () => 'end' as const } },
    );
    expect(() =>
      toData(f, { registry: { tasks: { a: f.definition.steps[0]!.source as never } } }),
    ).toThrow(/step "a": its pick function is not in registry.picks/);
  });
});

describe('a flow document', () => {
  it('names the app’s own tasks, picks and escalations from its registry', () => {
    const plan = defineTask({
      name: 'plan',
      instructions: 'Which plan?',
      prompt: 'Gold or silver?',
      schema: z.enum(['gold', 'silver']),
    });
    const tier = (v: 'gold' | 'silver') => (v === 'gold' ? 'vip' : 'end');
    const toHuman = async () => ({ status: 'transferred' as const, attempts: 0 });
    const registry: FlowRegistry = {
      tasks: { plan },
      picks: { tier },
      escalations: { toHuman },
    };
    const f = parseFlow(
      `flow: plans
version: "2024-06"
steps:
  - id: plan
    task: plan
    onFailure: { escalate: toHuman }
    next: { pick: tier, to: [vip, end], labels: { vip: gold } }
  - id: vip
    announce: Welcome, {{plan}} member!
`,
      { registry },
    );
    const [planStep, vip] = f.definition.steps;
    expect(planStep!.source).toBe(plan);
    expect(planStep!.onFailure).toBe(toHuman);
    expect(vip!.runner.kind).toBe('task');
    expect(toMermaid(f)).toContain('plan -->|gold| vip');
    expect(toData(f, { registry })).toEqual({
      flow: 'plans',
      version: '2024-06',
      steps: [
        {
          id: 'plan',
          task: 'plan',
          onFailure: { escalate: 'toHuman' },
          next: { pick: 'tier', to: ['vip', 'end'], labels: { vip: 'gold' } },
        },
        { id: 'vip', announce: 'Welcome, {{plan}} member!' },
      ],
    });
  });

  it('reads a file and reports its problems under its own path', () => {
    expect(
      loadFlow(SURVEY_FILE, { registry: { escalations: { toSurveyTeam } } }).definition.steps,
    ).toHaveLength(6);
    expect(() => loadFlow('/nonexistent/x.flow.yaml')).toThrow(
      '/nonexistent/x.flow.yaml:1: no such file',
    );
  });
});

describe('bad documents are refused before any call starts, with file:line', () => {
  const head = 'flow: bad\nversion: 1\nsteps:\n';

  it('an unknown task', () => {
    expect(issues(`${head}  - id: a\n    task: yesno\n    with: { question: Ok? }\n`)).toEqual([
      '5: unknown task "yesno": not a prebuilt task (yesNo, choice, number, date, time, email, phone, personName, address, likert, freeText, digits); the registry has no tasks',
    ]);
  });

  it('a branch to nowhere', () => {
    const errors = issues(
      `${head}  - id: a
    task: yesNo
    with: { question: Ok? }
    next:
      "true": b
      "false": nowhere
  - id: b
    announce: Bye.
`,
    );
    expect(errors).toEqual([
      '9: Step "a" goes to "nowhere", which is not a step of flow "bad": declare it or use \'end\'.',
    ]);
  });

  it('a cycle without a way out', () => {
    const errors = issues(
      `${head}  - id: a
    task: yesNo
    with: { question: Again? }
    maxVisits: 3
    next: b
  - id: b
    task: yesNo
    with: { question: Sure? }
    next: a
`,
    );
    expect(errors).toEqual([
      '8: Step "a" has no way to the end of the flow: give it (or a step after it) a next that leads to \'end\'.',
      '12: Step "b" has no way to the end of the flow: give it (or a step after it) a next that leads to \'end\'.',
    ]);
  });

  it('wrong types, unknown fields and missing ones', () => {
    expect(issues(`${head}  - id: a\n    announce: Hi.\n    maxVisits: three\n`)).toEqual([
      '6: expected a number, got "three"',
    ]);
    expect(issues(`${head}  - id: a\n    anounce: Hi.\n`)).toEqual([
      '5: unknown field "anounce" (known: id, task, with, announce, flow, label, next, canRevisit, skippable, onFailure, maxVisits, timeoutMs, context, mask)',
    ]);
    expect(issues('flow: bad\nsteps:\n  - { id: a, announce: Hi. }\n')).toEqual([
      '1: "version" is missing',
    ]);
    expect(
      issues(`${head}  - id: a\n    task: number\n    with: { question: How many?, min: zero }\n`),
    ).toEqual(['6: number: expected a number, got "zero" (with.min)']);
    expect(issues(`${head}  - id: a\n    task: number\n    with: { min: 1 }\n`)).toEqual([
      '6: number: "question" is missing (with.question)',
    ]);
    expect(
      issues(
        `${head}  - id: a\n    announce: Hi.\n    next: { when: [{ if: { gte: 1 } }], else: end }\n`,
      ),
    ).toEqual(['6: conditions: "to" is missing (next.when.0.to)']);
  });

  it('conditions that cannot hold for the answer they read', () => {
    expect(
      issues(`${head}  - id: a
    task: yesNo
    with: { question: Ok? }
    next:
      when:
        - if: { gte: 3 }
          to: end
      else: end
`),
    ).toEqual(['9: "gte" compares numbers, but the answer of "a" is a boolean']);
    expect(
      issues(`${head}  - id: a
    task: choice
    with: { question: Which?, options: [{ value: red, label: Red }] }
    next:
      when:
        - if: { in: [red, blue] }
          to: end
        - if: { of: nope, eq: 1 }
          to: end
      else: end
`),
    ).toEqual([
      '9: "blue" is never an answer of "a" (a string)',
      '11: "of" names a step of this flow (got "nope")',
    ]);
  });

  it('announce placeholders: an unknown step, a masked answer', () => {
    const digits = {
      tasks: { pin: { name: 'pin', create: () => undefined as never, options: { mask: true } } },
    };
    expect(
      issues(
        `${head}  - id: pin
    task: pin
  - id: bye
    announce: "Your PIN {{pin}} and {{nope}}."
`,
        digits as never,
      ),
    ).toEqual([
      '7: {{pin}} would speak a masked answer: announce lines never say a secret',
      '7: {{nope}} names no step of this flow',
    ]);
  });

  it('YAML syntax, duplicate keys and duplicate step ids', () => {
    expect(issues(`${head}  - id: a\n    announce: [Hi.\n`)[0]).toMatch(/^6: /);
    expect(issues(`${head}  - id: a\n    id: b\n    announce: Hi.\n`)[0]).toMatch(
      /^5: Map keys must be unique/,
    );
    expect(
      issues(`${head}  - { id: a, announce: Hi. }\n  - { id: a, announce: Bye. }\n`),
    ).toContain('5: a second step "a": step ids are unique');
  });

  it('names from the registry that do not exist', () => {
    expect(
      issues(
        `${head}  - id: a
    task: yesNo
    with: { question: Ok? }
    onFailure: { escalate: human }
    next: { pick: decide, to: [end] }
`,
        { picks: { other: () => 'end' } },
      ),
    ).toEqual([
      '7: unknown escalation "human"; the registry has no escalations',
      '8: unknown pick "decide"; in the registry\'s picks (other)',
    ]);
  });

  it('loadFlow throws every problem as one FlowDocumentError', () => {
    try {
      parseFlow(`${head}  - id: a\n    task: nope\n  - id: b\n    task: nope2\n`, {
        file: 'x.yaml',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(FlowDocumentError);
      expect((error as FlowDocumentError).code).toBe('invalid_flow');
      expect((error as Error).message.split('\n')).toEqual([
        expect.stringMatching(/^x\.yaml:5: unknown task "nope"/),
        expect.stringMatching(/^x\.yaml:7: unknown task "nope2"/),
      ]);
    }
  });
});
