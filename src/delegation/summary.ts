/**
 * The spoken part of a result: a caller hears a sentence or two, never a markdown report.
 * The full text stays in `/tasks/<id>/result.md`.
 */

/** Default longest spoken summary, in characters. */
export const DEFAULT_SUMMARY_CHARS = 300;

/**
 * Text `plain` may change: markdown characters, whitespace other than single inner
 * spaces, a heading or list marker at the start (most sub-agent answers have none).
 */
const NEEDS_STRIPPING = /[`*_>|[]|[^\S ]| {2}|^ | $|^#|^[-+] |^\d+[.)] /;

/** Markdown and list noise stripped before speaking. */
function plain(text: string): string {
  if (!NEEDS_STRIPPING.test(text)) return text;
  return text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/gm, '')
    .replace(/[*_`>|]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The first sentences of `text` that fit in `maxChars` (at least one sentence, cut with
 * an ellipsis when even that is too long).
 */
export function summarize(text: string, maxChars: number = DEFAULT_SUMMARY_CHARS): string {
  const flat = plain(text);
  if (flat.length <= maxChars) return flat;
  const sentences = flat.match(/[^.!?]+[.!?]+(?:\s|$)|[^.!?]+$/g) ?? [flat];
  let out = '';
  for (const sentence of sentences) {
    const next = `${out}${sentence}`.trim();
    if (next.length > maxChars) break;
    out = `${next} `;
  }
  out = out.trim();
  if (out) return out;
  return `${flat.slice(0, Math.max(1, maxChars - 1)).trimEnd()}…`;
}
