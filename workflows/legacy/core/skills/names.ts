/** Name rules shared by the spec validator, the plan parser and the tools. */

/** a-z, 0-9 and single hyphens inside: subskills (plan steps), categories, tags. */
const kebabName = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** Checkpoint and parameter names, as the model writes them in tool calls (`exam_params`, `time_limit_min`). */
const snakeName = /^[a-z][a-z0-9_]*$/;

export const maxNameLength = 64;

/** Subskill (plan step) names, categories and tags: lowercase a-z, 0-9 and single hyphens. */
export function isKebabWord(value: string): boolean {
  return value.length >= 1 && value.length <= maxNameLength && kebabName.test(value);
}

/** Why a subskill name breaks its rule, or null when it is fine. */
export function kebabWordProblem(value: string): string | null {
  return (
    hyphenProblem(value) ??
    (/[^a-z0-9-]/.test(value) ? 'may contain only lowercase letters a-z, digits 0-9 and hyphens' : null)
  );
}

/**
 * A skill's name as the reference validator (skills-ref) reads it: NFKC-normalised, so two names equal after NFKC are
 * one name (a folder written in NFD and a name in NFC match).
 */
export const canonicalSkillName = (value: string): string => value.normalize('NFKC');

/** Skill names: Unicode lowercase letters, digits and single hyphens, after NFKC (skills-ref's rule). */
export function isSkillName(value: string): boolean {
  return skillNameProblem(value) === null;
}

/** Why a skill name breaks the spec's rules (as skills-ref reads them), or null when it is fine. */
export function skillNameProblem(value: string): string | null {
  const name = canonicalSkillName(value);
  return (
    hyphenProblem(name) ??
    (/[^\p{L}\p{N}-]/u.test(name) || name !== name.toLowerCase()
      ? 'may contain only lowercase letters, digits and hyphens'
      : null)
  );
}

function hyphenProblem(value: string): string | null {
  if (value.length === 0) return 'is empty';
  if (value.length > maxNameLength) return `is ${value.length} characters long; the limit is ${maxNameLength}`;
  if (value.startsWith('-') || value.endsWith('-')) return 'must not start or end with a hyphen';
  if (value.includes('--')) return 'must not contain two hyphens in a row';
  return null;
}

/** Words Anthropic keeps for itself: claude.ai and the Skills API refuse a skill name holding one. */
export const reservedNameWords = ['anthropic', 'claude'] as const;

export function isSnakeName(value: string): boolean {
  return value.length >= 1 && value.length <= maxNameLength && snakeName.test(value);
}

/** Anthropic tool names: 1-64 of letters, digits, `_` and `-`. */
export function isToolName(value: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(value);
}

/** `Exam Params` -> `exam-params`, `Café` -> `café`: a hint for fixes, not a guarantee of validity. */
export function suggestSkillName(value: string): string {
  return canonicalSkillName(value)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxNameLength)
    .replace(/-+$/, '');
}
