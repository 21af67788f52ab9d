/**
 * Announce templates: "Thanks {{name.first}}, your score was {{score}}." A placeholder names
 * a step (and optionally a field of its answer); it is filled with the answer given so far,
 * in words (yes / no for a boolean, parts joined for an object), or nothing when there is
 * none. Placeholders are checked when the document is loaded.
 */
import type { AnswersSoFar } from '../types.js';

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
const BRACES = /\{\{|\}\}/;

/** One placeholder: the step it reads and the field path inside the answer. */
export interface Placeholder {
  step: string;
  field: string[];
}

/** The placeholders of a template, or the first malformed part. */
export function placeholders(template: string): { ok: Placeholder[] } | { error: string } {
  const found: Placeholder[] = [];
  const rest = template.replace(PLACEHOLDER, (_all, step: string, field: string) => {
    found.push({ step, field: field ? field.slice(1).split('.') : [] });
    return '';
  });
  if (BRACES.test(rest)) {
    return {
      error: 'a placeholder is {{step}} or {{step.field}} (a step id, then field names)',
    };
  }
  return { ok: found };
}

/** Fills a template with the answers so far. */
export function render(template: string, answers: AnswersSoFar): string {
  const text = template.replace(PLACEHOLDER, (_all, step: string, field: string) => {
    let value: unknown = answers[step];
    for (const key of field ? field.slice(1).split('.') : []) {
      value =
        typeof value === 'object' && value !== null && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined;
    }
    return words(value);
  });
  return text.replace(/\s{2,}/g, ' ').trim();
}

function words(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map(words).filter(Boolean).join(', ');
  if (typeof value === 'object') {
    return Object.values(value as Record<string, unknown>)
      .map(words)
      .filter(Boolean)
      .join(', ');
  }
  return '';
}

const templates = new WeakMap<object, string>();

/** Marks an announce factory as made from a template, so `toData` writes the template. */
export function rememberTemplate(factory: object, template: string): void {
  templates.set(factory, template);
}

/** The template an announce factory was made from, if any. */
export function templateOf(factory: unknown): string | undefined {
  return typeof factory === 'function' ? templates.get(factory) : undefined;
}
