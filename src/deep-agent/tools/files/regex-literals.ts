/**
 * Text a grep regex requires, read from re2js's own parse: when re2js compiles a pattern it
 * builds a prefilter (AND / OR of exact strings, case-folded literals left out) that it uses
 * itself to reject inputs before matching, so a string it lists is one every match contains.
 * The prefilter is an internal field, not re2js's typed API: it is read defensively, and any
 * shape this module does not recognize yields "nothing required" (always correct, only
 * slower). tests/tools/grep-regex.test.ts pins the groups for known patterns, so an upgrade
 * that moves the field shows up as a failing test, not as a silent slowdown.
 */
import type { RE2JS } from 're2js';

/** Groups of text: a matching line holds at least one piece of every group. */
export type RequiredText = string[][];

interface PrefilterNode {
  type: number;
  str: string;
  subs: PrefilterNode[];
}

interface PrefilterTypes {
  EXACT: number;
  AND: number;
  OR: number;
}

function isNode(value: unknown): value is PrefilterNode {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.type === 'number' && typeof v.str === 'string' && Array.isArray(v.subs);
}

/** The prefilter's type numbers, from its class (`Prefilter.Type`), if it has the known shape. */
function typesOf(node: PrefilterNode): PrefilterTypes | undefined {
  const types = (node.constructor as { Type?: Record<string, unknown> } | undefined)?.Type;
  if (!types) return undefined;
  const { EXACT, AND, OR } = types;
  if (typeof EXACT !== 'number' || typeof AND !== 'number' || typeof OR !== 'number') {
    return undefined;
  }
  return { EXACT, AND, OR };
}

/** The group whose shortest piece is longest (the most selective guess). */
function bestGroup(groups: RequiredText): string[] | undefined {
  let best: string[] | undefined;
  let bestLen = 0;
  for (const group of groups) {
    const len = Math.min(...group.map((piece) => piece.length));
    if (len > bestLen) {
      best = group;
      bestLen = len;
    }
  }
  return best;
}

function groupsOf(node: unknown, types: PrefilterTypes): RequiredText {
  if (!isNode(node)) return [];
  if (node.type === types.EXACT) return node.str === '' ? [] : [[node.str]];
  if (node.type === types.AND) return node.subs.flatMap((sub) => groupsOf(sub, types));
  if (node.type === types.OR) {
    // A match takes one branch: it holds a piece of that branch's best group.
    const pieces: string[] = [];
    for (const sub of node.subs) {
      const best = bestGroup(groupsOf(sub, types));
      if (!best) return []; // a branch without required text can match anywhere
      pieces.push(...best);
    }
    return pieces.length === 0 ? [] : [[...new Set(pieces)]];
  }
  return []; // NONE, or a kind this module does not know
}

/**
 * Text every match of `re` contains, as groups (each match holds a piece of every group);
 * `[]` when nothing is required or the prefilter cannot be read.
 */
export function requiredText(re: RE2JS): RequiredText {
  const compiled = (re as unknown as { re2?: () => unknown }).re2?.();
  const prefilter = (compiled as { prefilter?: unknown } | undefined)?.prefilter;
  if (!isNode(prefilter)) return [];
  const types = typesOf(prefilter);
  return types ? groupsOf(prefilter, types) : [];
}
