// Normalisation shared by the parsers: what is kept, what is dropped as filler or lead-in.
import { describe, expect, it } from 'vitest';
import {
  cleanTokens,
  cleanWords,
  normalize,
  plainWords,
  stripLeadIns,
} from '../../../src/tasks/parsers/words.js';

describe('words', () => {
  it('normalises case, quotes, dashes and whitespace but keeps symbols', () => {
    expect(normalize('  It’s  “John.Smith@Example.com”  ')).toBe('it\'s "john.smith@example.com"');
    expect(normalize('−2')).toBe('-2');
  });

  it('splits plain words on symbols but keeps in-word apostrophes', () => {
    expect(plainWords("forty-two, that's it!")).toEqual(['forty', 'two', "that's", 'it']);
  });

  it.each([
    ['um, my phone number is 4 1 5', ['4', '1', '5']],
    ["it's 42", ['42']],
    ['my name’s John', ['john']],
    ['I think it is twelve please', ['twelve']],
    ['uh, the code is 1234, thanks', ['1234']],
    ['yes', ['yes']],
    ["it's", ["it's"]],
  ])('%j → %o', (text, tokens) => {
    expect(cleanTokens(text)).toEqual(tokens);
  });

  it('keeps symbols in tokens and never strips to nothing', () => {
    expect(cleanTokens('-2.5.')).toEqual(['-2.5']);
    expect(stripLeadIns(['please'])).toEqual(['please']);
    expect(cleanWords('well done')).toEqual(['well', 'done']);
  });
});
