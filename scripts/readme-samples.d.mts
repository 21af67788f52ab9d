/** One ```ts block of README.md (see readme-samples.mjs for the convention). */
export interface ReadmeSample {
  /** File name: `name.ts` from a first-line `// name.ts` comment, else `readme-NN.ts`. */
  file: string;
  code: string;
  /** 1-based line of the block's first code line in the markdown. */
  line: number;
  /** True when the first line is a `// fragment` comment: not compiled. */
  fragment: boolean;
}

/** The ```ts / ```typescript blocks of a markdown text, in order. */
export function readmeSamples(markdown: string): ReadmeSample[];
