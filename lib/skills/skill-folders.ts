import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { skillFileName, type SkillProblem } from '../../core/skills';

/** The folders of the skills directory that hold a SKILL.md: the top-level skills. Nothing below them is one. */
export async function findSkillFolders(skillsDir: string): Promise<{ folders: string[]; problems: SkillProblem[] }> {
  const problems: SkillProblem[] = [];
  let names: string[];
  try {
    names = (await fsp.readdir(skillsDir)).filter((name) => !name.startsWith('.')).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problems.push({
      severity: 'warning',
      skill: '',
      file: skillsDir,
      field: '-',
      message:
        code === 'ENOENT'
          ? 'the skills directory does not exist, so no skill is available'
          : `the skills directory cannot be read: ${(error as Error).message}`,
      fix: 'create it, or point SKILLFLOW_SKILLS_DIR at the folder that holds your skills.',
    });
    return { folders: [], problems };
  }
  const folders: string[] = [];
  for (const name of names) {
    const folder = path.join(skillsDir, name);
    const stat = await fsp.stat(folder).catch(() => null);
    if (!stat?.isDirectory()) continue;
    const files = await fsp.readdir(folder).catch(() => [] as string[]);
    if (files.includes(skillFileName)) {
      folders.push(name);
      continue;
    }
    const misspelt = files.find((file) => file.toLowerCase() === 'skill.md');
    problems.push({
      severity: misspelt ? 'error' : 'warning',
      skill: name,
      file: `${name}/${misspelt ?? ''}`,
      field: '-',
      message: misspelt
        ? 'the skill file must be spelled SKILL.md'
        : 'the folder has no SKILL.md, so it is not a skill',
      fix: misspelt
        ? `rename ${misspelt} to SKILL.md.`
        : 'add a SKILL.md, or move the folder out of the skills directory.',
    });
  }
  return { folders, problems };
}
