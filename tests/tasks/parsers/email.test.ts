// email: written and spoken addresses ("at", "dot", spelled letters), lower-cased.
import { describe, expect, it } from 'vitest';
import { email } from '../../../src/tasks/parsers/index.js';

describe('email', () => {
  it.each([
    ['john dot smith at example dot com', 'john.smith@example.com'],
    ['j o h n at gmail dot com', 'john@gmail.com'],
    ['J. O. H. N. at G. M. A. I. L. dot com', 'john@gmail.com'],
    ['John.Smith@Example.com.', 'john.smith@example.com'],
    ["it's john.smith at example.com", 'john.smith@example.com'],
    ['my email is jane underscore doe at yahoo dot co dot uk', 'jane_doe@yahoo.co.uk'],
    ['email address is x at y dot io', 'x@y.io'],
    ['mary dash ann at sign example dot org', 'mary-ann@example.org'],
    ['bob hyphen lee at example dot com', 'bob-lee@example.com'],
    ['john plus tag at example dot com', 'john+tag@example.com'],
    ['john at gmail', 'john@gmail.com'],
    ['s as in sam m i t h at example dot com', 'smith@example.com'],
    ['m a double t at example dot com', 'matt@example.com'],
    ['double u e b at example dot com', 'web@example.com'],
    ['jay oh aitch en at gmail dot com', 'john@gmail.com'],
    ['capital J o h n at example dot com', 'john@example.com'],
    ['john twenty three at gmail dot com', 'john23@gmail.com'],
    ['john one two three at example dot net', 'john123@example.net'],
    ['um, john smith at example dot com', 'johnsmith@example.com'],
    ['info at my-company dot com', 'info@my-company.com'],
  ])('%j → %s', (text, value) => {
    expect(email(text)).toEqual({ kind: 'match', value });
  });

  it.each([
    ['no'],
    [''],
    ['at example dot com'],
    ['john at example'],
    ['I am at home'],
    ["I don't have one"],
  ])('%j → nomatch', (text) => {
    expect(email(text)).toEqual({ kind: 'nomatch' });
  });

  it.each([
    ['john at', 'I only heard the part before the at sign. Please say the whole address.'],
    [
      'john at at example dot com',
      'I heard "at" more than once; an email address has exactly one at sign.',
    ],
    [
      'john dot at example dot com',
      "The part before the at sign doesn't look right: it can't start or end with a dot, or have two dots in a row.",
    ],
    ['john at example dot 123', 'The part after the at sign should look like example dot com.'],
    ['john at example dot com dot', 'The part after the at sign should look like example dot com.'],
  ])('%j → invalid', (text, reason) => {
    expect(email(text)).toEqual({ kind: 'invalid', reason });
  });
});
