/** Name rules shared by the spec validator, the plan parser and the tools. */

/** Agent Skills spec: a-z, 0-9 and single hyphens inside; also used for subskills, categories and tags. */
const kebabName = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** Checkpoint and parameter names, as the model writes them in tool calls (`exam_params`, `time_limit_min`). */
const snakeName = /^[a-z][a-z0-9_]*$/;

export const maxNameLength = 64;

export function isSkillName(value: string): boolean {
  return value.length >= 1 && value.length <= maxNameLength && kebabName.test(value);
}

/** Why a skill (or subskill) name breaks the spec's rules, or null when it is fine. */
export function skillNameProblem(value: string): string | null {
  if (value.length === 0) return 'is empty';
  if (value.length > maxNameLength) return `is ${value.length} characters long; the limit is ${maxNameLength}`;
  if (/[^a-z0-9-]/.test(value)) return 'may contain only lowercase letters a-z, digits 0-9 and hyphens';
  if (value.startsWith('-') || value.endsWith('-')) return 'must not start or end with a hyphen';
  if (value.includes('--')) return 'must not contain two hyphens in a row';
  return null;
}

export function isSnakeName(value: string): boolean {
  return value.length >= 1 && value.length <= maxNameLength && snakeName.test(value);
}

/** Anthropic tool names: 1-64 of letters, digits, `_` and `-`. */
export function isToolName(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(value);
}

/** `exam params` -> `exam-params`: a hint for fixes, not a guarantee of validity. */
export function suggestSkillName(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxNameLength)
    .replace(/-+$/, '');
}
