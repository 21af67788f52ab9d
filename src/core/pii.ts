/**
 * Masking of personal data before anything taskline writes reaches a log: card numbers
 * (13-19 digits passing the Luhn check, spaced or dashed) and secrets registered while a
 * call runs (a PIN collected with `mask: true`).
 */

/** Most secrets remembered at once; the oldest is forgotten first (bounded by design). */
export const MAX_SECRETS = 1_000;

/** Secrets shorter than this are not registered: masking them would blank ordinary text. */
export const MIN_SECRET_LENGTH = 3;

const secrets = new Map<string, RegExp>();

/**
 * Registers a value that must never appear in clear in taskline's logs (a PIN, an account
 * number). Digits match even when written with spaces or dashes between them ("1 2 3 4").
 */
export function registerSecret(secret: string): void {
  const value = secret.trim();
  if (value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  if (secrets.size >= MAX_SECRETS) {
    const oldest = secrets.keys().next().value;
    if (oldest !== undefined) secrets.delete(oldest);
  }
  if (/^[0-9]+$/.test(value)) {
    // Digits match as written ("8642", "8 6 4 2") and as a transcript spells them out
    // ("eight six four two", "oh" for zero).
    const digits = [...value].map((d) => `(?:${d}|${DIGIT_NAMES[Number(d)]})`);
    const pattern = digits.join('(?:[\\s,.-]{0,3})');
    secrets.set(value, new RegExp(`(?<![0-9])${pattern}(?![0-9])`, 'gi'));
    return;
  }
  const pattern = [...value].map(escapeRegExp).join('[\\s-]?');
  secrets.set(value, new RegExp(pattern, 'g'));
}

const DIGIT_NAMES = [
  'zero|oh',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
];

/** Forgets every registered secret (tests, or a process that recycles between calls). */
export function clearSecrets(): void {
  secrets.clear();
}

/** The masked form of a secret as people see it: one "*" per character, at least four. */
export function maskValue(value: string): string {
  return '*'.repeat(Math.max(4, [...value].length));
}

const CARD_CANDIDATE = /(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])/g;

/** True when a digit string passes the Luhn checksum used by payment cards. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * Masks personal data in `text`: card numbers keep only their last four digits
 * ("**** **** **** 1111"), registered secrets become "*" characters. Use it on every
 * string that may reach a log.
 */
export function maskPII(text: string): string {
  return maskSecrets(maskCards(text));
}

/** Card numbers in `text`, masked but for their last four digits. */
function maskCards(text: string): string {
  return text.replace(CARD_CANDIDATE, (candidate) => {
    const digits = candidate.replace(/[^0-9]/g, '');
    if (digits.length < 13 || digits.length > 19 || !luhnValid(digits)) return candidate;
    let keep = 4;
    return [...candidate]
      .reverse()
      .map((c) => {
        if (!/[0-9]/.test(c)) return c;
        if (keep > 0) {
          keep -= 1;
          return c;
        }
        return '*';
      })
      .reverse()
      .join('');
  });
}

/** Registered secrets in `text`, as "*" characters. */
function maskSecrets(text: string): string {
  let out = text;
  for (const pattern of secrets.values()) {
    out = out.replace(pattern, (found) => found.replace(/[^\s,.-]/g, '*'));
  }
  return out;
}

let secretCaptures = 0;

/**
 * Declares that some call is collecting a secret (a PIN) until the returned function is
 * called: the caller's words are logged masked meanwhile, even before the value is known
 * and registered.
 */
export function beginSecretCapture(): () => void {
  secretCaptures += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    secretCaptures -= 1;
  };
}

/** True while any call in this process collects a secret. */
export function secretCaptureActive(): boolean {
  return secretCaptures > 0;
}

/** Log fields (upstream marks them `lk.pii.*`) that carry what the caller said or typed. */
const CALLER_INPUT_KEY = /^lk\.pii\./u;

/**
 * Fields pino writes itself on every line: they describe the line, never what a caller said,
 * and a 13-digit millisecond `time` can pass the Luhn check like a card number does.
 */
const LOGGER_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'v']);

/**
 * A JSON number of 16 digits or more: past 2^53, parsing would round it (a card logged as a
 * number would then no longer read as a card), so it is read as the string it was written as.
 */
const LONG_NUMBER = /"(?:[^"\\]|\\.)*"|([:,[]\s*)(-?\d{16,})(?=\s*[,}\]])/g;

/** `line` with its long JSON numbers quoted; strings (which may hold such text) left as they are. */
function quoteLongNumbers(line: string): string {
  return line.replace(LONG_NUMBER, (match, before?: string, digits?: string) =>
    digits === undefined ? match : `${before}"${digits}"`,
  );
}

/**
 * Below this, a 13-digit number-typed value is read as a millisecond time (until the year
 * 2065), never a card: one time in ten passes the Luhn check. 13-digit cards start with 4
 * (4e12 and up), so they are still masked, as are 14 digits and more. Registered secrets are
 * masked in numbers of any length.
 */
const MS_TIME_BELOW = 3e12;

/**
 * Masks one serialized log line (JSON, as upstream's logger writes it) value by value: card
 * numbers and registered secrets in any string or number a record carries (not in the
 * logger's own `time`, `pid` and `level`, so the line stays valid JSON), and — while a secret
 * is being collected — every `lk.pii.*` field, which may hold the secret before it is
 * registered. A line with nothing to mask is returned as written; one that is not JSON is
 * masked as text.
 */
export function maskLogLine(line: string): string {
  const capturing = secretCaptures > 0 && line.includes('"lk.pii.');
  if (!capturing && maskPII(line) === line) return line;
  const ending = line.endsWith('\n') ? '\n' : '';
  let record: unknown;
  try {
    record = JSON.parse(quoteLongNumbers(line));
  } catch {
    return maskPII(line);
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return maskPII(line);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (LOGGER_FIELDS.has(key)) out[key] = value;
    else if (capturing && CALLER_INPUT_KEY.test(key)) out[key] = '****';
    else out[maskPII(key)] = maskFields(value);
  }
  return `${JSON.stringify(out)}${ending}`;
}

/**
 * Applies {@link maskPII} to every string and whole number inside a log record (objects and
 * arrays, depth-bounded); a number that needs masking becomes its masked string.
 */
export function maskFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskPII(value);
  if (typeof value === 'number' && Number.isInteger(value)) {
    // A card number or a PIN logged as a number is masked like its written form.
    const written = String(value);
    const digits = written.replace('-', '').length;
    const time = digits === 13 && Math.abs(value) < MS_TIME_BELOW;
    const masked = digits >= 13 && !time ? maskPII(written) : maskSecrets(written);
    return masked === written ? value : masked;
  }
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any record taskline writes: masked as one string rather than left in clear.
  if (depth > 5) return maskPII(JSON.stringify(value));
  if (Array.isArray(value)) return value.map((v) => maskFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[maskPII(k)] = maskFields(v, depth + 1);
  return out;
}

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
