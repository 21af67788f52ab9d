// yesNo: the caller's confirmation words, read without a model.
import { describe, expect, it } from 'vitest';
import { yesNo } from '../../../src/tasks/parsers/index.js';

describe('yesNo', () => {
  it.each([
    ['yes', true],
    ['Yeah!', true],
    ['yep', true],
    ['sure', true],
    ['correct', true],
    ["That's right.", true],
    ['that’s right', true],
    ['affirmative', true],
    ['absolutely', true],
    ['uh huh', true],
    ['yes please', true],
    ['um, yes, that is correct', true],

    ['no', false],
    ['Nope.', false],
    ['nah', false],
    ['negative', false],
    ["that's wrong", false],
    ['incorrect', false],
    ["that's not right", false],
    ['no thank you', false],
    ['absolutely not', false],
    ["I don't think so", false],
  ])('%j → %s', (text, value) => {
    expect(yesNo(text)).toEqual({ kind: 'match', value });
  });

  it.each([
    ['yes no'],
    ['yeah no'],
    [''],
    ['maybe'],
    ['hello'],
    ['yes but the last digit is five'],
    ['yes I would like to change my delivery address to the office'],
    ["I'm not sure"],
    ['no idea'],
    ["I don't know"],
  ])('%j → nomatch (ambiguous or not a yes/no)', (text) => {
    expect(yesNo(text)).toEqual({ kind: 'nomatch' });
  });
});
