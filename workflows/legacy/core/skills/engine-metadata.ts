import { efforts, isEffort, type Effort } from '../thinking';
import { PlanSyntaxError } from './errors';
import { isKebabWord } from './names';
import { planSpecOf } from './plan-parser';
import { closest, skillFileName, subskillFolder, type ProblemList } from './problems';
import { sidecarKeys } from './sidecar';
import type { PlanSpec } from './types';

/** Engine data kept as strings under the spec's `metadata`, so other runtimes still accept the frontmatter. */
export const engineMetadataKeys = ['plan', 'category', 'tags', 'version', 'enabled', 'effort'] as const;

export interface EngineMetadata {
  plan: PlanSpec | null;
  category: string | null;
  tags: string[];
  version: string | null;
  enabled: boolean;
  effort: Effort | null;
}

/**
 * Reads the engine's keys under the spec's `metadata`. The spec accepts any string there, so a value the engine cannot
 * use is a warning and is ignored, never an error: a skill the spec accepts always loads.
 */
export function checkEngineMetadata(
  metadata: Record<string, string>,
  subskills: string[],
  problems: ProblemList,
): EngineMetadata {
  const warn = (key: string, message: string, fix: string) =>
    problems.warning(skillFileName, `metadata.${key}`, message, fix);
  for (const key of Object.keys(metadata)) {
    if ((engineMetadataKeys as readonly string[]).includes(key)) continue;
    if ((sidecarKeys as readonly string[]).includes(key)) {
      warn(
        key,
        `skillflow reads ${key} from skillflow.yaml, not from metadata`,
        `move it to skillflow.yaml (see docs/skills.md).`,
      );
      continue;
    }
    const near = closest(key, engineMetadataKeys);
    if (near)
      warn(key, `metadata.${key} is not an engine key, so skillflow ignores it`, `did you mean metadata.${near}?`);
  }

  const plan = metadata.plan === undefined ? null : readPlan(metadata.plan, subskills, warn);

  let category: string | null = metadata.category ?? null;
  if (category !== null && !isKebabWord(category)) {
    warn(
      'category',
      `category "${category}" is not a lowercase word, so skillflow ignores it`,
      'use lowercase a-z, 0-9 and single hyphens, e.g. "learning" or "code".',
    );
    category = null;
  }

  const tags: string[] = [];
  for (const tag of metadata.tags === undefined ? [] : metadata.tags.split(',').map((entry) => entry.trim())) {
    if (!isKebabWord(tag))
      warn(
        'tags',
        `tag "${tag}" is not a lowercase word, so skillflow ignores it`,
        'separate tags with commas; each tag uses lowercase a-z, 0-9 and single hyphens, e.g. "exam, practice".',
      );
    else if (tags.includes(tag)) warn('tags', `tag "${tag}" is listed twice`, 'list each tag once.');
    else tags.push(tag);
  }

  // Any string names a version (the spec's own example is "1.0"); skillflow only shows it.
  const version = metadata.version?.trim() || null;

  const enabledText = metadata.enabled ?? 'true';
  if (enabledText !== 'true' && enabledText !== 'false') {
    warn(
      'enabled',
      `enabled is "${enabledText}", so skillflow keeps the skill enabled`,
      'write "true" or "false" (quoted).',
    );
  }
  const effortText = metadata.effort?.trim().toLowerCase();
  const effort = isEffort(effortText) ? effortText : null;
  if (effortText !== undefined && effort === null) {
    warn(
      'effort',
      `effort "${metadata.effort}" is not an effort level, so the configured effort applies`,
      `write one of ${efforts.join(', ')}.`,
    );
  }
  return { plan, category, tags, version, enabled: enabledText !== 'false', effort };
}

/** The plan, or null with a warning: a plan skillflow cannot read is not enforced, and the author must hear it. */
function readPlan(
  source: string,
  subskills: string[],
  warn: (key: string, message: string, fix: string) => void,
): PlanSpec | null {
  const ignored = 'so skillflow ignores the plan and enforces no order of steps';
  try {
    const plan = planSpecOf(source);
    for (const step of plan.steps) {
      if (subskills.includes(step)) continue;
      const near = closest(step, subskills);
      warn(
        'plan',
        `step "${step}" has no subskill file ${subskillFolder}/${step}.md, ${ignored}`,
        near
          ? `did you mean "${near}"? Otherwise create ${subskillFolder}/${step}.md.`
          : `create ${subskillFolder}/${step}.md or correct the step name.`,
      );
      return null;
    }
    return plan;
  } catch (err) {
    if (!(err instanceof PlanSyntaxError)) throw err;
    warn('plan', `plan syntax: ${err.reason.replace(/\.$/, '')}, ${ignored}`, err.fix);
    return null;
  }
}
