import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptySkillTurnState, type SkillToolContext, type SkillTurnState } from '../../core/skills';
import { SkillRegistry, type SkillRegistryOptions } from '../../lib/skills';

export const fixturesDir = path.resolve(__dirname, '..', 'fixtures', 'skills');
export const validFixtures = path.join(fixturesDir, 'valid');
export const invalidFixtures = path.join(fixturesDir, 'invalid');
export const bundledSkills = path.resolve(__dirname, '..', '..', 'skills');

/** A scratch copy of a fixtures folder, with a data dir beside it; removed by `cleanup`. */
export function scratchCopy(source: string = validFixtures): {
  root: string;
  skillsDir: string;
  dataDir: string;
  cleanup: () => void;
} {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-skills-'));
  const skillsDir = path.join(root, 'skills');
  fs.cpSync(source, skillsDir, { recursive: true });
  const dataDir = path.join(root, 'data');
  return { root, skillsDir, dataDir, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

export function registryFor(
  skillsDir: string,
  dataDir: string,
  options: Partial<SkillRegistryOptions> = {},
): SkillRegistry {
  return new SkillRegistry({ skillsDir, storeDir: path.join(dataDir, 'skill-store'), ...options });
}

/** A turn's view of the skill tools, backed by a registry the way the workflow is backed by activities. */
export async function turnContext(
  registry: SkillRegistry,
  state: SkillTurnState = emptySkillTurnState(),
): Promise<SkillToolContext> {
  const catalog = await registry.catalog();
  return {
    skills: catalog.skills,
    state,
    ports: {
      loadSkillSnapshot: (input) => registry.snapshot(input.name),
      readSkillResource: (input) => registry.readResource(input),
    },
  };
}

/** Rewrites a file and moves its mtime forward, so change detection cannot miss an edit within one clock tick. */
export function rewrite(file: string, text: string): void {
  fs.writeFileSync(file, text);
  const later = new Date(Date.now() + 5_000);
  fs.utimesSync(file, later, later);
}
