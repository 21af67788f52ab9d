/**
 * The calls the latency bench plays: structured answers (a yes/no, a 4-digit account
 * number, a menu choice, a score) on taskline's parser path, and a plain upstream agent that
 * answers the same turns through a model. Each capture publishes what it expects itself.
 */
import { voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import type { Outcome } from '../src/outcome.js';
import type { ScenarioModule } from '../src/scenarios/call-parts.js';
import { choice, digits, number, yesNo } from '../src/tasks/prebuilt.js';
import { ScriptedLLM } from '../src/testing/scripted-llm.js';

const MENU = [
  { value: 'balance', label: 'your balance', synonyms: ['balance'] },
  { value: 'lost', label: 'a lost card', synonyms: ['lost', 'stolen'] },
  { value: 'agent', label: 'an agent', synonyms: ['agent', 'person'] },
] as const;

const STEPS = [
  {
    capture: yesNo({ name: 'consent', question: 'Do you have a minute for two questions?' }),
  },
  {
    capture: digits({
      name: 'account',
      question: 'What are the last four digits of your account?',
      minLength: 4,
      maxLength: 4,
    }),
  },
  {
    capture: choice({
      name: 'topic',
      question: 'Is it about your balance, a lost card, or an agent?',
      options: MENU,
    }),
  },
  {
    capture: number({
      name: 'score',
      question: 'From 0 to 10, how was our service?',
      min: 0,
      max: 10,
      integer: true,
    }),
  },
];

/** The caller's side: one structured answer per question. */
export const STRUCTURED_TURNS = `turns:
  - say: "yes"
  - say: four three two one
  - say: lost card
  - say: nine
expect:
  outcome: { consent: true, account: "4321", topic: lost, score: 9 }
`;

/** The agent's lines, in order, for the plain agent's model. */
export const STRUCTURED_LINES = [
  STEPS[0]!.capture.spec.prompt ?? '',
  ...STEPS.slice(1).map((s) => s.capture.spec.prompt ?? ''),
  'Thank you. Goodbye.',
];

class Structured extends voice.Agent {
  readonly answers: Record<string, unknown> = {};

  constructor() {
    super({ instructions: 'Ask the questions.' });
  }

  override async onEnter(): Promise<void> {
    for (const step of STEPS) {
      const outcome = (await step.capture.run()) as Outcome<unknown>;
      if (outcome.status !== 'ok') return;
      this.answers[step.capture.spec.name] = outcome.value;
    }
    this.session.say('Thank you. Goodbye.');
  }
}

/** taskline's structured call: every answer read by a parser, no model. */
export function structuredCall(): ScenarioModule {
  const createCall = () => {
    const agent = new Structured();
    return { agent, result: () => agent.answers };
  };
  return {
    module: { name: 'structured', description: '', createCall },
    createCall,
    createModel: () => new ScriptedLLM(),
    modelLabel: 'none (parsers)',
  };
}

class PlainAgent extends voice.Agent {
  constructor(private readonly greeting: string) {
    super({ instructions: 'You are a phone line. Keep every reply short.' });
  }

  override async onEnter(): Promise<void> {
    this.session.say(this.greeting);
  }
}

/** A plain upstream agent whose model (at `baseURL`) says the given lines after the greeting. */
export function plainCall(greeting: string, baseURL: string): ScenarioModule {
  const createCall = () => ({ agent: new PlainAgent(greeting), result: () => undefined });
  return {
    module: { name: 'plain upstream', description: '', createCall },
    createCall,
    createModel: () => new openai.LLM({ model: 'local', baseURL, apiKey: 'local' }),
    modelLabel: 'openai.LLM → local server',
  };
}
