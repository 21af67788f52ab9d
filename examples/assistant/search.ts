/**
 * The researcher's document tools: a keyword search and a reader over a local folder of
 * markdown documents. The folder is read once, when the tools are created (only `.md`
 * files directly in it, no links), so a search never waits on the disk mid-call.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { llm } from '@livekit/agents';
import { z } from 'zod';

const STOP = new Set(
  'a an and are can does for from how i in is it of on or say says the to what when where which who with about our your do'.split(
    ' ',
  ),
);

/** The search words of a query: lower case, at least 3 letters, no filler words. */
export function searchTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return [...new Set(words.filter((w) => w.length >= 3 && !STOP.has(w)))];
}

/** Reads the `.md` files directly inside `root` (regular files only), keyed "/<name>". */
export function loadDocs(root: string): Map<string, string> {
  const docs = new Map<string, string>();
  for (const name of readdirSync(root).sort()) {
    if (!name.endsWith('.md')) continue;
    const path = join(root, name);
    if (!lstatSync(path).isFile()) continue;
    docs.set(`/${name}`, readFileSync(path, 'utf8'));
  }
  return docs;
}

interface Hit {
  path: string;
  score: number;
  lines: string[];
}

/** Options for {@link createDocsTools}. */
export interface DocsToolsOptions {
  /** The folder of `.md` documents. */
  root: string;
  /** Most documents one search returns (default 3). */
  maxResults?: number;
}

/** `search_docs` and `read_doc` over the documents in `root` (object form, for a sub-agent). */
export function createDocsTools(options: DocsToolsOptions) {
  const docs = loadDocs(options.root);
  const maxResults = options.maxResults ?? 3;
  return {
    search_docs: llm.tool({
      description:
        'Search the company documents (policies, shipping, warranty, opening hours) by keywords. ' +
        'Returns the best matching documents with their most relevant lines.',
      parameters: z.object({
        query: z.string().describe('A few keywords, e.g. "refund opened items"'),
      }),
      execute: async ({ query }) => {
        const terms = searchTerms(query);
        if (terms.length === 0) {
          throw new llm.ToolError(
            'invalid_argument: give a few keywords, e.g. "refund opened items"',
          );
        }
        const hits: Hit[] = [];
        for (const [path, text] of docs) {
          let score = 0;
          const scored = text.split('\n').map((line) => {
            const lower = line.toLowerCase();
            const n = terms.filter((t) => lower.includes(t)).length;
            score += n;
            return { line: line.trim(), n };
          });
          if (score === 0) continue;
          const best = scored
            .filter((s) => s.n > 0 && s.line !== '')
            .sort((a, b) => b.n - a.n)
            .slice(0, 3)
            .map((s) => s.line);
          hits.push({ path, score, lines: best });
        }
        if (hits.length === 0) return `(no document mentions ${terms.join(', ')})`;
        return hits
          .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path))
          .slice(0, maxResults)
          .map((h) => `${h.path}\n${h.lines.map((l) => `  ${l}`).join('\n')}`)
          .join('\n\n');
      },
    }),
    read_doc: llm.tool({
      description:
        'Read one document in full, by the path search_docs showed (e.g. "/refunds.md").',
      parameters: z.object({ path: z.string().describe('Document path, e.g. "/refunds.md"') }),
      execute: async ({ path }) => {
        const text = docs.get(path.startsWith('/') ? path : `/${path}`);
        if (text === undefined) {
          throw new llm.ToolError(
            `not_found: ${path} is not a document; use one of ${[...docs.keys()].join(', ')}`,
          );
        }
        return text;
      },
    }),
  };
}
