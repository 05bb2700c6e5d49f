import { PlanSyntaxError } from './errors';
import { isSkillName } from './names';
import { planSpecOf } from './plan-parser';
import { closest, skillFileName, subskillFolder, type ProblemList } from './problems';
import { sidecarKeys } from './sidecar';
import type { PlanSpec } from './types';

/** Engine data kept as strings under the spec's `metadata`, so other runtimes still accept the frontmatter. */
export const engineMetadataKeys = ['plan', 'category', 'tags', 'version', 'enabled'] as const;

export interface EngineMetadata {
  plan: PlanSpec | null;
  category: string | null;
  tags: string[];
  version: string | null;
  enabled: boolean;
}

const semver = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

export function checkEngineMetadata(metadata: Record<string, string>, subskills: string[], problems: ProblemList): EngineMetadata {
  const error = (key: string, message: string, fix: string) => problems.error(skillFileName, `metadata.${key}`, message, fix);
  for (const key of Object.keys(metadata)) {
    if ((engineMetadataKeys as readonly string[]).includes(key)) continue;
    if ((sidecarKeys as readonly string[]).includes(key)) {
      problems.warning(skillFileName, `metadata.${key}`, `skillflow reads ${key} from skillflow.yaml, not from metadata`, `move it to skillflow.yaml (see docs/skills.md).`);
      continue;
    }
    const near = closest(key, engineMetadataKeys);
    if (near) problems.warning(skillFileName, `metadata.${key}`, `metadata.${key} is not an engine key, so skillflow ignores it`, `did you mean metadata.${near}?`);
  }

  let plan: PlanSpec | null = null;
  if (metadata.plan !== undefined) {
    try {
      plan = planSpecOf(metadata.plan);
      for (const step of plan.steps) {
        if (!subskills.includes(step)) {
          const near = closest(step, subskills);
          error('plan', `step "${step}" has no subskill file ${subskillFolder}/${step}.md`, near ? `did you mean "${near}"? Otherwise create ${subskillFolder}/${step}.md.` : `create ${subskillFolder}/${step}.md or correct the step name.`);
          plan = null;
        }
      }
    } catch (err) {
      if (!(err instanceof PlanSyntaxError)) throw err;
      error('plan', `plan syntax: ${err.reason}`, err.fix);
    }
  }

  const category = metadata.category ?? null;
  if (category !== null && !isSkillName(category)) {
    error('category', `category "${category}" is not a lowercase word`, 'use lowercase a-z, 0-9 and single hyphens, e.g. "learning" or "code".');
  }

  const tags = metadata.tags === undefined ? [] : metadata.tags.split(',').map((tag) => tag.trim());
  for (const tag of tags) {
    if (!isSkillName(tag)) error('tags', `tag "${tag}" is not a lowercase word`, 'separate tags with commas; each tag uses lowercase a-z, 0-9 and single hyphens, e.g. "exam, practice".');
  }
  if (new Set(tags).size !== tags.length) error('tags', 'a tag is listed twice', 'list each tag once.');

  const version = metadata.version ?? null;
  if (version !== null && !semver.test(version)) error('version', `version "${version}" is not a semantic version`, 'write MAJOR.MINOR.PATCH, e.g. "1.0.0".');

  const enabledText = metadata.enabled ?? 'true';
  if (enabledText !== 'true' && enabledText !== 'false') error('enabled', `enabled is "${enabledText}"`, 'write "true" or "false" (quoted).');

  return { plan, category, tags, version, enabled: enabledText !== 'false' };
}
