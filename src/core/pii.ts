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
  const pattern = [...value].map(escapeRegExp).join('[\\s-]?');
  const edge = /^[0-9]+$/.test(value) ? ['(?<![0-9])', '(?![0-9])'] : ['', ''];
  secrets.set(value, new RegExp(`${edge[0]}${pattern}${edge[1]}`, 'g'));
}

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
  let out = text.replace(CARD_CANDIDATE, (candidate) => {
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
  for (const pattern of secrets.values()) {
    out = out.replace(pattern, (found) => found.replace(/[^\s-]/g, '*'));
  }
  return out;
}

/** Applies {@link maskPII} to every string inside a log record (objects and arrays, depth-bounded). */
export function maskFields(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskPII(value);
  if (depth > 5 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => maskFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = maskFields(v, depth + 1);
  return out;
}

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
