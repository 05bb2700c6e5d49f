import path from 'node:path';
import {
  formatBytes,
  ProblemList,
  sidecarFileName,
  skillFileName,
  subskillFolder,
  type SkillManifest,
  type SkillSizeLimits,
  type SubskillContent,
} from '../../core/skills';
import { sanitizeMarkdown } from '../../core/skills/sanitize';
import { FrontmatterError, hasFrontmatter, parseFrontmatter } from './frontmatter';
import { hashSkillFiles, type SkillFile } from './hash';
import { readFailure } from './reader';
import { scanSkill, type ScanDeps } from './scan-skill';

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

/** A subskill file as read, before sanitizing. */
interface SubskillText {
  name: string;
  rel: string;
  text: string;
}

/**
 * Reads a whole skill folder: what load_skill pins and what `skillflow skills validate` checks. It starts with the
 * registry's own scan (listing, front matter within its limit, sidecar, manifest), so a skill the catalog refuses is
 * refused here for the same reason, then reads and checks the body, the subskills and the resources.
 */
export async function readSkillContent(folder: string, deps: ScanDeps): Promise<SkillContent> {
  const scan = await scanSkill(folder, deps);
  const { problems, listing } = scan;
  const root = path.join(deps.skillsDir, folder);
  const content: SkillContent = {
    folder,
    manifest: null,
    body: '',
    subskills: [],
    files: [],
    hash: '',
    fingerprint: listing.fingerprint,
    problems,
  };
  if (!listing.skillFile || scan.head === undefined || !scan.manifest) return content;
  const read = async (rel: string, abs: string, maxBytes: number): Promise<Buffer | null> => {
    try {
      const bytes = await deps.reader.readFile(abs, root, maxBytes);
      content.files.push({ rel, bytes });
      return bytes;
    } catch (error) {
      problems.error(
        rel,
        '-',
        `cannot be read (${readFailure(error)})`,
        'keep the file a regular file inside the skill folder, within the size limit.',
      );
      return null;
    }
  };

  const skillBytes = await read(
    skillFileName,
    listing.skillFile.abs,
    deps.limits.snapshotBytes + deps.limits.frontmatterBytes,
  );
  if (scan.sidecarBytes) content.files.push({ rel: sidecarFileName, bytes: scan.sidecarBytes });
  if (skillBytes === null) return content;
  const text = skillBytes.toString('utf8');
  if (!text.startsWith(scan.head)) {
    problems.error(skillFileName, '-', 'the file changed while it was being read', 'try again once it is saved.');
    return content;
  }

  let rawBody = '';
  try {
    rawBody = parseFrontmatter(text).body;
  } catch (error) {
    if (!(error instanceof FrontmatterError)) throw error;
    problems.error(skillFileName, '-', error.message, error.fix);
    return content;
  }
  const subskillTexts: SubskillText[] = [];
  for (const { name, entry } of listing.subskills) {
    const bytes = await read(entry.rel, entry.abs, deps.limits.snapshotBytes);
    if (bytes !== null) subskillTexts.push({ name, rel: entry.rel, text: bytes.toString('utf8') });
  }
  // Sizes as written, before any sanitizing: a skill too large for a snapshot costs no time to refuse.
  const rawBytes = Buffer.byteLength(rawBody) + subskillTexts.reduce((sum, s) => sum + Buffer.byteLength(s.text), 0);
  if (rawBytes > deps.limits.snapshotBytes) {
    problems.error(
      subskillFolder,
      '-',
      tooMuchText(rawBytes, deps.limits.snapshotBytes),
      'move reference material into resource files, which are read only when needed.',
    );
  } else {
    sanitizeTexts(content, rawBody, subskillTexts, deps.limits);
  }
  for (const resource of listing.resources) await read(resource.rel, resource.abs, deps.limits.resourceBytes);

  content.manifest = problems.hasErrors ? null : scan.manifest;
  content.hash = hashSkillFiles(folder, content.files);
  return content;
}

/**
 * The body and the subskills, sanitized and checked. The total is checked again on the sanitized text, which is what a
 * snapshot carries: sanitizing may add a backslash before a `<`.
 */
function sanitizeTexts(
  content: SkillContent,
  rawBody: string,
  subskills: SubskillText[],
  limits: SkillSizeLimits,
): void {
  const { problems } = content;
  content.body = sanitizeMarkdown(rawBody);
  if (content.body === '') {
    problems.error(
      skillFileName,
      'body',
      'the body is empty once HTML is removed, so there are no instructions to load',
      'write the instructions in markdown below the front matter.',
    );
  } else if (content.body.split('\n').length > limits.bodyLines) {
    problems.warning(
      skillFileName,
      'body',
      `the body has more than ${limits.bodyLines} lines`,
      'move phases into subskills and details into resource files.',
    );
  }
  for (const { name, rel, text } of subskills) {
    if (hasFrontmatter(text)) {
      problems.error(
        rel,
        '-',
        'subskill files carry no front matter',
        `remove the --- block; describe the subskill in the body of ${skillFileName}.`,
      );
      continue;
    }
    const body = sanitizeMarkdown(text);
    if (body === '')
      problems.error(
        rel,
        '-',
        'the subskill is empty once HTML is removed',
        'write its instructions in markdown, or delete the file.',
      );
    content.subskills.push({ name, body });
  }
  const textBytes =
    Buffer.byteLength(content.body) + content.subskills.reduce((sum, s) => sum + Buffer.byteLength(s.body), 0);
  if (textBytes > limits.snapshotBytes) {
    problems.error(
      subskillFolder,
      '-',
      tooMuchText(textBytes, limits.snapshotBytes),
      'move reference material into resource files, which are read only when needed.',
    );
  }
}

function tooMuchText(bytes: number, limit: number): string {
  return `SKILL.md and its subskills hold ${formatBytes(bytes)} of text; the limit is ${formatBytes(limit)}`;
}
