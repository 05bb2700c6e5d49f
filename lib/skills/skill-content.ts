import path from 'node:path';
import {
  formatBytes,
  ProblemList,
  sidecarFileName,
  skillFileName,
  subskillFolder,
  type SkillManifest,
  type SubskillContent,
} from '../../core/skills';
import { sanitizeMarkdown } from '../../core/skills/sanitize';
import { listSkillFolder } from './folder-listing';
import { FrontmatterError, hasFrontmatter, parseFrontmatter } from './frontmatter';
import { hashSkillFiles, type SkillFile } from './hash';
import { manifestOf, readSidecar, type ScanDeps } from './scan-skill';

/** One version of a skill read in full: validated, sanitized and hashed. */
export interface SkillContent {
  folder: string;
  manifest: SkillManifest | null;
  body: string;
  subskills: SubskillContent[];
  /** Every served file as read (SKILL.md, skillflow.yaml, subskills, resources): what the hash covers. */
  files: SkillFile[];
  hash: string;
  fingerprint: string;
  problems: ProblemList;
}

/** Reads a whole skill folder: what load_skill pins and what `skillflow skills validate` checks. */
export async function readSkillContent(folder: string, deps: ScanDeps): Promise<SkillContent> {
  const root = path.join(deps.skillsDir, folder);
  const problems = new ProblemList(folder);
  const listing = await listSkillFolder(root, problems, deps.limits);
  const content: SkillContent = { folder, manifest: null, body: '', subskills: [], files: [], hash: '', fingerprint: listing.fingerprint, problems };
  if (!listing.skillFile) {
    problems.error(skillFileName, '-', 'SKILL.md is missing', 'add SKILL.md with name and description front matter.');
    return content;
  }
  const read = async (rel: string, abs: string, maxBytes: number): Promise<Buffer | null> => {
    try {
      const bytes = await deps.reader.readFile(abs, root, maxBytes);
      content.files.push({ rel, bytes });
      return bytes;
    } catch (error) {
      problems.error(rel, '-', `cannot be read: ${(error as Error).message}`, 'keep the file a regular file inside the skill folder, within the size limit.');
      return null;
    }
  };

  const skillBytes = await read(skillFileName, listing.skillFile.abs, deps.limits.skillFileBytes);
  const sidecar = await readSidecar(root, listing, deps, problems);
  if (sidecar?.bytes) content.files.push({ rel: sidecarFileName, bytes: sidecar.bytes });
  if (skillBytes === null || sidecar === null) return content;

  let frontmatter: unknown;
  let rawBody = '';
  try {
    const parsed = parseFrontmatter(skillBytes.toString('utf8'));
    frontmatter = parsed.data;
    rawBody = parsed.body;
  } catch (error) {
    if (!(error instanceof FrontmatterError)) throw error;
    problems.error(skillFileName, '-', error.message, error.fix);
    return content;
  }
  content.body = sanitizeMarkdown(rawBody);
  if (content.body === '') {
    problems.error(skillFileName, 'body', 'the body is empty once HTML is removed, so there are no instructions to load', 'write the instructions in markdown below the front matter.');
  } else if (content.body.split('\n').length > deps.limits.bodyLines) {
    problems.warning(skillFileName, 'body', `the body has more than ${deps.limits.bodyLines} lines`, 'move phases into subskills and details into resource files.');
  }

  for (const { name, entry } of listing.subskills) {
    const bytes = await read(entry.rel, entry.abs, deps.limits.subskillBytes);
    if (bytes === null) continue;
    const text = bytes.toString('utf8');
    if (hasFrontmatter(text)) {
      problems.error(entry.rel, '-', 'subskill files carry no front matter', `remove the --- block; describe the subskill in the body of ${skillFileName}.`);
      continue;
    }
    const body = sanitizeMarkdown(text);
    if (body === '') problems.error(entry.rel, '-', 'the subskill is empty once HTML is removed', 'write its instructions in markdown, or delete the file.');
    content.subskills.push({ name, body });
  }
  const textBytes = Buffer.byteLength(content.body) + content.subskills.reduce((sum, s) => sum + Buffer.byteLength(s.body), 0);
  if (textBytes > deps.limits.snapshotBytes) {
    problems.error(subskillFolder, '-', `SKILL.md and its subskills hold ${formatBytes(textBytes)} of text; the limit is ${formatBytes(deps.limits.snapshotBytes)}`, 'move reference material into resource files, which are read only when needed.');
  }
  for (const resource of listing.resources) await read(resource.rel, resource.abs, deps.limits.resourceBytes);

  content.manifest = manifestOf(folder, frontmatter, sidecar.data, listing, problems);
  content.hash = hashSkillFiles(folder, content.files);
  return content;
}
