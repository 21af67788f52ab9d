// A scenario file is validated before anything runs; every malformed file names the file and
// the line of the problem, with a sentence saying what is wrong.
import { describe, expect, it } from 'vitest';
import { isTasklineError } from '../../src/core/errors.js';
import { parseScenario } from '../../src/scenarios/load.js';

function problem(text: string): string {
  try {
    parseScenario(text, '/x/call.scenario.yaml');
  } catch (error) {
    expect(isTasklineError(error, 'invalid_scenario')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected the scenario to be refused');
}

describe('loading a scenario', () => {
  it('reads a valid file: turns, their lines, the module next to the file, durations', () => {
    const s = parseScenario(
      [
        'name: balance',
        'module: ../bank',
        'turns:',
        '  - say: balance',
        '    expect: { said: PIN }',
        '  - keys: "4321"',
        '    mask: true',
        '  - silence: 1.5s',
        '  - barge_in: agent',
        '    after: 800ms',
        '  - hangup',
        'expect:',
        '  outcome: { outcome: balance_read }',
      ].join('\n'),
      '/x/calls/balance.scenario.yaml',
    );
    expect(s.name).toBe('balance');
    expect(s.module).toBe('/x/bank');
    expect(s.turnLines).toEqual([4, 6, 8, 9, 11]);
    expect(s.expectLine).toBe(12);
    expect(s.spec.turns[2]).toEqual({ silence: '1.5s' });
    expect(s.spec.turns[4]).toBe('hangup');
  });

  it('names the scenario after its file and runs the module of its folder by default', () => {
    const s = parseScenario('turns: [hangup]', '/x/bank/lost-card.scenario.yaml');
    expect(s.name).toBe('lost-card');
    expect(s.module).toBe('/x/bank');
  });

  it.each([
    ['YAML syntax', 'turns:\n  - say: [a, b\n  - hangup\n', /^\/x\/call\.scenario\.yaml:\d: .*/],
    ['not a mapping', '- say: hi\n', /^\/x\/call\.scenario\.yaml:1: a scenario is a mapping/],
    ['no turns', 'name: x\n', /^\/x\/call\.scenario\.yaml:1: .*\(turns\)$/],
    [
      'an unknown top-level field',
      'name: x\nturn:\n  - say: hi\n',
      /^\/x\/call\.scenario\.yaml:2: unknown field "turn" \(known: name, module, model, repeat, audio, skip_audio, turns, expect\)/,
    ],
    [
      'a turn with two kinds',
      'turns:\n  - say: hi\n  - say: hi\n    keys: "1"\n',
      /^\/x\/call\.scenario\.yaml:3: a turn is one of: .* \(it has say and keys\) \(turns\[1\]\)$/,
    ],
    [
      'a turn of no known kind',
      'turns:\n  - sya: hi\n',
      /^\/x\/call\.scenario\.yaml:2: a turn is one of: say: "…", keys: "123#", silence: 8s, barge_in: "…", hangup/,
    ],
    [
      'keys that are not DTMF',
      'turns:\n  - say: hi\n  - keys: "12x"\n',
      /^\/x\/call\.scenario\.yaml:3: keys are DTMF: 0-9 \* # A-D \(turns\[1\]\.keys\)$/,
    ],
    [
      'a bad duration',
      'turns:\n  - silence: soon\n',
      /^\/x\/call\.scenario\.yaml:2: a duration such as "800ms", "8s" or "1.5s" \(turns\[0\]\.silence\)$/,
    ],
    [
      'an unknown field in a turn',
      'turns:\n  - say: hi\n    wait: 2s\n',
      /^\/x\/call\.scenario\.yaml:3: unknown field "wait" \(turns\[0\]\.wait\)$/,
    ],
    [
      'an unknown expectation',
      'turns:\n  - say: hi\nexpect:\n  sayd: hello\n',
      /^\/x\/call\.scenario\.yaml:4: unknown field "sayd" \(expect\.sayd\)$/,
    ],
    [
      'a repeat that is not a count',
      'repeat: 0\nturns: [hangup]\n',
      /^\/x\/call\.scenario\.yaml:1: .*>=1 \(repeat\)$/,
    ],
    [
      'a malformed model',
      'model: scripted\nturns: [hangup]\n',
      /^\/x\/call\.scenario\.yaml:1: model is "module" \(the module's scripted model\) or a map/,
    ],
    ['a duplicate key', 'turns: [hangup]\nturns: [hangup]\n', /^\/x\/call\.scenario\.yaml:2: /],
  ])('refuses %s with file:line', (_, text, message) => {
    expect(problem(text)).toMatch(message);
  });
});
