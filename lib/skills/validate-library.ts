import path from 'node:path';
import { settleLibrary, skillLimits, type SkillManifest, type SkillProblem } from '../../core/skills';
import { nodeSkillFileReader, type SkillFileReader } from './reader';
import { readSkillContent } from './skill-content';
import { findSkillFolders } from './skill-folders';

export interface LibraryReport {
  skillsDir: string;
  /** Every skill folder, with its manifest when it has no error. */
  skills: { folder: string; manifest: SkillManifest | null }[];
  problems: SkillProblem[];
}

/**
 * Full validation of a skills directory: the registry's own scan of each skill (so both judge a skill alike), plus
 * bodies, subskills and resources.
 */
export async function validateSkillLibrary(
  skillsDir: string,
  options: { reader?: SkillFileReader } = {},
): Promise<LibraryReport> {
  const dir = path.resolve(skillsDir);
  const deps = { skillsDir: dir, reader: options.reader ?? nodeSkillFileReader, limits: { ...skillLimits } };
  const { folders, problems } = await findSkillFolders(dir);
  const contents = [];
  for (const folder of folders) contents.push(await readSkillContent(folder, deps));
  const settled = settleLibrary(contents.flatMap((c) => (c.manifest ? [c.manifest] : [])));
  const validNames = new Set(settled.valid.map((m) => m.name));
  return {
    skillsDir: dir,
    skills: contents.map((c) => ({
      folder: c.folder,
      manifest: c.manifest && validNames.has(c.manifest.name) ? c.manifest : null,
    })),
    problems: [...problems, ...contents.flatMap((c) => c.problems.problems), ...settled.problems],
  };
}
