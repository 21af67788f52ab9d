/**
 * Workaround for an upstream deadlock (@livekit/agents 1.9.0, `AgentTask.run`; no upstream
 * issue filed as of 1.9.0, pinned by tests/upstream/update_agent_inline.test.ts): when
 * `session.updateAgent()` replaces an inline AgentTask, upstream's `run()` closes the paused
 * parent activity before it returns, and that close waits for the parent's running tools —
 * among them the tool awaiting this very `run()`. The awaiter never gets its result.
 *
 * A task that knows it was replaced hands its result over here instead, and its awaiter
 * resumes at once; upstream's `run()` then finishes in the background (the parent's close
 * stops waiting once the awaiting tool has returned).
 */
export class ReplacedRun<R> {
  private handOver: ((result: R) => void) | undefined;
  private handed: { result: R } | undefined;

  /** Awaits upstream's `run()`, or the result handed over when the task was replaced. */
  race(upstream: Promise<R>): Promise<R> {
    // Whatever upstream's run() ends with after a hand-over is no longer anyone's business.
    upstream.catch(() => undefined);
    const replaced = new Promise<R>((resolve) => {
      if (this.handed) resolve(this.handed.result);
      else this.handOver = resolve;
    });
    return Promise.race([upstream, replaced]);
  }

  /** The task was replaced and ended with `result`: its awaiter gets it now. */
  settle(result: R): void {
    if (this.handed) return;
    this.handed = { result };
    this.handOver?.(result);
  }
}
