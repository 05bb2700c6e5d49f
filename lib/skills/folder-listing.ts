import { createHash } from 'node:crypto';
import type { Dirent, Stats } from 'node:fs';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import {
  formatBytes,
  isKebabWord,
  sidecarFileName,
  skillFileName,
  kebabWordProblem,
  subskillFolder,
  type ProblemList,
  type SkillSizeLimits,
} from '../../core/skills';
import { isInside, readFailure } from './reader';

export interface FolderEntry {
  /** Path relative to the skill folder, with / separators. */
  rel: string;
  /** Where to read it: the path itself, or the target of a symlink that stays inside the folder. */
  abs: string;
  size: number;
}

/** The files of a skill folder, found with directory listings and stats only: no file is read. */
export interface SkillFolderListing {
  skillFile: FolderEntry | null;
  sidecar: FolderEntry | null;
  subskills: { name: string; entry: FolderEntry }[];
  resources: FolderEntry[];
  /** Changes whenever a file is added, removed or modified. */
  fingerprint: string;
}

interface Found {
  rel: string;
  abs: string;
  stat: Stats;
}

/** Lists a skill folder and reports layout problems (nested SKILL.md, bad subskill files, size caps, symlinks). */
export async function listSkillFolder(
  root: string,
  problems: ProblemList,
  limits: SkillSizeLimits,
): Promise<SkillFolderListing> {
  const fingerprint = createHash('sha256');
  const files: Found[] = [];
  const listing: SkillFolderListing = { skillFile: null, sidecar: null, subskills: [], resources: [], fingerprint: '' };
  let realRoot: string;
  try {
    realRoot = await fsp.realpath(root);
  } catch (error) {
    problems.error(
      '',
      '-',
      `the skill folder cannot be read (${readFailure(error)})`,
      'check that it exists and that skillflow may read it.',
    );
    listing.fingerprint = fingerprint.update(`unreadable\t${readFailure(error)}`).digest('hex');
    return listing;
  }

  const visit = async (relDir: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(path.join(root, relDir), { withFileTypes: true });
    } catch (error) {
      problems.error(relDir, '-', `the folder cannot be listed (${readFailure(error)})`, 'check its permissions.');
      fingerprint.update(`${relDir}\tunlistable\n`);
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name.startsWith('.')) continue;
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      const abs = path.join(root, rel);
      const found = await resolveEntry(rel, abs, realRoot, problems);
      if (!found) continue;
      fingerprint.update(
        `${rel}\t${found.stat.size}\t${found.stat.mtimeMs}\t${found.stat.ctimeMs}\t${found.stat.ino}\n`,
      );
      if (found.stat.isDirectory()) {
        if (depth >= limits.folderDepth) {
          problems.warning(
            rel,
            '-',
            `folders deeper than ${limits.folderDepth} levels are not searched`,
            'move the files it holds closer to the skill folder.',
          );
        } else {
          await visit(rel, depth + 1);
        }
      } else if (found.stat.isFile()) {
        files.push(found);
      }
    }
  };
  await visit('', 0);

  for (const file of files) classify(file, listing, problems, limits);
  if (listing.subskills.length > limits.subskillCount) {
    problems.error(
      subskillFolder,
      '-',
      `the skill has ${listing.subskills.length} subskills; the limit is ${limits.subskillCount}`,
      'merge subskills or split the skill.',
    );
  }
  if (listing.resources.length > limits.resourceCount) {
    problems.error(
      '',
      '-',
      `the skill folder holds ${listing.resources.length} resource files; the limit is ${limits.resourceCount}`,
      'remove files the skill does not need.',
    );
  }
  listing.fingerprint = fingerprint.digest('hex');
  return listing;
}

/** Follows a symlink only when it resolves to a file inside the skill folder. */
async function resolveEntry(rel: string, abs: string, realRoot: string, problems: ProblemList): Promise<Found | null> {
  let stat: Stats;
  try {
    stat = await fsp.lstat(abs);
  } catch (error) {
    // Permissions, or a file removed while it was listed (an editor saving it): reported, and the rest goes on.
    const severity = path.posix.basename(rel) === skillFileName || rel === sidecarFileName ? 'error' : 'warning';
    problems.add(
      severity,
      rel,
      '-',
      `cannot be read (${readFailure(error)})`,
      'check that the file exists and that skillflow may read it.',
    );
    return null;
  }
  if (!stat.isSymbolicLink()) return stat.isFile() || stat.isDirectory() ? { rel, abs, stat } : null;
  let target: string;
  try {
    target = await fsp.realpath(abs);
  } catch {
    problems.warning(rel, '-', 'the symlink points to nothing', 'remove it or fix its target.');
    return null;
  }
  if (!isInside(realRoot, target)) {
    problems.warning(
      rel,
      '-',
      'the symlink leads outside the skill folder, so it is never served',
      'copy the file into the skill folder instead of linking to it.',
    );
    return null;
  }
  let targetStat: Stats;
  try {
    targetStat = await fsp.stat(target);
  } catch (error) {
    problems.warning(
      rel,
      '-',
      `the symlink's target cannot be read (${readFailure(error)})`,
      'remove it or fix its target.',
    );
    return null;
  }
  if (!targetStat.isFile()) {
    problems.warning(rel, '-', 'symlinked folders are not followed', 'move the files into the skill folder.');
    return null;
  }
  return { rel, abs: target, stat: targetStat };
}

