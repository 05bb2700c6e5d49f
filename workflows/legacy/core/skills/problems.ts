import type { ProblemSeverity, SkillProblem } from './types';

export const skillFileName = 'SKILL.md';
export const sidecarFileName = 'skillflow.yaml';
export const subskillFolder = 'subskills';

/** Collects the problems of one skill folder; paths are given relative to the folder. */
export class ProblemList {
  readonly problems: SkillProblem[] = [];
  constructor(readonly skill: string) {}

  error(file: string, field: string, message: string, fix: string): void {
    this.add('error', file, field, message, fix);
  }

  warning(file: string, field: string, message: string, fix: string): void {
    this.add('warning', file, field, message, fix);
  }

  add(severity: ProblemSeverity, file: string, field: string, message: string, fix: string): void {
    this.problems.push({ severity, skill: this.skill, file: `${this.skill}/${file}`, field, message, fix });
  }

  get hasErrors(): boolean {
    return hasErrors(this.problems);
  }
}

export function hasErrors(problems: SkillProblem[]): boolean {
  return problems.some((problem) => problem.severity === 'error');
}

/**
 * The closest candidate, for "did you mean" fixes: within two edits, else the one candidate the word abbreviates or
 * extends (`question-gen` for `question-generation`).
 */
export function closest(word: string, candidates: readonly string[]): string | null {
  const lower = word.toLowerCase();
  let best: string | null = null;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== null || lower.length < 3) return best;
  const related = candidates.filter(
    (candidate) => candidate.length >= 3 && (candidate.startsWith(lower) || lower.startsWith(candidate)),
  );
  return related.length === 1 ? related[0] : null;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return `a ${typeof value}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
