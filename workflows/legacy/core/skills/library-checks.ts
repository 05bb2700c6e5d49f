import { closest, sidecarFileName } from './problems';
import type { SkillManifest, SkillProblem } from './types';

/**
 * Checks between skills: children and routes name skills that exist, and children never nest in a cycle.
 * A skill with an error here is dropped, which can break the skills that name it, so this repeats until stable.
 */
export function settleLibrary(manifests: SkillManifest[]): { valid: SkillManifest[]; problems: SkillProblem[] } {
  let valid = manifests;
  const problems: SkillProblem[] = [];
  for (;;) {
    const found = checkLibrary(valid);
    const broken = new Set(found.filter((p) => p.severity === 'error').map((p) => p.skill));
    const fresh = found.filter(
      (p) => !problems.some((q) => q.skill === p.skill && q.field === p.field && q.message === p.message),
    );
    problems.push(...fresh);
    if (broken.size === 0) return { valid, problems };
    valid = valid.filter((m) => !broken.has(m.name));
  }
}

export function checkLibrary(manifests: SkillManifest[]): SkillProblem[] {
  const byName = new Map(manifests.map((m) => [m.name, m]));
  const names = [...byName.keys()];
  const problems: SkillProblem[] = [];
  const report = (severity: SkillProblem['severity'], skill: string, field: string, message: string, fix: string) =>
    problems.push({ severity, skill, file: `${skill}/${sidecarFileName}`, field, message, fix });

  const reference = (from: string, field: string, target: string, role: string) => {
    const found = byName.get(target);
    if (!found) {
      const near = closest(target, names);
      report(
        'error',
        from,
        field,
        `${role} "${target}" is not a valid skill of this library`,
        near
          ? `did you mean "${near}"? Otherwise add the skill or fix it.`
          : `add a skill folder ${target}/, fix it, or remove the reference.`,
      );
    } else if (!found.enabled) {
      report(
        'warning',
        from,
        field,
        `${role} "${target}" is disabled, so it cannot be loaded`,
        `enable ${target} (metadata.enabled: "true") or remove the reference.`,
      );
    }
  };
  const seen = new Set<string>();
  for (const manifest of manifests) {
    if (!seen.has(manifest.name)) seen.add(manifest.name);
    else
      report(
        'error',
        manifest.name,
        '-',
        `two skill folders are named "${manifest.name}" once Unicode-normalised (NFKC), which makes them one name`,
        'rename one of the folders and its name.',
      );
  }
  for (const manifest of manifests) {
    for (const child of manifest.children) reference(manifest.name, 'children', child, 'child skill');
    for (const checkpoint of manifest.checkpoints) {
      for (const route of checkpoint.routes) {
        if (route.skill)
          reference(manifest.name, `checkpoints.${checkpoint.name}.routes.${route.id}`, route.skill, 'route target');
      }
    }
  }
  for (const manifest of manifests) {
    const cycle = cycleThrough(manifest.name, byName);
    if (cycle) {
      report(
        'error',
        manifest.name,
        'children',
        `child skills form a cycle: ${cycle.join(' → ')}`,
        `remove one link of the cycle from the children of one of these skills.`,
      );
    }
  }
  return problems;
}

/** The shortest chain of children leading from the skill back to itself, or null. */
function cycleThrough(start: string, byName: Map<string, SkillManifest>): string[] | null {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift() as string;
    for (const child of byName.get(current)?.children ?? []) {
      if (child === start) {
        const path = [current];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]) as string);
        return [...path, start];
      }
      if (!cameFrom.has(child) && byName.has(child)) {
        cameFrom.set(child, current);
        queue.push(child);
      }
    }
  }
  return null;
}
