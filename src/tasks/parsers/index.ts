/**
 * Parsers — the deterministic readers behind the prebuilt capture tasks: answers as
 * speech-to-text writes them ("yes", "three", "4 1 5 5", "john at example dot com") are
 * understood without a model call, and read-back helpers spell values for confirmation. Use
 * them in a custom task's `parse`. Import it as `taskline/parsers`, or use the `parsers`
 * namespace of `taskline` (the names are generic — `date`, `number`, `email` — so they are
 * only exported here).
 *
 * @packageDocumentation
 */
export { type ChoiceOption, type ChoiceParseOptions, choice } from './choice.js';
export { afterRejection, patchDigitEnd, patchEmail, spelledTarget } from './correct.js';
export { type DateOptions, date } from './date.js';
export {
  type DigitsOptions,
  digits,
  readSpokenDigits,
  type SpokenDigitsOptions,
  type SpokenDigitsReading,
  spokenDigits,
} from './digits.js';
export { email } from './email.js';
export { type FreeTextOptions, freeText } from './free-text.js';
export { type LikertOptions, likert } from './likert.js';
export { name, type PersonName, spelledWord } from './name.js';
export { type NumberOptions, number } from './number.js';
export { type PhoneOptions, phone } from './phone.js';
export { refusal } from './refusal.js';
export {
  REPAIR_KINDS,
  type RepairKind,
  type RepairParseOptions,
  type RepairRequest,
  repair,
} from './repair.js';
export {
  alternatives,
  approximately,
  declined,
  invalid,
  isMatch,
  match,
  nomatch,
  type ParseResult,
} from './result.js';
export {
  groupDigits,
  type ReadBackKind,
  type ReadBackOptions,
  type ReadBackValues,
  readBack,
  spellLetters,
} from './spell.js';
export { type TimeOptions, time } from './time.js';
export { yesNo } from './yes-no.js';
