import path from 'node:path';
import type { ReadSkillResourceInput, SkillCatalog, SkillRef, SkillResource, SkillSnapshot } from '../core/skills';
import { SkillRegistry } from '../lib/skills/registry';

export interface SkillActivityDeps {
  skillsDir: string;
  dataDir: string;
}

/**
 * The skill activities: plain data in, plain data out. Errors are typed (core/skills/errors.ts) so the workflow
 * can mark them non-retryable and turn them into tool error results.
 */
export function createSkillActivities(deps: SkillActivityDeps) {
  const registry = new SkillRegistry({ skillsDir: deps.skillsDir, storeDir: path.join(deps.dataDir, 'skill-store') });
  return {
    /** Manifests of the valid, enabled skills, and every problem found; re-scans changed skills. */
    async skillCatalog(): Promise<SkillCatalog> {
      return registry.catalog();
    },
    /** Pins the current version of a skill: everything load_skill and load_subskill serve, with its hash. */
    async loadSkillSnapshot(input: { name: string }): Promise<SkillSnapshot> {
      return registry.snapshot(input.name);
    },
    /**
     * The pinned versions a carried plan names, read back for the turn that continues it; those no longer available
     * (another worker's store, a skill changed since) are listed, and the turn goes on without them.
     */
    async resolveSkillSnapshots(input: {
      skills: SkillRef[];
    }): Promise<{ snapshots: SkillSnapshot[]; unavailable: SkillRef[] }> {
      const found = await Promise.all(
        input.skills.map(async (ref) => ({ ref, snapshot: await registry.pinnedSnapshot(ref) })),
      );
      return {
        snapshots: found.flatMap(({ snapshot }) => (snapshot ? [snapshot] : [])),
        unavailable: found.flatMap(({ ref, snapshot }) => (snapshot ? [] : [ref])),
      };
    },
    /** A resource file of exactly the pinned version. */
    async readSkillResource(input: ReadSkillResourceInput): Promise<SkillResource> {
      return registry.readResource(input);
    },
  };
}

export type SkillActivities = ReturnType<typeof createSkillActivities>;
