import { describe, expect, it } from 'vitest';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';

const START = Date.UTC(2026, 0, 5, 9, 0, 0);

/** Tracks a promise's settlement so a test can look at it without waiting. */
function track(promise: Promise<unknown>) {
  const state: { status: 'pending' | 'resolved' | 'rejected'; reason?: unknown } = {
    status: 'pending',
  };
  promise.then(
    () => {
      state.status = 'resolved';
    },
    (reason: unknown) => {
      state.status = 'rejected';
      state.reason = reason;
    },
  );
  return state;
}

describe('VirtualClock time', () => {
  it('starts at a fixed date, not the wall clock, and moves only when advanced', async () => {
    const clock = new VirtualClock();
    expect(clock.now()).toBe(START);
    expect(new VirtualClock(1000).now()).toBe(1000);
    await flushAsync();
    expect(clock.now()).toBe(START);
    await clock.advance(1500);
    expect(clock.now()).toBe(START + 1500);
    await clock.advance(0);
    expect(clock.now()).toBe(START + 1500);
  });

  it('rejects a negative, NaN or infinite advance and leaves the time alone', async () => {
    const clock = new VirtualClock(0);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(clock.advance(bad)).rejects.toThrow(RangeError);
      await expect(clock.advance(bad)).rejects.toThrow(/finite, non-negative/);
    }
    expect(clock.now()).toBe(0);
  });
});

describe('VirtualClock timers', () => {
  it('fires timers in time order, ties in the order they were set, each at its own time', async () => {
    const clock = new VirtualClock(0);
    const fired: Array<[string, number]> = [];
    const log = (name: string) => () => fired.push([name, clock.now()]);
    clock.setTimer(300, log('c'));
    clock.setTimer(100, log('a1'));
    clock.setTimer(200, log('b'));
    clock.setTimer(100, log('a2'));
    clock.setTimer(100, log('a3'));
    expect(clock.pendingTimers).toBe(5);
    expect(clock.nextTimerAt()).toBe(100);

    await clock.advance(250);
    expect(fired).toEqual([
      ['a1', 100],
      ['a2', 100],
      ['a3', 100],
      ['b', 200],
    ]);
    expect(clock.now()).toBe(250);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt()).toBe(300);

    await clock.advance(50);
    expect(fired.at(-1)).toEqual(['c', 300]);
    expect(clock.pendingTimers).toBe(0);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('treats a negative delay as zero: due on the next advance, even advance(0)', async () => {
    const clock = new VirtualClock(0);
    let fired = false;
    clock.setTimer(-50, () => {
      fired = true;
    });
    expect(clock.nextTimerAt()).toBe(0);
    await clock.advance(0);
    expect(fired).toBe(true);
  });

  it('does not fire a cancelled timer; cancelling twice or after firing is harmless', async () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    const a = clock.setTimer(100, () => fired.push('a'));
    const b = clock.setTimer(100, () => fired.push('b'));
    a.cancel();
    a.cancel();
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(100);
    expect(fired).toEqual(['b']);
    b.cancel();
    expect(clock.pendingTimers).toBe(0);
  });

  it('lets a timer cancel a later one before it falls due', async () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    const later = clock.setTimer(200, () => fired.push('later'));
    clock.setTimer(100, () => {
      fired.push('first');
      later.cancel();
    });
    await clock.advance(1000);
    expect(fired).toEqual(['first']);
  });

  it('fires timers set by fired timers when they fall within the same advance', async () => {
    const clock = new VirtualClock(0);
    const fired: Array<[string, number]> = [];
    clock.setTimer(100, () => {
      fired.push(['outer', clock.now()]);
      clock.setTimer(100, () => fired.push(['inner', clock.now()]));
      clock.setTimer(0, () => fired.push(['immediate', clock.now()]));
      clock.setTimer(500, () => fired.push(['outside', clock.now()]));
    });
    await clock.advance(250);
    expect(fired).toEqual([
      ['outer', 100],
      ['immediate', 100],
      ['inner', 200],
    ]);
    expect(clock.nextTimerAt()).toBe(600);
  });

  it('sees timers set by async work a fired timer started (settled between timers)', async () => {
    const clock = new VirtualClock(0);
    const fired: Array<[string, number]> = [];
    clock.setTimer(1000, () => {
      void (async () => {
        await Promise.resolve();
        await new Promise<void>((resolve) => setImmediate(resolve));
        clock.setTimer(1000, () => fired.push(['after async', clock.now()]));
      })();
    });
    await clock.advance(5000);
    expect(fired).toEqual([['after async', 2000]]);
    expect(clock.now()).toBe(5000);
  });

  it('runs the settle function once up front and after every fired timer', async () => {
    const clock = new VirtualClock(0);
    clock.setTimer(10, () => undefined);
    clock.setTimer(20, () => undefined);
    let settles = 0;
    await clock.advance(30, async () => {
      settles += 1;
    });
    expect(settles).toBe(3);
  });
});

describe('VirtualClock.sleep', () => {
  it('resolves exactly when the virtual time has passed', async () => {
    const clock = new VirtualClock(0);
    const slept = track(clock.sleep(1000));
    await clock.advance(999);
    expect(slept.status).toBe('pending');
    await clock.advance(1);
    expect(slept.status).toBe('resolved');
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects with the abort reason and cancels its timer when aborted', async () => {
    const clock = new VirtualClock(0);
    const controller = new AbortController();
    const slept = track(clock.sleep(1000, controller.signal));
    await clock.advance(500);
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('caller hung up');
    controller.abort(reason);
    await flushAsync();
    expect(slept).toEqual({ status: 'rejected', reason });
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(1000);
    expect(slept.status).toBe('rejected');
  });

  it('rejects at once, setting no timer, when the signal is already aborted', async () => {
    const clock = new VirtualClock(0);
    const reason = new Error('already gone');
    await expect(clock.sleep(1000, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
  });

  it('is unaffected by an abort after it resolved', async () => {
    const clock = new VirtualClock(0);
    const controller = new AbortController();
    const slept = track(clock.sleep(10, controller.signal));
    await clock.advance(10);
    controller.abort(new Error('too late'));
    await flushAsync();
    expect(slept.status).toBe('resolved');
  });
});
