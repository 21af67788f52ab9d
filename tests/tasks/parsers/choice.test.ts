// choice: pick one option by label, synonym or position.
import { describe, expect, it } from 'vitest';
import { type ChoiceOption, choice } from '../../../src/tasks/parsers/index.js';

const accounts: ChoiceOption<'checking' | 'savings' | 'card' | 'gift'>[] = [
  { value: 'checking', label: 'Checking account', synonyms: ['checking', 'current account'] },
  { value: 'savings', label: 'Savings account', synonyms: ['savings'] },
  { value: 'card', label: 'Card' },
  { value: 'gift', label: 'Gift card' },
];

describe('choice', () => {
  it.each([
    ['checking', 'checking'],
    ['Checking account', 'checking'],
    ['Savings, please', 'savings'],
    ['my current account', 'checking'],
    ['CARD!', 'card'],
    ['gift card', 'gift'],
    ['the first one', 'checking'],
    ['option two', 'savings'],
    ['2', 'savings'],
    ['number 3', 'card'],
    ['the second', 'savings'],
    ['the last one', 'gift'],
    ['not the first one, the second one', 'savings'],
    ["I'd like my savings account", 'savings'],
  ])('%j → %s', (text, value) => {
    expect(choice(text, accounts)).toEqual({ kind: 'match', value });
  });

  it.each([
    ['checking or savings'],
    ['banana'],
    [''],
    ['I want two'],
    ['not checking'],
    ['cardigan'],
  ])('%j → nomatch', (text) => {
    expect(choice(text, accounts)).toEqual({ kind: 'nomatch' });
  });

  it.each([['the fifth one'], ['5'], ['option seven']])(
    '%j → invalid (no such position)',
    (text) => {
      expect(choice(text, accounts)).toEqual({
        kind: 'invalid',
        reason: 'There are only 4 options.',
      });
    },
  );

  it('matches nothing with no options, and ignores positions when asked', () => {
    expect(choice('the first one', [])).toEqual({ kind: 'nomatch' });
    expect(choice('the first one', accounts, { positional: false })).toEqual({ kind: 'nomatch' });
    expect(choice('savings', accounts, { positional: false })).toEqual({
      kind: 'match',
      value: 'savings',
    });
  });
});
