/**
 * One reading of a request URL's query string for both the WebSocket's `?access_token=` and the
 * request log, so what authenticates and what is masked can never disagree: names and values are
 * percent-decoded once, the same way (`acc%65ss_token` is `access_token`). The log masks every
 * parameter whose decoded name looks secret (`access_token[]`, `api_key`, `token`, …) and any
 * path segment, name or value that is a configured key, however it was spelled.
 */

/** One `name=value` of a query string, raw and decoded. */
export interface QueryPart {
  raw: string;
  rawName: string;
  name: string;
  value: string;
  hasValue: boolean;
}

/** Percent-decodes (and `+` → space) as form decoding does; undecodable text stays as sent. */
export function decodeComponent(text: string): string {
  const plus = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}

/** The query string of `url` split into parts (empty parts dropped). */
export function queryParts(url: string): QueryPart[] {
  const q = url.indexOf('?');
  if (q < 0) return [];
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const parts: QueryPart[] = [];
  for (const raw of query.split('&')) {
    if (raw === '') continue;
    const eq = raw.indexOf('=');
    const rawName = eq < 0 ? raw : raw.slice(0, eq);
    parts.push({
      raw,
      rawName,
      name: decodeComponent(rawName),
      value: eq < 0 ? '' : decodeComponent(raw.slice(eq + 1)),
      hasValue: eq >= 0,
    });
  }
  return parts;
}

/** The query parameter that carries a WebSocket's key. */
export const TOKEN_PARAM = 'access_token';

/**
 * The key a WebSocket upgrade carries as `?access_token=`: the value of the one parameter whose
 * decoded name is exactly `access_token`; `undefined` when there is none, `'ambiguous'` when there
 * are several (refused: which one would be checked is not obvious to the client).
 */
export function tokenFromUrl(url: string): string | 'ambiguous' | undefined {
  const values = queryParts(url)
    .filter((p) => p.name === TOKEN_PARAM)
    .map((p) => p.value);
  if (values.length > 1) return 'ambiguous';
  return values[0];
}

/**
 * Names whose values are masked in logs, matched on the decoded name with any `[…]` suffix and
 * separators removed: `access_token`, `access_token[]`, `api-key`, `apikey`, `token`, `secret`,
 * `password`, `authorization`, `signature`, `session`.
 */
const SECRET_NAME = /(token|key|secret|passw|auth|signature|session|credential)/i;

function secretName(name: string): boolean {
  return SECRET_NAME.test(name.replace(/\[[^\]]*\]/g, '').replace(/[^A-Za-z]/g, ''));
}

/**
 * The URL as it may appear in a log: the value of every secret-named parameter replaced by
 * `****`, and any path segment, parameter name or value that `isKey` recognises replaced too.
 */
export function maskSecretsInUrl(
  url: string,
  isKey: (text: string) => boolean = () => false,
): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const maskedPath = path
    .split('/')
    .map((segment) => (segment !== '' && isKey(decodeComponent(segment)) ? '****' : segment))
    .join('/');
  if (q < 0) return maskedPath;
  const parts = queryParts(url).map((p) => {
    if (isKey(p.name) || isKey(p.rawName)) return '****';
    if (!p.hasValue) return p.raw;
    if (secretName(p.name) || isKey(p.value)) return `${p.rawName}=****`;
    return p.raw;
  });
  return `${maskedPath}?${parts.join('&')}`;
}
