import { describe, expect, it } from 'vitest';
import { Deadlines } from '../../src/delegation/task-manager/deadlines.js';
import { VirtualClock } from '../../src/testing/virtual-clock.js';

describe('task deadlines on one timer', () => {
  it('fires each deadline at its time, ties in the order they were added, on one timer', async () => {
    const clock = new VirtualClock();
    const start = clock.now();
    const deadlines = new Deadlines(clock);
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now() - start}`);
    deadlines.add(300, at('a'));
    deadlines.add(100, at('b'));
    deadlines.add(100, at('c'));
    deadlines.add(200, at('d')).cancel();
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(250);
    expect(fired).toEqual(['b@100', 'c@100']);
    deadlines.add(10, at('e'));
    await clock.advance(100);
    expect(fired).toEqual(['b@100', 'c@100', 'e@260', 'a@300']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('leaves no timer behind once every deadline is cancelled', () => {
    const clock = new VirtualClock();
    const deadlines = new Deadlines(clock);
    const handles = [deadlines.add(1_000, () => {}), deadlines.add(5_000, () => {})];
    expect(clock.pendingTimers).toBe(1);
    for (const h of handles) h.cancel();
    expect(clock.pendingTimers).toBe(0);
  });

  it('a deadline that fires may add another, which is then armed', async () => {
    const clock = new VirtualClock();
    const deadlines = new Deadlines(clock);
    const fired: number[] = [];
    deadlines.add(50, () => {
      fired.push(1);
      deadlines.add(50, () => fired.push(2));
    });
    await clock.advance(100);
    expect(fired).toEqual([1, 2]);
    expect(clock.pendingTimers).toBe(0);
  });
});