function classify(file: Found, listing: SkillFolderListing, problems: ProblemList, limits: SkillSizeLimits): void {
  const entry: FolderEntry = { rel: file.rel, abs: file.abs, size: file.stat.size };
  const base = path.posix.basename(file.rel);
  const tooLarge = (limit: number) => entry.size > limit;
  const sizeError = (limit: number, fix: string) =>
    problems.error(file.rel, '-', `the file is ${formatBytes(entry.size)}; the limit is ${formatBytes(limit)}`, fix);
  // The spec sets no size limit: over the advised size a skill still loads, and `skills validate --strict` fails.
  const sizeWarning = (limit: number, fix: string) =>
    problems.warning(
      file.rel,
      '-',
      `the file is ${formatBytes(entry.size)}, over the advised ${formatBytes(limit)}: every byte of it reaches the model's context`,
      fix,
    );

  if (file.rel === skillFileName) {
    // Its body counts toward the snapshot's text and its front matter has its own cap: beyond both it can never load.
    const most = limits.snapshotBytes + limits.frontmatterBytes;
    if (tooLarge(most)) sizeError(most, 'move details into subskills or resource files.');
    else if (tooLarge(limits.skillFileBytes))
      sizeWarning(
        limits.skillFileBytes,
        'move details into subskills or resource files, which are read only when needed.',
      );
    listing.skillFile = entry;
    return;
  }
  if (base.toLowerCase() === 'skill.md') {
    problems.error(
      file.rel,
      '-',
      file.rel.includes('/')
        ? 'a nested SKILL.md would be registered as a top-level skill by runtimes that scan recursively'
        : 'the skill file must be spelled SKILL.md',
      file.rel.includes('/') ? `rename it; subskills live in ${subskillFolder}/NAME.md.` : 'rename it to SKILL.md.',
    );
    return;
  }
  if (file.rel === sidecarFileName) {
    if (tooLarge(limits.sidecarBytes)) sizeError(limits.sidecarBytes, 'keep skillflow.yaml to engine data.');
    listing.sidecar = entry;
    return;
  }
  if (file.rel === 'skillflow.yml') {
    problems.error(file.rel, '-', 'the engine sidecar must be named skillflow.yaml', 'rename it to skillflow.yaml.');
    return;
  }
  if (file.rel.startsWith(`${subskillFolder}/`)) {
    classifySubskill(file.rel, entry, listing, problems, limits);
    return;
  }
  if (tooLarge(limits.resourceBytes)) {
    problems.warning(
      file.rel,
      '-',
      `the file is ${formatBytes(entry.size)}, over the ${formatBytes(limits.resourceBytes)} resource limit, so it is never served`,
      'shrink or split it, or remove it.',
    );
    return;
  }
  listing.resources.push(entry);
}

function classifySubskill(
  rel: string,
  entry: FolderEntry,
  listing: SkillFolderListing,
  problems: ProblemList,
  limits: SkillSizeLimits,
): void {
  const inner = rel.slice(subskillFolder.length + 1);
  if (inner.includes('/')) {
    problems.error(
      rel,
      '-',
      `${subskillFolder}/ holds subskill files only, not folders`,
      `move it to ${subskillFolder}/NAME.md, or out of ${subskillFolder}/ if it is a resource.`,
    );
    return;
  }
  if (!inner.endsWith('.md')) {
    problems.error(
      rel,
      '-',
      `${subskillFolder}/ holds only markdown subskill files (NAME.md)`,
      `move it out of ${subskillFolder}/ (e.g. to references/) if it is a resource.`,
    );
    return;
  }
  const name = inner.slice(0, -3);
  if (!isKebabWord(name)) {
    problems.error(
      rel,
      '-',
      `subskill name "${name}" ${kebabWordProblem(name)}`,
      'name subskill files with lowercase a-z, 0-9 and single hyphens, e.g. question-generation.md.',
    );
    return;
  }
  if (entry.size > limits.snapshotBytes) {
    problems.error(
      rel,
      '-',
      `the file is ${formatBytes(entry.size)}; the limit is ${formatBytes(limits.snapshotBytes)}`,
      'split the subskill in two.',
    );
  } else if (entry.size > limits.subskillBytes) {
    problems.warning(
      rel,
      '-',
      `the file is ${formatBytes(entry.size)}, over the advised ${formatBytes(limits.subskillBytes)}: every byte of it reaches the model's context`,
      'split the subskill in two.',
    );
  }
  listing.subskills.push({ name, entry });
}
