import { patchEmail } from './correct.js';
import { inSpelling, readSpelledLetter } from './letters.js';
import { spelledWord } from './name.js';
import { chunkCardinals, digitValue, isNumberWord } from './numerals.js';
import { invalid, match, nomatch, type ParseResult } from './result.js';
import { lastCorrection } from './speech.js';
import { removeFillers, splitTokens, stripLeadIns } from './words.js';

/** Mail providers a caller often names without ".com" ("john at gmail"). */
const BARE_PROVIDERS: ReadonlyMap<string, string> = new Map([
  ['gmail', 'gmail.com'],
  ['googlemail', 'googlemail.com'],
  ['hotmail', 'hotmail.com'],
  ['outlook', 'outlook.com'],
  ['yahoo', 'yahoo.com'],
  ['icloud', 'icloud.com'],
  ['aol', 'aol.com'],
  ['protonmail', 'protonmail.com'],
]);

const SPOKEN_SYMBOLS: ReadonlyMap<string, string> = new Map([
  ['at', '@'],
  ['dot', '.'],
  ['period', '.'],
  ['point', '.'],
  ['underscore', '_'],
  ['dash', '-'],
  ['hyphen', '-'],
  ['minus', '-'],
  ['plus', '+'],
]);

const TWO_WORD_SYMBOLS: ReadonlyMap<string, string> = new Map([
  ['at sign', '@'],
  ['at symbol', '@'],
  ['full stop', '.'],
  ['under score', '_'],
  ['plus sign', '+'],
]);

/** Words about case or spelling that carry no characters ("capital J", "lower case"). */
const IGNORED = new Set([
  'capital',
  'uppercase',
  'upper',
  'lowercase',
  'lower',
  'case',
  'small',
  'letter',
  'the',
]);

const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Drops "email is", "e-mail address is" that the possessive lead-in rule leaves behind. */
function stripEmailLeadIn(tokens: string[]): string[] {
  let i = 0;
  if (tokens[i] === 'email' || tokens[i] === 'e-mail') i++;
  if (i > 0 && tokens[i] === 'address') i++;
  if (i > 0 && tokens[i] === 'is') i++;
  return i > 0 && i < tokens.length ? tokens.slice(i) : tokens;
}

/** Turns spoken or written tokens into the characters of an address, in order. */
function assemble(tokens: readonly string[]): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const two = `${t} ${tokens[i + 1] ?? ''}`;
    if (TWO_WORD_SYMBOLS.has(two)) {
      out += TWO_WORD_SYMBOLS.get(two);
      i++;
      continue;
    }
    const symbol = SPOKEN_SYMBOLS.get(t);
    if (symbol !== undefined) {
      out += symbol;
      continue;
    }
    if (IGNORED.has(t)) continue;
    const next = tokens[i + 1] ?? '';
    const digitNext = digitValue(next) !== undefined && next !== 'o' && next !== 'oh';
    if ((t === 'double' || t === 'triple') && digitNext) {
      out += String(digitValue(next)).repeat(t === 'double' ? 2 : 3);
      i++;
      continue;
    }
    const spelled = readSpelledLetter(tokens, i, inSpelling(tokens, i));
    if (spelled !== undefined) {
      out += spelled.letters;
      i += spelled.used - 1;
      continue;
    }
    if (isNumberWord(t) && !/^\d+$/.test(t)) {
      let j = i;
      while (j < tokens.length && isNumberWord(tokens[j]!) && !/^\d+$/.test(tokens[j]!)) j++;
      const run = chunkCardinals(tokens.slice(i, j));
      if (run !== undefined) {
        out += run;
        i = j - 1;
        continue;
      }
    }
    out += t;
  }
  return out;
}

