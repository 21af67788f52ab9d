// name: first/last names, spoken or spelled, title-cased.
import { describe, expect, it } from 'vitest';
import { name } from '../../../src/tasks/parsers/index.js';

describe('name', () => {
  it.each([
    ['my name is John Smith', { first: 'John', last: 'Smith' }],
    ['John', { first: 'John' }],
    ['J O H N', { first: 'John' }],
    ['J-O-H-N S-M-I-T-H', { first: 'John', last: 'Smith' }],
    ['John, J O H N, Smith, S M I T H', { first: 'John', last: 'Smith' }],
    ['John Smyth, S M Y T H', { first: 'John', last: 'Smyth' }],
    ['Jon, J O H N', { first: 'John' }],
    ['this is Maria Garcia', { first: 'Maria', last: 'Garcia' }],
    ["I'm mary-jane o'brien", { first: 'Mary-Jane', last: "O'Brien" }],
    ['first name John last name Smith', { first: 'John', last: 'Smith' }],
    ['my first name is John and my last name is Smith', { first: 'John', last: 'Smith' }],
    ['Juan Carlos de la Cruz', { first: 'Juan Carlos', last: 'de la Cruz' }],
    ['Dr. Jane Doe', { first: 'Jane', last: 'Doe' }],
    ['McDonald', { first: 'McDonald' }],
    ['m a double t', { first: 'Matt' }],
    ['um, John speaking', { first: 'John' }],
    ['José Núñez', { first: 'José', last: 'Núñez' }],
  ])('%j → %o', (text, value) => {
    expect(name(text)).toEqual({ kind: 'match', value });
  });

  it.each([["I don't know"], ['what'], ['12345'], [''], ['hello'], ['can you repeat that please']])(
    '%j → nomatch',
    (text) => {
      expect(name(text)).toEqual({ kind: 'nomatch' });
    },
  );
});
