// A scenario file written before a task's `done` became `completed` keeps passing, with a
// deprecation notice that says where the old word is; the old word is read only as a `status`
// that now says `completed`, so it never makes a wrong outcome pass.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type CallView, checkExpectations } from '../../src/scenarios/expectations.js';
import { runScenarioFile } from '../../src/scenarios/scenario.js';
import { root, scratchDir } from './helpers.js';

const scratch = scratchDir('retired-words');
afterAll(() => scratch.remove());
afterEach(() => vi.restoreAllMocks());

function view(result: unknown): CallView {
  return {
    agentLines: [],
    toolCalls: [],
    modelCalls: undefined,
    visited: [],
    checkpoints: [],
    transfer: undefined,
    result,
    interruptions: undefined,
    latencies: [],
  };
}

const DEPRECATION = { type: 'DeprecationWarning', code: 'TASKLINE_TASK_STATUS_DONE' };

describe("a task's old status word in a scenario outcome", () => {
  it('status: done matches a completed task, with a notice naming the file and the place', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const result = { tasks: [{ status: 'completed', delivery: 'spoken' }] };
    const spec = { outcome: { tasks: [{ status: 'done', delivery: 'spoken' }] } };
    expect(checkExpectations(spec, view(result), 'calls/a.scenario.yaml:12')).toEqual([]);
    expect(warn).toHaveBeenCalledWith(
      "calls/a.scenario.yaml:12: outcome tasks[0].status: the task status 'done' is now 'completed'; write 'completed' ('done' is still read, for now).",
      DEPRECATION,
    );
    // A repeat of the same file says it once.
    expect(checkExpectations(spec, view(result), 'calls/a.scenario.yaml:12')).toEqual([]);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('never makes a wrong outcome pass: a failed task, another key, or a different word still fail', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const failed = checkExpectations(
      { outcome: { tasks: [{ status: 'done' }] } },
      view({ tasks: [{ status: 'failed' }] }),
      'b.scenario.yaml:3',
    );
    expect(failed).toEqual([
      'expected the outcome to match, but tasks[0].status: expected "done", got "failed"; the outcome was {"tasks":[{"status":"failed"}]}',
    ]);
    const otherKey = checkExpectations(
      { outcome: { state: 'done' } },
      view({ state: 'completed' }),
      'b.scenario.yaml:4',
    );
    expect(otherKey).toHaveLength(1);
    expect(otherKey[0]).toContain('state: expected "done", got "completed"');
    // A `status` that is not a task's (a todo, a flow's result) keeps its meaning: `done`
    // there is not `completed`, and the outcome fails as it always did.
    for (const outcome of [{ todos: [{ status: 'done' }] }, { status: 'done' }]) {
      const actual =
        'todos' in outcome ? { todos: [{ status: 'completed' }] } : { status: 'completed' };
      expect(checkExpectations({ outcome }, view(actual), 'b.scenario.yaml:5')).toHaveLength(1);
    }
    // An app whose own status word is `done` is matched as written, with no notice.
    expect(
      checkExpectations({ outcome: { status: 'done' } }, view({ status: 'done' }), 'c:1'),
    ).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
  });

  it('the assistant example, its scenario written with status: done, still passes in text mode', async () => {
    const example = join(root, 'examples', 'assistant');
    const current = readFileSync(join(example, 'background-research.scenario.yaml'), 'utf8');
    expect(current).toContain('tasks: [{ status: completed, delivery: spoken }]');
    const old = current
      .replace(
        'tasks: [{ status: completed, delivery: spoken }]',
        'tasks: [{ status: done, delivery: spoken }]',
      )
      .replace(/^# yaml-language-server.*\n/, '');
    const file = scratch.write('old-words.scenario.yaml', `module: ${example}\n${old}`);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const report = await runScenarioFile(file);
    expect(report.runs[0]?.failures ?? report.reason).toEqual([]);
    expect(report.status).toBe('passed');
    const notices = warn.mock.calls.filter(
      ([, options]) => (options as { code?: string } | undefined)?.code === DEPRECATION.code,
    );
    expect(notices).toHaveLength(1);
    expect(String(notices[0]?.[0])).toMatch(
      /old-words\.scenario\.yaml:\d+: outcome tasks\[0\]\.status: the task status 'done' is now 'completed'/,
    );
  });
});
