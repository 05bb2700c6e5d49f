import { canonicalSkillName, reservedNameWords, skillNameProblem, suggestSkillName } from './names';
import { describeValue, isPlainObject, skillFileName, type ProblemList } from './problems';

/** The Agent Skills specification's frontmatter rules (REFERENCE.md section 1). */
export const specFields = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;
export const maxDescriptionLength = 1024;
export const maxCompatibilityLength = 500;

export interface SpecFrontmatter {
  name: string;
  description: string;
  license: string | null;
  compatibility: string | null;
  metadata: Record<string, string>;
  allowedTools: string | null;
}

/**
 * The source text of the front matter's scalars that YAML read as something other than a string, by path (`version`,
 * `metadata.version`): `1.0` for a value YAML made the number 1, so a fix can quote what the author wrote.
 */
export type ScalarSources = Record<string, string>;

/** Engine data authors sometimes put at the top level, and where it belongs instead. */
const engineHomes: Record<string, string> = {
  plan: 'metadata.plan (a quoted string)',
  category: 'metadata.category',
  tags: 'metadata.tags (comma-separated)',
  version: 'metadata.version (a quoted string)',
  enabled: 'metadata.enabled ("true" or "false")',
  effort: 'metadata.effort',
  parameters: 'skillflow.yaml',
  output: 'skillflow.yaml',
  checkpoints: 'skillflow.yaml',
  deadlines: 'skillflow.yaml',
  limits: 'skillflow.yaml',
  children: 'skillflow.yaml',
  tools: 'skillflow.yaml',
};

/** Checks frontmatter against the spec (as skills-ref reads it); returns it typed when it has no errors. */
export function checkSpecFrontmatter(
  data: unknown,
  folder: string,
  problems: ProblemList,
  sources: ScalarSources = {},
): SpecFrontmatter | null {
  const before = problems.problems.length;
  const error = (field: string, message: string, fix: string) => problems.error(skillFileName, field, message, fix);
  if (!isPlainObject(data)) {
    error(
      '-',
      `front matter is ${describeValue(data)}, not a map of fields`,
      'write "name: ..." and "description: ..." lines between the opening and closing --- lines.',
    );
    return null;
  }
  for (const key of Object.keys(data)) {
    if ((specFields as readonly string[]).includes(key)) continue;
    const home = engineHomes[key];
    const scalar = typeof data[key] === 'string' ? (data[key] as string) : sources[key];
    const moved = scalar === undefined ? '' : `: under "metadata:", write ${key}: ${JSON.stringify(scalar)}`;
    error(
      key,
      `"${key}" is not a frontmatter field of the Agent Skills spec, so strict runtimes reject the skill`,
      home
        ? `move it to ${home}${moved}.`
        : `remove it, or keep it as a string under metadata${moved} (allowed fields: ${specFields.join(', ')}).`,
    );
  }
  const name = checkName(data.name, folder, error, (field, message, fix) =>
    problems.warning(skillFileName, field, message, fix),
  );
  const description = checkDescription(data.description, error);
  const license = optionalString(
    data.license,
    'license',
    1,
    Infinity,
    'name the license (e.g. MIT) or a license file in the skill folder.',
    error,
  );
  const compatibility = optionalString(
    data.compatibility,
    'compatibility',
    1,
    maxCompatibilityLength,
    `describe the environment the skill needs in at most ${maxCompatibilityLength} characters.`,
    error,
  );
  const allowedTools = checkAllowedTools(data['allowed-tools'], error);
  const metadata = checkMetadata(data.metadata, error, sources);
  if (problems.problems.slice(before).some((p) => p.severity === 'error') || name === null || description === null)
    return null;
  return { name, description, license, compatibility, metadata, allowedTools };
}

type Report = (field: string, message: string, fix: string) => void;