/** Checks the shape of an assembled address, completing "gmail" to "gmail.com". */
function validate(address: string): ParseResult<string> {
  const parts = address.split('@');
  if (parts.length === 1) return nomatch();
  if (parts.length > 2) {
    return invalid('I heard "at" more than once; an email address has exactly one at sign.');
  }
  const [local, rawDomain] = parts as [string, string];
  if (local.length === 0) return nomatch();
  if (rawDomain.length === 0) {
    return invalid('I only heard the part before the at sign. Please say the whole address.');
  }
  let domain = rawDomain;
  if (!domain.includes('.')) {
    const known = BARE_PROVIDERS.get(domain);
    if (known === undefined) return nomatch();
    domain = known;
  }
  if (!LOCAL.test(local)) {
    return invalid(
      "The part before the at sign doesn't look right: it can't start or end with a dot, or have two dots in a row.",
    );
  }
  const labels = domain.split('.');
  const tld = labels[labels.length - 1]!;
  if (!labels.every((l) => LABEL.test(l)) || !/^[a-z]{2,}$/.test(tld)) {
    return invalid('The part after the at sign should look like example dot com.');
  }
  if (local.length > 64 || domain.length > 253) return invalid('That email address is too long.');
  return match(`${local}@${domain}`);
}

/**
 * Reads an email address, written ("John.Smith@Example.com") or spoken: "john dot smith at
 * example dot com", spelled letters ("j o h n at gmail dot com", "s as in sam", "double t"),
 * "underscore", "dash"/"hyphen", "at sign", digits as words. Words run together ("john smith at
 * …" → "johnsmith@…"); "gmail", "hotmail", "yahoo", "outlook", "icloud", "aol" get ".com" when
 * said alone. Returns the address lower-cased. No "at" at all, or a domain without a dot →
 * nomatch; a malformed address → invalid with what is wrong.
 */
export function email(text: string): ParseResult<string> {
  const correction = lastCorrection(text);
  if (correction !== undefined) {
    if (correction.tail === '') return correction.head === '' ? nomatch() : emailOnce(text);
    // "paul at gmail dot com, no sorry, at yahoo dot com": the domain alone is corrected.
    if (/^\s*(?:at|@)\b/iu.test(correction.tail)) {
      const head = emailOnce(correction.head);
      if (head.kind !== 'match') return nomatch();
      const local = head.value.slice(0, head.value.indexOf('@'));
      const fixed = emailOnce(`${local} ${correction.tail}`);
      return fixed.kind === 'match' ? fixed : nomatch();
    }
    const fixed = emailOnce(correction.tail);
    return fixed.kind === 'nomatch' ? nomatch() : fixed;
  }
  // "jane dot doe at example dot com, that's D O E": a spelling of one part of it.
  const spelled = SPELLED_AFTER.exec(text);
  if (spelled) {
    const word = spelledWord(spelled[2]!);
    if (word !== undefined) {
      const head = emailOnce(spelled[1]!);
      if (head.kind !== 'match') return head;
      const patched = patchEmail(head.value, word);
      return patched === undefined ? nomatch() : validate(patched);
    }
  }
  // "anna dot b at gmail dot com, B as in bravo": what follows a complete address after a
  // comma clarifies it; it is never more of the address.
  const comma = text.lastIndexOf(',');
  if (comma > 0 && !/\b(?:at|dot)\b|@|\./iu.test(text.slice(comma + 1))) {
    const head = emailOnce(text.slice(0, comma));
    if (head.kind === 'match') {
      const word = spelledWord(text.slice(comma + 1));
      const patched = word === undefined ? undefined : patchEmail(head.value, word);
      return patched === undefined ? nomatch() : validate(patched);
    }
  }
  return emailOnce(text);
}

/** An address followed by the spelling of one of its parts. */
const SPELLED_AFTER = /^(.*\S)[\s,;.]+(?:that's|that is|spelled|spelt|it's)\b[\s,:]*(.+)$/iu;

/**
 * Words that describe an address rather than spell it ("my first name at gmail", "the usual
 * one at work"): an address made of them would be invented.
 */
const DESCRIBING = new Set([
  'my',
  'your',
  'his',
  'her',
  'our',
  'their',
  'the',
  'first',
  'last',
  'name',
  'surname',
  'same',
  'usual',
  'email',
  'address',
  'is',
  "it's",
  'what',
  'whatever',
]);

function emailOnce(text: string): ParseResult<string> {
  const tokens = stripEmailLeadIn(stripLeadIns(removeFillers(splitTokens(text))));
  if (tokens.length === 0) return nomatch();
  if (tokens.some((t) => DESCRIBING.has(t))) return nomatch();
  // "john at gmail dot com or john at yahoo dot com": two addresses, neither is the answer.
  const or = tokens.indexOf('or');
  if (or > 0 && tokens.slice(or + 1).some((t) => t === 'at' || t.includes('@'))) return nomatch();
  return validate(assemble(tokens));
}
