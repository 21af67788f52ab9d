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

  describe('a yes must be clear', () => {
    it.each([
      // a yes followed by a clause that retracts it
      'yes, cancel that',
      'yes stop',
      'yeah scrap it',
      'sure, forget it',
      'yep, never mind',
      'okay call it off',
      'yes, abort',
      // ... that holds it
      'yes, hold on',
      'yeah hang on',
      'yes one moment',
      'sure, just a sec',
      'yes let me check first',
      'yes but not yet',
      'yes in a minute',
      'okay after lunch',
      // ... that makes it conditional
      'yes if it is free',
      'yeah as long as there is no fee',
      'sure provided it is refundable',
      'yes unless it costs extra',
      'yes only if you can do it today',
      // ... that negates or contrasts it
      "yes, don't",
      'yes, not that one',
      'yeah maybe',
      'yes for now',
      // a yes that names something else
      "yes it's 5 5 6",
      'yes the blue one',
      // a yes after a no, or after "oh" (how a recogniser writes a spoken "no")
      'no wait yes',
      'no, I mean yes',
      'no, actually yes',
      'oh wait yes',
      'yes oh',
      // a question back
      'yes?',
    ])('%j → nomatch, neither yes nor no', (text) => {
      expect(yesNo(text)).toEqual({ kind: 'nomatch' });
    });

    it.each([
      ['yes please do it', true],
      ['yeah go for it', true],
      ['yes I do', true],
      ["yes that's fine", true],
      ['oh yes', true],
      ['sure, why not', true],
      ['sounds good to me', true],
      ['yes, sorry, no', false],
      ['yes... wait, no', false],
      ['no, cancel it', false],
      ["no, don't do it", false],
      ['nope, not now', false],
    ])('%j → %s', (text, value) => {
      expect(yesNo(text)).toEqual({ kind: 'match', value });
    });

    it.each(['no, hold on', 'no unless it is free', 'no but', 'no, go ahead', 'no do it'])(
      '%j: a no with a hold, a condition or a go-ahead is not a no either',
      (text) => {
        expect(yesNo(text)).toEqual({ kind: 'nomatch' });
      },
    );

    it('"I don\'t know" written as a recogniser hears it is not a no', () => {
      expect(yesNo("i don't no")).toEqual({ kind: 'nomatch' });
      expect(yesNo('i no')).toEqual({ kind: 'nomatch' });
      expect(yesNo('oh thanks')).toEqual({ kind: 'nomatch' });
    });
  });
});
