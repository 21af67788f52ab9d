// What the caller was heard as: word accuracy and captures right / wrong / unanswered
// against what the scenario says the caller meant, and how reports print them.
import { describe, expect, it } from 'vitest';
import {
  checkCaptures,
  countCaptures,
  wordAccuracy,
  wordScore,
} from '../../src/scenarios/hearing.js';
import { formatScenario, formatTotals } from '../../src/scenarios/report.js';
import type { ScenarioReport } from '../../src/scenarios/scenario.js';
import { formatLine } from '../../src/testing/expect.js';
import type { TranscriptLine } from '../../src/testing/simulated-caller.js';

const caller = (text: string, heard?: string): TranscriptLine => ({
  role: 'caller',
  text,
  via: 'speech',
  at: 0,
  ...(heard !== undefined ? { heard } : {}),
});

describe('hearing figures', () => {
  it('scores heard words against the script as a recogniser writes them', () => {
    const score = wordScore([
      caller('No thanks.', 'oh thanks'),
      caller('4 1 5', 'four one five'),
      caller('****', '****'),
      { role: 'agent', text: 'Is that right?', via: 'speech', at: 0 },
      caller('yes please', ''),
    ]);
    expect(score).toEqual({ words: 7, errors: 3 });
    expect(wordAccuracy(score)).toBeCloseTo(4 / 7);
  });

  it('counts each meant value right, wrong or unanswered', () => {
    const result = {
      status: 'completed',
      answers: { consent: true, score: 5, reason: 'the queue was far to long' },
    };
    const checks = checkCaptures(result, {
      answers: { consent: true, score: 4, reason: '/queue/', email: 'jane@example.com' },
    });
    expect(checks.map((c) => [c.path, c.verdict])).toEqual([
      ['answers.consent', 'right'],
      ['answers.score', 'wrong'],
      ['answers.reason', 'right'],
      ['answers.email', 'unanswered'],
    ]);
    expect(countCaptures(checks)).toEqual({ right: 2, wrong: 1, unanswered: 1 });
    expect(checkCaptures(undefined, { phone: '+14155550199' })[0]!.verdict).toBe('unanswered');
    expect(
      checkCaptures(
        { captured: [{ name: 'x' }] },
        { captured: [{ name: 'x' }, { name: 'y' }] },
      ).map((c) => c.verdict),
    ).toEqual(['right', 'unanswered']);
  });

  it('shows what was heard beside the scripted words', () => {
    expect(formatLine(caller('no thanks', 'oh thanks'))).toBe(
      'caller: no thanks  [heard: oh thanks]',
    );
    expect(formatLine(caller('yes', ''))).toBe('caller: yes  [heard: (nothing)]');
    expect(formatLine(caller('yes'))).toBe('caller: yes');
  });

  it('ends with the captures on the closing line, and lists what was not right per file', () => {
    const report: ScenarioReport = {
      file: '/x/a.scenario.yaml',
      name: 'a',
      mode: 'audio',
      status: 'failed',
      durationMs: 1000,
      runs: [
        {
          ok: false,
          failures: [
            {
              where: '/x/a.scenario.yaml:3',
              message: 'captured score = 5, but the caller meant 4',
              kind: 'capture',
            },
          ],
          transcript: ['caller: four  [heard: five]'],
          turns: [],
          words: { words: 1, errors: 1 },
          captures: {
            right: 1,
            wrong: 1,
            unanswered: 0,
            checks: [
              { path: 'answers.consent', meant: true, got: true, verdict: 'right' },
              { path: 'answers.score', meant: 4, got: 5, verdict: 'wrong' },
            ],
          },
          durationMs: 1000,
        },
      ],
    };
    const lines = formatScenario(report, '/x');
    expect(lines).toContain('      heard: word accuracy 0 % (1 error(s) in 1 scripted word(s))');
    expect(lines).toContain('      captures: 1 right, 1 wrong, 0 unanswered');
    expect(lines).toContain('      wrong: answers.score meant 4, captured 5');
    expect(formatTotals([report])).toBe(
      'scenarios: 0 passed, 1 failed, 0 skipped; captures: 1 right, 1 wrong, 0 unanswered',
    );
  });
});