/** The spec's space-separated string; a YAML list of words, which skills-ref also reads, is joined into one. */
function checkAllowedTools(value: unknown, error: Report): string | null {
  const fix = 'list tool names separated by spaces, as one string (or as a YAML list of names).';
  if (Array.isArray(value)) {
    if (value.every((entry) => typeof entry === 'string' && entry.trim() !== '' && !/\s/.test(entry.trim())))
      return value.length === 0 ? null : value.map((entry: string) => entry.trim()).join(' ');
    error('allowed-tools', 'allowed-tools lists something other than tool names', fix);
    return null;
  }
  return optionalString(value, 'allowed-tools', 1, Infinity, fix, error);
}

function checkName(value: unknown, folder: string, error: Report, warn: Report): string | null {
  if (value === undefined) {
    error('name', 'the required field name is missing', `add "name: ${folder}" (the name must equal the folder name).`);
    return null;
  }
  if (typeof value !== 'string') {
    error('name', `name is ${describeValue(value)}, not a string`, `write "name: ${folder}".`);
    return null;
  }
  const problem = skillNameProblem(value);
  if (problem) {
    const suggestion = suggestSkillName(value);
    error(
      'name',
      `name "${value}" ${problem}`,
      suggestion
        ? `use "${suggestion}" and name the folder the same.`
        : 'use lowercase letters, digits and single hyphens.',
    );
    return null;
  }
  const name = canonicalSkillName(value);
  if (name !== canonicalSkillName(folder)) {
    error(
      'name',
      `name "${value}" does not match its folder "${folder}"`,
      `rename the folder to "${value}" or set "name: ${folder}".`,
    );
    return null;
  }
  const reserved = reservedNameWords.find((word) => name.includes(word));
  if (reserved) {
    warn(
      'name',
      `name "${value}" holds "${reserved}", a word Anthropic reserves: claude.ai and the Skills API refuse the skill`,
      `rename it (and its folder) without ${reservedNameWords.map((word) => `"${word}"`).join(' or ')} to share it there.`,
    );
  }
  return name;
}

function checkDescription(value: unknown, error: Report): string | null {
  if (value === undefined) {
    error(
      'description',
      'the required field description is missing',
      'add "description: ..." saying what the skill does and when to use it.',
    );
    return null;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    error(
      'description',
      `description is ${typeof value === 'string' ? 'empty' : describeValue(value)}`,
      'write a sentence or two saying what the skill does and when to use it.',
    );
    return null;
  }
  if (value.length > maxDescriptionLength) {
    error(
      'description',
      `description is ${value.length} characters long; the limit is ${maxDescriptionLength}`,
      'shorten it; put details in the body of SKILL.md.',
    );
    return null;
  }
  if (/[<>]/.test(value)) {
    error(
      'description',
      'description contains "<" or ">", which runtimes reject (it could smuggle markup into prompts)',
      'reword it without angle brackets (e.g. "less than", "leads to").',
    );
    return null;
  }
  return value;
}

function optionalString(
  value: unknown,
  field: string,
  min: number,
  max: number,
  fix: string,
  error: Report,
): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') {
    error(field, `${field} is ${describeValue(value)}, not a string`, fix);
    return null;
  }
  if (value.trim().length < min || value.length > max) {
    error(
      field,
      value.trim().length < min
        ? `${field} is empty`
        : `${field} is ${value.length} characters long; the limit is ${max}`,
      fix,
    );
    return null;
  }
  return value;
}

function checkMetadata(value: unknown, error: Report, sources: ScalarSources): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) {
    error(
      'metadata',
      `metadata is ${describeValue(value)}, not a map of strings`,
      'write "metadata:" followed by indented "key: value" lines whose values are strings.',
    );
    return {};
  }
  const strings: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry === 'string') {
      strings[key] = entry;
      continue;
    }
    const scalar = typeof entry === 'number' || typeof entry === 'boolean';
    error(
      `metadata.${key}`,
      `metadata.${key} is ${describeValue(entry)}; the spec allows only string values, and strict runtimes drop the skill`,
      scalar
        ? `put the value in quotes so YAML keeps it as written: ${key}: ${JSON.stringify(sources[`metadata.${key}`] ?? String(entry))}.`
        : 'write it as one string (see docs/skills.md), or move structured engine data to skillflow.yaml.',
    );
  }
  return strings;
}
