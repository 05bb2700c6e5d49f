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
import type { SkillFileReader } from './reader';
import { parseStrictYaml, YamlSyntaxError } from './yaml';

export interface SkillScan {
  folder: string;
  manifest: SkillManifest | null;
  problems: ProblemList;
  listing: SkillFolderListing;
}

export interface ScanDeps {
  skillsDir: string;
  reader: SkillFileReader;
  limits: SkillSizeLimits;
}

/**
 * What the registry reads at start-up: the folder listing, SKILL.md's front matter and skillflow.yaml. Given the
 * previous scan, it returns that scan unchanged when no file of the folder changed.
 */
export async function scanSkill(folder: string, deps: ScanDeps, previous?: SkillScan): Promise<SkillScan> {
  const root = path.join(deps.skillsDir, folder);
  const problems = new ProblemList(folder);
  const listing = await listSkillFolder(root, problems, deps.limits);
  if (previous && previous.listing.fingerprint === listing.fingerprint) return previous;
  const scan: SkillScan = { folder, manifest: null, problems, listing };
  if (!listing.skillFile) return scan;
  const head = await deps.reader.readFrontmatter(listing.skillFile.abs, deps.limits.frontmatterBytes);
  if (!head.complete) {
    problems.error(skillFileName, '-', `the front matter is not closed within ${formatBytes(deps.limits.frontmatterBytes)}`, 'close it with a --- line, and keep long engine data in skillflow.yaml.');
    return scan;
  }
  const frontmatter = parseSkillFrontmatter(head.text, problems);
  if (frontmatter === undefined) return scan;
  const sidecar = await readSidecar(root, listing, deps, problems);
  if (sidecar === null) return scan;
  scan.manifest = manifestOf(folder, frontmatter, sidecar.data, listing, problems);
  return scan;
}

export function parseSkillFrontmatter(text: string, problems: ProblemList): unknown {
  try {
    return parseFrontmatter(text).data;
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
      error instanceof YamlSyntaxError ? `not valid YAML: ${error.reason}` : `cannot be read: ${(error as Error).message}`,
      'fix the YAML syntax; quote strings that contain ": " and keep one value per key.',
    );
    return null;
  }
}

export function manifestOf(folder: string, frontmatter: unknown, sidecar: unknown, listing: SkillFolderListing, problems: ProblemList): SkillManifest | null {
  return buildManifest(
    {
      folder,
      frontmatter,
      sidecar,
      subskills: listing.subskills.map((s) => s.name),
      resources: listing.resources.map((r) => r.rel).sort(),
    },
    problems,
  );
}
