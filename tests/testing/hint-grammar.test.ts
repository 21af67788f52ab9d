// Hints per question for a grammar recogniser: phrases become a grammar, and the grammar's
// words are kept only where a free decode heard the same sounds.
import { describe, expect, it } from 'vitest';
import {
  agreement,
  grammarPhrases,
  jsgfOf,
  numberWords,
  phraseWords,
  trustGrammar,
  wantsGrammar,
} from '../../src/testing/hint-grammar.js';

const PHONES: Record<string, string> = {
  no: 'N OW',
  oh: 'OW',
  thanks: 'TH AE NG K S',
  four: 'F AO R',
  for: 'F AO R',
  eight: 'EY T',
  floor: 'F L AO R',
  yes: 'Y EH S',
  us: 'AH S',
  five: 'F AY V',
  fight: 'F AY T',
  i: 'AY',
  lost: 'L AO S T',
  my: 'M AY',
  wallet: 'W AA L AH T',
};
const words = (text: string) =>
  text.split(' ').map((word) => ({ word, phones: PHONES[word]!.split(' ') }));
const trusted = (grammar: string, free: string) =>
  trustGrammar(agreement(words(grammar), words(free)));

describe('hint grammar', () => {
  it('spells numbers as callers say them, and long digit strings digit by digit', () => {
    expect(numberWords(42)).toBe('forty two');
    expect(numberWords(1980)).toBe('one thousand nine hundred eighty');
    expect(phraseWords('Option 10, please!')).toEqual(['option', 'ten', 'please']);
    expect(phraseWords('PIN 04321')).toEqual(['pin', 'zero', 'four', 'three', 'two', 'one']);
  });

  it('builds a grammar only for closed answers, completing digit answers with every digit', () => {
    expect(wantsGrammar({ kind: 'freeText', phrases: ['anything'] })).toBe(false);
    expect(wantsGrammar({ kind: 'yesNo', phrases: [] })).toBe(false);
    expect(wantsGrammar({ kind: 'digits', phrases: [] })).toBe(true);
    const phrases = grammarPhrases({ kind: 'number', phrases: ['1', '2', '1'] });
    expect(phrases.map((p) => p.join(' '))).toContain('seven');
    expect(phrases.filter((p) => p.join(' ') === 'one')).toHaveLength(1);
    const { name, jsgf } = jsgfOf([['yes'], ['no', 'thanks']]);
    expect(jsgf).toContain('public <answer> = ( yes | no thanks )+ ;');
    expect(jsgfOf([['yes'], ['no', 'thanks']]).name).toBe(name);
  });

  it('trusts the grammar where the free decode heard the same sounds', () => {
    expect(trusted('no thanks', 'oh thanks')).toBe(true);
    expect(trusted('no', 'oh')).toBe(true);
    expect(trusted('four', 'for')).toBe(true);
    expect(trusted('five', 'fight')).toBe(true);
  });

  it('never trusts a digit the free decode heard as another (a wrong value is worse than none)', () => {
    expect(trusted('five', 'four')).toBe(false);
    expect(trusted('four', 'five')).toBe(false);
    expect(trusted('yes', 'us')).toBe(false);
  });

  it('never trusts a word the grammar made up, or an answer to another question', () => {
    const inserted = agreement(words('eight four'), words('four'));
    expect(inserted.unheard).toEqual(['eight']);
    expect(trustGrammar(inserted)).toBe(false);
    expect(trusted('no no yes', 'i lost my wallet')).toBe(false);
    expect(trusted('four', 'floor')).toBe(true);
  });
});
