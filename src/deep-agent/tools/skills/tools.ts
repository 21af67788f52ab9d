/**
 * Skills for an agent: discovery from backend folders, the prompt section that lists them
 * (name and description only: progressive disclosure), and the tools that open them —
 * `use_skill` (the instructions), `read_reference` (a file inside the skill) and
 * `run_script` (a script of the skill, in the sandbox).
 */
import { llm } from '@livekit/agents';
import { z } from 'zod/v4';
import { TasklineError } from '../../../core/errors.js';
import type { ExecutionSandbox } from '../execute/sandbox.js';
import { formatRun } from '../execute/tools.js';
import { type FileBackend, FileError } from '../files/backend.js';
import { formatReadPage } from '../files/format.js';
import { fitLargeResult } from '../files/large-result.js';
import { isWithin, normalizePath } from '../files/paths.js';
import { DEFAULT_LARGE_RESULT_CHARS, toToolError } from '../files/tools.js';
import { parseSkill, type Skill } from './skill.js';

/** Most skills one agent loads. */
export const MAX_SKILLS = 100;
/** Most arguments a `run_script` call passes. */
const MAX_SCRIPT_ARGS = 50;

/**
 * Loads every skill in `paths` (each a folder whose sub-folders hold a SKILL.md). A later
 * path's skill replaces an earlier one of the same name (user skills over built-in ones).
 * An invalid skill throws `invalid_argument` naming it; a missing folder is skipped.
 */
export async function loadSkills(backend: FileBackend, paths: readonly string[]): Promise<Skill[]> {
  const byName = new Map<string, Skill>();
  for (const raw of paths) {
    const base = normalizePath(raw);
    let files: string[];
    try {
      files = (await backend.glob('*/SKILL.md', base)).map((f) => f.path);
    } catch (err) {
      if (err instanceof FileError && err.code === 'not_found') continue;
      throw err;
    }
    for (const path of files) {
      const dir = path.slice(0, -'/SKILL.md'.length);
      const skill = await parseSkill(dir, await backend.read(path));
      byName.delete(skill.name);
      byName.set(skill.name, skill);
    }
  }
  if (byName.size > MAX_SKILLS) {
    throw new TasklineError(
      'limit_exceeded',
      `${byName.size} skills were found; at most ${MAX_SKILLS} can be offered. Split them across agents.`,
    );
  }
  return [...byName.values()];
}

/** The prompt section that lists skills by name and description. */
export function skillsPrompt(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  return [
    '## Skills',
    'Skills are instructions for specific jobs. When a request matches a skill below, call',
    'use_skill with its name first and follow what it says; read_reference opens files it',
    'mentions and run_script runs its scripts. Do not guess what a skill says.',
    ...skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ')}`),
  ].join('\n');
}

/** Options for {@link createSkillTools}. */
export interface SkillToolsOptions {
  backend: FileBackend;
  skills: readonly Skill[];
  /** Runs skill scripts; without it `run_script` is not offered. */
  sandbox?: ExecutionSandbox;
  /** Results longer than this are saved and previewed (default 16,000 characters). */
  largeResultChars?: number;
}

async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toToolError(err);
  }
}

/** `use_skill`, `read_reference` and (with a sandbox) `run_script`. */
export function createSkillTools(options: SkillToolsOptions): SkillTools {
  const { backend, skills, sandbox } = options;
  const largeChars = options.largeResultChars ?? DEFAULT_LARGE_RESULT_CHARS;
  const names = skills.map((s) => s.name);
  const find = (name: string): Skill => {
    const skill = skills.find((s) => s.name === name);
    if (!skill) {
      throw new FileError(
        'not_found',
        `there is no skill "${name}"; the skills are: ${names.join(', ') || '(none)'}`,
      );
    }
    return skill;
  };
  /** A path inside a skill's folder, given relative to it (or absolute inside it). */
  const inside = (skill: Skill, path: string): string => {
    const p = normalizePath(path.startsWith('/') ? path : `${skill.dir}/${path}`);
    if (!isWithin(p, skill.dir) || p === skill.dir) {
      throw new FileError(
        'outside_root',
        `${path} is not inside the skill "${skill.name}"; give a path relative to its folder`,
      );
    }
    return p;
  };
  const listFiles = async (skill: Skill): Promise<string[]> =>
    (await backend.glob('**/*', skill.dir))
      .map((f) => f.path.slice(skill.dir.length + 1))
      .filter((p) => p !== 'SKILL.md');

  const tools: SkillTools = {
    use_skill: llm.tool({
      description:
        "Load a skill's instructions (see the Skills list). Call it before using a skill.",
      parameters: z.object({ name: z.string().describe('The skill name, e.g. "refund-policy"') }),
      execute: ({ name }, { toolCallId }) =>
        guarded(async () => {
          const skill = find(name);
          const files = await listFiles(skill);
          const text = [
            `# Skill: ${skill.name}`,
            skill.instructions,
            files.length > 0
              ? `\nFiles of this skill (open with read_reference, run scripts with run_script): ${files.join(', ')}`
              : '',
          ].join('\n');
          return fitLargeResult(backend, text, toolCallId, largeChars);
        }),
    }),
    read_reference: llm.tool({
      description: 'Read a file that belongs to a skill, by its path relative to the skill folder.',
      parameters: z.object({
        skill: z.string().describe('The skill name'),
        path: z.string().describe('Path inside the skill folder, e.g. "reference/rates.md"'),
        offset: z.number().int().min(0).nullish().describe('First line, 0-based (default 0)'),
        limit: z.number().int().min(1).nullish().describe('Lines to read (default 200)'),
      }),
      execute: ({ skill, path, offset, limit }) =>
        guarded(async () => {
          const s = find(skill);
          const p = inside(s, path);
          return formatReadPage(p, await backend.read(p), {
            offset: offset ?? 0,
            limit: limit ?? 200,
            maxLineChars: 2000,
            maxChars: largeChars,
          });
        }),
    }),
  };
  if (sandbox) {
    tools.run_script = llm.tool({
      description:
        'Run a script that belongs to a skill (".py" in Python, others with bash), in the ' +
        'sandbox, with arguments passed as they are. Returns its output and exit code.',
      parameters: z.object({
        skill: z.string().describe('The skill name'),
        script: z
          .string()
          .describe('Path of the script inside the skill folder, e.g. "scripts/quote.py"'),
        args: z
          .array(z.string())
          .max(MAX_SCRIPT_ARGS)
          .nullish()
          .describe('Arguments for the script'),
      }),
      execute: ({ skill, script, args }, { toolCallId, abortSignal }) =>
        guarded(async () => {
          const s = find(skill);
          const p = inside(s, script);
          const info = await backend.stat(p);
          if (!info || info.isDir)
            throw new FileError('not_found', `${p} is not a script of ${s.name}`);
          try {
            const result = await sandbox.runFile(p, args ?? [], abortSignal);
            return fitLargeResult(backend, formatRun(result), toolCallId, largeChars);
          } catch (err) {
            if (err instanceof TasklineError)
              throw new llm.ToolError(`${err.code}: ${err.message}`);
            throw err;
          }
        }),
    });
  }
  return tools;
}

/** The skill tools, keyed by name. */
export interface SkillTools {
  use_skill: llm.AnonFunctionTool<{ name: string }, unknown, string>;
  read_reference: llm.AnonFunctionTool<
    { skill: string; path: string; offset?: number | null; limit?: number | null },
    unknown,
    string
  >;
  run_script?: llm.AnonFunctionTool<
    { skill: string; script: string; args?: string[] | null },
    unknown,
    string
  >;
}
