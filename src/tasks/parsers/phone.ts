import type { CountryCode } from 'libphonenumber-js';
import { readSpokenDigits } from './digits.js';
import { phoneLib } from './phone-lib.js';
import { approximately, invalid, match, nomatch, type ParseResult } from './result.js';
import { selfCorrected } from './speech.js';

/** Where a phone number said without a country code is assumed to be. */
export interface PhoneOptions {
  /** ISO 3166 region for national numbers ("US", "GB"); defaults to "US". */
  defaultRegion?: CountryCode;
}

const LENGTH_REASONS: Readonly<Record<string, string>> = {
  TOO_SHORT: 'That number is too short. Please say the whole number, including the area code.',
  TOO_LONG: 'That number has too many digits. Please say it again.',
  INVALID_LENGTH: "That number doesn't have the right number of digits. Please say it again.",
  INVALID_COUNTRY: "I don't recognise that country code. Please say the number again.",
};

/**
 * Reads a phone number (spoken digits "four one five five five five one two three four",
 * "plus four four …", "one eight hundred …", or written "(415) 555-1234", "+44 20 7946 0958")
 * and returns it in E.164 ("+14155551234") using libphonenumber-js. National numbers are read
 * in `defaultRegion` (US by default). A number that is not a possible phone number → invalid
 * with a reason; an utterance that is not digits at all, or a number with an extension (E.164
 * has no place for it) → nomatch. "Area code 212, …" and self-corrections ("…, sorry, …") are
 * understood. A number read with a word a recogniser may have misheard ("oh", "for") is an
 * approximate match, so the task reads it back.
 */
export function phone(text: string, options: PhoneOptions = {}): ParseResult<string> {
  return (
    selfCorrected(text, (t) => phoneOnce(t, options), { bareNo: false }) ?? phoneOnce(text, options)
  );
}

function phoneOnce(text: string, options: PhoneOptions): ParseResult<string> {
  const region = options.defaultRegion ?? 'US';
  // "area code 212, 555 0147": the words name the parts; an extension has no E.164 form.
  if (/\b(?:extension|ext)\b/iu.test(text)) return nomatch();
  const read = readSpokenDigits(text.replace(/\b(?:the )?area code(?: is)?\b/giu, ' '), {
    allowPlus: true,
  });
  if (read === undefined || /[*#]/.test(read.value)) return nomatch();
  const raw = read.value;
  const digitCount = raw.replace(/\D/g, '').length;
  if (digitCount < 3) return nomatch();
  const lengthProblem = phoneLib().validatePhoneNumberLength(raw, region);
  if (lengthProblem !== undefined) {
    return invalid(LENGTH_REASONS[lengthProblem] ?? "That isn't a valid phone number.");
  }
  const parsed = phoneLib().parsePhoneNumberFromString(raw, region);
  if (parsed === undefined || !parsed.isValid()) {
    return invalid("That isn't a valid phone number. Please say it again.");
  }
  // A number with a word that may be misheard ("oh" for a "no", "for" for a four) is read
  // back before it is taken.
  return read.approximate ? approximately(parsed.number) : match(parsed.number);
}
