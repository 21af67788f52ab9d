import { describe, expect, it } from 'vitest';
import { ancestorsOf, rangeBelow } from '../../src/deep-agent/tools/files/backends/store-common.js';

describe('store key ranges', () => {
  it('computes key ranges and ancestors for SQL scans', () => {
    expect(rangeBelow('/')).toEqual({ lo: '/', hi: '0' });
    expect(rangeBelow('/a')).toEqual({ lo: '/a/', hi: '/a0' });
    const inRange = (p: string) => p >= '/a/' && p < '/a0';
    expect(['/a/x', '/a/b/c', '/a/\u{1F600}'].every(inRange)).toBe(true);
    expect(['/a', '/a-b/x', '/a0', '/ab', '/b'].some(inRange)).toBe(false);
    expect(ancestorsOf('/a/b/c.md')).toEqual(['/a', '/a/b']);
    expect(ancestorsOf('/top.md')).toEqual([]);
  });
});
