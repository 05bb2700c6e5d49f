import path from 'node:path';
import {
  buildManifest,
  formatBytes,
  ProblemList,
  sidecarFileName,
  skillFileName,
  type SkillManifest,
  type SkillSizeLimits,
} from '../../core/skills';
import { listSkillFolder, type SkillFolderListing } from './folder-listing';
import { FrontmatterError, parseFrontmatter } from './frontmatter';
import { readFailure, type SkillFileReader } from './reader';
import { parseStrictYaml, YamlSyntaxError } from './yaml';

export interface SkillScan {
  folder: string;
  manifest: SkillManifest | null;
  problems: ProblemList;
  listing: SkillFolderListing;
  /** SKILL.md up to and including the line that closes its front matter, as read. */
  head?: string;
  /** skillflow.yaml as read, when there is one. */
  sidecarBytes?: Buffer | null;
}

export interface ScanDeps {
  skillsDir: string;
  reader: SkillFileReader;
  limits: SkillSizeLimits;
}

/**
 * What the registry reads at start-up: the folder listing, SKILL.md's front matter and skillflow.yaml; also the
 * first step of reading a skill in full (`readSkillContent`), so the catalog, `load_skill` and `skillflow skills
 * validate` judge a skill alike. Given the previous scan, it returns that scan unchanged when no file changed.
 * A folder that cannot be read is reported as a problem of that skill, never thrown: one broken skill must not
 * take the catalog down.
 */
export async function scanSkill(folder: string, deps: ScanDeps, previous?: SkillScan): Promise<SkillScan> {
  const problems = new ProblemList(folder);
  try {
    return await scanFolder(folder, deps, problems, previous);
  } catch (error) {
    problems.error(
      '',
      '-',
      `the skill cannot be read (${readFailure(error)})`,
      'check that its files exist and that skillflow may read them.',
    );
    return {
      folder,
      manifest: null,
      problems,
      listing: { skillFile: null, sidecar: null, subskills: [], resources: [], fingerprint: '' },
    };
  }
}

async function scanFolder(
  folder: string,
  deps: ScanDeps,
  problems: ProblemList,
  previous?: SkillScan,
): Promise<SkillScan> {
  const root = path.join(deps.skillsDir, folder);
  const listing = await listSkillFolder(root, problems, deps.limits);
  if (previous && previous.listing.fingerprint === listing.fingerprint && listing.fingerprint !== '') return previous;
  const scan: SkillScan = { folder, manifest: null, problems, listing };
  if (!listing.skillFile) {
    if (!problems.hasErrors)
      problems.error(skillFileName, '-', 'SKILL.md is missing', 'add SKILL.md with name and description front matter.');
    return scan;
  }
  let head: { text: string; complete: boolean };
  try {
    head = await deps.reader.readFrontmatter(listing.skillFile.abs, deps.limits.frontmatterBytes);
  } catch (error) {
    problems.error(
      skillFileName,
      '-',
      `cannot be read (${readFailure(error)})`,
      'check that the file exists and that skillflow may read it.',
    );
    return scan;
  }
  if (!head.complete) {
    problems.error(
      skillFileName,
      '-',
      `the front matter is not closed within ${formatBytes(deps.limits.frontmatterBytes)}`,
      'close it with a --- line, and keep long engine data in skillflow.yaml.',
    );
    return scan;
  }
  scan.head = head.text;
  const frontmatter = parseSkillFrontmatter(head.text, problems);
  if (frontmatter === undefined) return scan;
  const sidecar = await readSidecar(root, listing, deps, problems);
  if (sidecar === null) return scan;
  scan.sidecarBytes = sidecar.bytes;
  scan.manifest = manifestOf(folder, frontmatter.data, sidecar.data, listing, problems, frontmatter.sources);
  return scan;
}

export function parseSkillFrontmatter(
  text: string,
  problems: ProblemList,
): { data: unknown; sources: Record<string, string> } | undefined {
  try {
    const { data, sources } = parseFrontmatter(text);
    return { data, sources };
  } catch (error) {
    if (!(error instanceof FrontmatterError)) throw error;
    problems.error(skillFileName, '-', error.message, error.fix);
    return undefined;
  }
}

/** The parsed sidecar (`data` undefined when there is none), or null when it cannot be read or parsed. */
export async function readSidecar(
  root: string,
  listing: SkillFolderListing,
  deps: ScanDeps,
  problems: ProblemList,
): Promise<{ data: unknown; bytes: Buffer | null } | null> {
  if (!listing.sidecar) return { data: undefined, bytes: null };
  try {
    const bytes = await deps.reader.readFile(listing.sidecar.abs, root, deps.limits.sidecarBytes);
    return { data: parseStrictYaml(bytes.toString('utf8')), bytes };
  } catch (error) {
    const line = error instanceof YamlSyntaxError ? error.line : null;
    problems.error(
      sidecarFileName,
      line === null ? '-' : `line ${line}`,
      error instanceof YamlSyntaxError ? `not valid YAML: ${error.reason}` : `cannot be read (${readFailure(error)})`,
      'fix the YAML syntax; quote strings that contain ": " and keep one value per key.',
    );
    return null;
  }
}

export function manifestOf(
  folder: string,
  frontmatter: unknown,
  sidecar: unknown,
  listing: SkillFolderListing,
  problems: ProblemList,
  frontmatterSources: Record<string, string> = {},
): SkillManifest | null {
  return buildManifest(
    {
      folder,
      frontmatter,
      frontmatterSources,
      sidecar,
      subskills: listing.subskills.map((s) => s.name),
      resources: listing.resources.map((r) => r.rel).sort(),
    },
    problems,
  );
}
