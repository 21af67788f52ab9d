// Extracts the TypeScript samples of README.md, for scripts/check-readme.mjs (type-checks
// them against the built package), scripts/check-package.mjs and the README tests.
//
// The convention, written in README.md ("About the samples"): every ```ts block compiles as
// is, unless its first line is a comment starting with `// fragment`. A block whose first
// line is `// name.ts` is that file, so another sample can import it (`./name.js`); the
// others are numbered files.

/**
 * @typedef {{ file: string; code: string; line: number; fragment: boolean }} ReadmeSample
 */

/**
 * The ```ts / ```typescript blocks of a markdown text, in order.
 * @param {string} markdown
 * @returns {ReadmeSample[]}
 */
export function readmeSamples(markdown) {
  const samples = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const body = lines.slice(start, end);
    const first = body[0]?.trim() ?? '';
    const named = /^\/\/\s*([\w.-]+\.ts)\s*$/.exec(first);
    samples.push({
      file: named ? named[1] : `readme-${String(samples.length + 1).padStart(2, '0')}.ts`,
      code: `${body.join('\n')}\n`,
      line: start + 1,
      fragment: /^\/\/\s*fragment\b/i.test(first),
    });
    i = end;
  }
  return samples;
}
