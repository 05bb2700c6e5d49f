import type { SkillProblem } from './types';

/**
 * Failure types the skill activities raise. Temporal turns a thrown error's `name` into the failure type, so the
 * workflow's retry policy keys on these strings.
 */
export const SkillErrorType = {
  validation: 'SkillValidationError',
  notFound: 'SkillNotFoundError',
  resource: 'SkillResourceError',
  versionUnavailable: 'SkillVersionUnavailableError',
  planSyntax: 'PlanSyntaxError',
} as const;

/** None of these gets better by retrying: the skill folder has to change first. */
export const nonRetryableSkillErrors: string[] = Object.values(SkillErrorType);

/** A problem with a skill that the author or the model can act on: says what is wrong and what to do. */
export class SkillError extends Error {
  override name: string = 'SkillError';
  constructor(
    /** What is wrong, without the fix. */
    readonly reason: string,
    readonly fix: string,
  ) {
    super(fix ? `${reason} Fix: ${fix}` : reason);
  }
}

export function formatProblem(problem: Pick<SkillProblem, 'file' | 'field' | 'message'>): string {
  return problem.field === '-'
    ? `${problem.file}: ${problem.message}`
    : `${problem.file}: ${problem.field}: ${problem.message}`;
}

export class SkillValidationError extends SkillError {
  override name = SkillErrorType.validation;
  readonly file: string;
  readonly field: string;
  readonly problems: SkillProblem[];
  constructor(problems: SkillProblem[]) {
    const first = problems[0] ?? {
      severity: 'error',
      skill: '',
      file: 'skill',
      field: '-',
      message: 'the skill is not valid',
      fix: 'run skillflow skills validate.',
    };
    const more =
      problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
    super(`${formatProblem(first)}${more}.`, first.fix);
    this.file = first.file;
    this.field = first.field;
    this.problems = problems;
  }
}

export class SkillNotFoundError extends SkillError {
  override name = SkillErrorType.notFound;
}

/** A resource request refused or impossible to serve (bad path, not a resource, too large, not text). */
export class SkillResourceError extends SkillError {
  override name = SkillErrorType.resource;
}

/** The pinned version of a skill is neither in the skill store nor on disk any more. */
export class SkillVersionUnavailableError extends SkillError {
  override name = SkillErrorType.versionUnavailable;
}

export class PlanSyntaxError extends SkillError {
  override name = SkillErrorType.planSyntax;
  constructor(
    problem: string,
    /** 1-based column in the plan text. */
    readonly column: number,
    fix: string,
  ) {
    super(`${problem} at column ${column}.`, fix);
  }
}
