/**
 * One skill: a folder with a `SKILL.md` whose YAML front matter names and describes it
 * (the Agent Skills format), and whose body is the instructions the model loads on demand.
 * Parsing is strict: a skill that does not follow the format is refused at load with an error
 * naming the file and what to fix, never half-loaded.
 */
import { z } from 'zod/v4';
import { TasklineError } from '../../../core/errors.js';

/** Longest skill name (the Agent Skills limit). */
export const MAX_SKILL_NAME = 64;
/** Longest skill description (the Agent Skills limit). */
export const MAX_SKILL_DESCRIPTION = 1024;
/** Largest SKILL.md read (characters). */
export const MAX_SKILL_FILE_CHARS = 100_000;

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** The front matter a SKILL.md must carry. */
export const SkillFrontMatter = z
  .object({
    name: z
      .string()
      .min(1)
      .max(MAX_SKILL_NAME)
      .regex(NAME, 'use lowercase letters, digits and single hyphens (e.g. "refund-policy")'),
    description: z.string().trim().min(1).max(MAX_SKILL_DESCRIPTION),
    license: z.string().max(500).optional(),
    compatibility: z.string().max(500).optional(),
    'allowed-tools': z.string().max(1000).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/** A loaded skill. */
export interface Skill {
  name: string;
  description: string;
  /** Virtual path of the skill's folder, e.g. "/skills/refund-policy". */
  dir: string;
  /** Virtual path of its SKILL.md. */
  path: string;
  /** The instructions (the SKILL.md body, front matter removed). */
  instructions: string;
  /** Other front-matter fields (license, compatibility, allowed-tools, metadata). */
  extra: Omit<z.infer<typeof SkillFrontMatter>, 'name' | 'description'>;
}

type YamlModule = typeof import('yaml');
let yaml: Promise<YamlModule> | undefined;

/** The YAML parser, loaded on first use (importing taskline does not load it). */
function loadYaml(): Promise<YamlModule> {
  yaml ??= import('yaml');
  return yaml;
}

function bad(path: string, problem: string): TasklineError {
  return new TasklineError('invalid_argument', `Skill ${path}: ${problem}`, { path });
}

/**
 * Parses a SKILL.md. `dir` is the folder it sits in; the skill's name must equal the folder's
 * name. Throws `invalid_argument` naming the file and the problem.
 */
export async function parseSkill(dir: string, text: string): Promise<Skill> {
  const path = `${dir}/SKILL.md`;
  if (text.length > MAX_SKILL_FILE_CHARS) {
    throw bad(
      path,
      `is ${text.length} characters; keep SKILL.md under ${MAX_SKILL_FILE_CHARS} and move details to reference files`,
    );
  }
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') {
    throw bad(
      path,
      'must start with YAML front matter: a line "---", then name: and description:, then "---"',
    );
  }
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) throw bad(path, 'the front matter has no closing "---" line');
  const { parse } = await loadYaml();
  let data: unknown;
  try {
    data = parse(lines.slice(1, end).join('\n'));
  } catch (err) {
    throw bad(
      path,
      `the front matter is not valid YAML (${(err as Error).message.split('\n')[0]})`,
    );
  }
  const checked = SkillFrontMatter.safeParse(data ?? {});
  if (!checked.success) {
    const problems = checked.error.issues
      .map((i) => `${i.path.length ? i.path.join('.') : 'front matter'}: ${i.message}`)
      .join('; ');
    throw bad(path, problems);
  }
  const folder = dir.slice(dir.lastIndexOf('/') + 1);
  if (checked.data.name !== folder) {
    throw bad(path, `its name "${checked.data.name}" must equal its folder's name "${folder}"`);
  }
  const { name, description, ...extra } = checked.data;
  const instructions = lines
    .slice(end + 1)
    .join('\n')
    .trim();
  if (instructions === '') throw bad(path, 'has no instructions after the front matter');
  return { name, description, dir, path, instructions, extra };
}
