// Running scenarios in text mode from code: a passing call, and each kind of broken
// expectation failing with what happened, where in the file, and the transcript.
import { afterAll, describe, expect, it } from 'vitest';
import { runScenarioFile } from '../../src/scenarios/scenario.js';
import { IVR_BANK, SURVEY, scratchDir } from './helpers.js';

const scratch = scratchDir('scenario-run');
afterAll(() => scratch.remove());

function scenario(name: string, module: string, body: string): string {
  return scratch.write(`${name}.scenario.yaml`, `module: ${module}\n${body}`);
}

const BALANCE_TURNS = `turns:
  - say: how much money is in my account?
    expect:
      said: Please enter your 4-digit PIN.
      no_model_call_during: pin
  - keys: "4321"
    mask: true
`;

describe('a scenario in text mode', () => {
  it('passes when the call does what it expects, with the masked transcript and the typed result', async () => {
    const file = scenario(
      'balance',
      IVR_BANK,
      `${BALANCE_TURNS}expect:
  said: /balance is \\$1,234\\.56/
  never_said: "4321"
  outcome: { outcome: balance_read, captured: [{ name: main_menu }, { name: pin, display: "****" }] }
  transferred: false
  visited: [main_menu, pin]
`,
    );
    const report = await runScenarioFile(file);
    expect(report.status).toBe('passed');
    expect(report.runs).toHaveLength(1);
    const run = report.runs[0]!;
    expect(run.failures).toEqual([]);
    expect(run.transcript).toEqual([
      'agent: Welcome to Taskline Bank. For your balance, press 1. For a lost or stolen card, press 2. For an agent, press 3. To hear these options again, press star.',
      'caller: how much money is in my account?',
      'agent: Please enter your 4-digit PIN.',
      'caller: [keys ****]',
      'agent: Your balance is $1,234.56. Thank you for calling. Goodbye.',
      'agent: (ends the call)',
    ]);
    expect(run.turns.map((t) => [t.label, t.input])).toEqual([
      ['say "how much money is in my account?"', 'speech'],
      ['keys ****', 'keys'],
    ]);
    expect(run.turns.every((t) => t.latencyMs !== undefined && t.latencyMs >= 0)).toBe(true);
  });

  it('fails a broken expectation with file:line of the turn, the reason and the transcript', async () => {
    const file = scenario(
      'broken',
      IVR_BANK,
      `turns:
  - say: how much money is in my account?
    expect:
      said: Please say your PIN out loud.
  - keys: "4321"
expect:
  never_said: "1,234.56"
  outcome: { outcome: card_blocked }
  tool_called: { name: submit, args: { key: "2" } }
  transferred: true
`,
    );
    const report = await runScenarioFile(file);
    expect(report.status).toBe('failed');
    const failures = report.runs[0]!.failures;
    expect(failures.map((f) => [f.where, f.turn, f.message])).toEqual([
      [`${file}:3`, 0, 'expected the agent to say "Please say your PIN out loud."'],
      [
        `${file}:7`,
        undefined,
        'expected the agent never to say "1,234.56", but it said "Your balance is $1,234.56. Thank you for calling. Goodbye."',
      ],
      [
        `${file}:7`,
        undefined,
        expect.stringMatching(
          /^expected the outcome to match, but outcome: expected "card_blocked", got "balance_read"; the outcome was \{"outcome":"balance_read"/,
        ),
      ],
      [
        `${file}:7`,
        undefined,
        'expected a call of submit with {"key":"2"}, but the calls were: submit({"key":"1"})',
      ],
      [`${file}:7`, undefined, 'expected a transfer, but there was no transfer'],
    ]);
    expect(report.runs[0]!.transcript).toContain('caller: how much money is in my account?');
  });

  it('reports model calls during a task, and checkpoints a flow writes', async () => {
    const file = scenario(
      'survey',
      SURVEY,
      `turns:
  - say: "yes"
    expect:
      checkpoint: { position: score, status: running, answers: { consent: true } }
  - say: hmm let me think
    expect:
      no_model_call_during: score
expect:
  checkpoint: { position: thanks }
`,
    );
    const report = await runScenarioFile(file);
    const messages = report.runs[0]!.failures.map((f) => f.message);
    expect(messages[0]).toMatch(/^expected no model call during score, but there were \d+$/);
    expect(messages[1]).toMatch(
      /^expected the last checkpoint to match, but position: expected "thanks", got "score"$/,
    );
    expect(messages).toHaveLength(2);
  });

  it('plays replies the scenario scripts for the model, per agent or task', async () => {
    const file = scenario(
      'scripted',
      IVR_BANK,
      `model:
  main_menu:
    - tool_calls: [{ name: submit, args: { key: "3" } }]
turns:
  - say: I would like to speak with whoever is in charge
    expect:
      said: Please hold while I transfer you to a colleague.
expect:
  transferred: { to: "+15550100", mode: cold }
  tool_called: { name: submit, args: { key: "3" } }
`,
    );
    const report = await runScenarioFile(file);
    expect(report.runs[0]!.failures).toEqual([]);
    expect(report.status).toBe('passed');
  });

  it('holds a latency budget per turn', async () => {
    const file = scenario(
      'latency',
      IVR_BANK,
      `turns:
  - keys: "3"
    expect: { latency: 0ms }
`,
    );
    const report = await runScenarioFile(file);
    expect(report.runs[0]!.failures[0]!.message).toMatch(
      /^turn 1 answered in \d+ ms, over the 0 ms budget$/,
    );
  });

  it('repeats a scenario and stops at the first failing run', async () => {
    const passing = scenario('repeat-ok', IVR_BANK, `repeat: 3\nturns:\n  - keys: "3"\n`);
    const ok = await runScenarioFile(passing);
    expect(ok.status).toBe('passed');
    expect(ok.runs).toHaveLength(3);
    const failing = scenario(
      'repeat-bad',
      IVR_BANK,
      `repeat: 3\nturns:\n  - keys: "3"\nexpect:\n  transferred: false\n`,
    );
    const bad = await runScenarioFile(failing);
    expect(bad.status).toBe('failed');
    expect(bad.runs).toHaveLength(1);
  });

  it('fails a turn played after the call ended, naming the turn', async () => {
    const file = scenario('ended', IVR_BANK, `turns:\n  - keys: "3"\n  - say: hello?\n`);
    const report = await runScenarioFile(file);
    expect(report.runs[0]!.failures).toEqual([
      {
        where: `${file}:4`,
        turn: 1,
        message: 'the call ended before this turn (say "hello?")',
        kind: 'expectation',
      },
    ]);
  });

  it('reports a malformed file or a missing module without running anything', async () => {
    const bad = scratch.write('bad.scenario.yaml', 'turns:\n  - say:\n');
    const r1 = await runScenarioFile(bad);
    expect(r1).toMatchObject({ status: 'failed', runs: [] });
    expect(r1.reason).toMatch(new RegExp(`^${bad}:2: `));
    const missing = scenario('missing', './nowhere', 'turns: [hangup]\n');
    const r2 = await runScenarioFile(missing);
    expect(r2.status).toBe('failed');
    expect(r2.reason).toMatch(/cannot load the module: No module at .*nowhere/);
  });
});
